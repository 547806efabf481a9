import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'rolldown';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// @ts-expect-error: a .js asset, typed only under checkJs (tsconfig.dashboard.json)
import { verifySnippets as untyped } from '../../src/dashboard/assets/snippets.js';
import { systemClock } from '../../src/index.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { closedPort, tempDir } from '../helpers/http.js';

/**
 * The "How to verify" snippets run as the page shows them (the same module makes both), each as
 * its own process on 127.0.0.1, against a real delivery from a real engine whose key set is
 * served over HTTP: the Node one with identity-webhooks/receiver (built from this tree into a
 * scratch node_modules, as an install would give it), the Python one with Debian's PyJWT. A snippet
 * passes when the delivery is recorded delivered and the program printed that it verified it.
 * Not run: @kinde/webhooks (on npm, not a dependency here) and Go (no toolchain); the Standard
 * Webhooks Node snippet runs against a body the standardwebhooks library signed itself.
 */

interface Snippet {
  id: string;
  label: string;
  install: string;
  code: string;
}
const verifySnippets = untyped as (options: { issuer: string; jwksUrl: string; format?: string }) => Snippet[];

const ROOT = resolve(import.meta.dirname, '../..');
const cleanups = useCleanups();
const scratch = tempDir('iw-snippets-');
afterAll(() => scratch.cleanup());

beforeAll(async () => {
  // identity-webhooks/receiver as an install provides it: one ES module importing only jose.
  const pkg = join(scratch.dir, 'node_modules', 'identity-webhooks');
  mkdirSync(pkg, { recursive: true });
  await build({
    input: join(ROOT, 'src/receiver/index.ts'),
    external: ['jose'],
    platform: 'node',
    logLevel: 'silent',
    output: { file: join(pkg, 'receiver.js'), format: 'esm' },
  });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: 'identity-webhooks', type: 'module', exports: { './receiver': './receiver.js' } }),
  );
  for (const name of ['jose', 'standardwebhooks'])
    symlinkSync(join(ROOT, 'node_modules', name), join(scratch.dir, 'node_modules', name), 'dir');
}, 60_000);

/** Runs a program and collects its output lines; ended with the test. */
function run(command: string, args: string[], env: Record<string, string>) {
  const lines: string[] = [];
  const child: ChildProcess = spawn(command, args, {
    cwd: scratch.dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line));
  const errors: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => errors.push(line));
  cleanups.push(() => child.kill());
  return { lines, errors, child };
}

/** Waits until something answers HTTP on the port. */
async function listening(port: number, errors: string[]) {
  await until(
    `the snippet listening on ${port} (stderr: ${errors.join('\n')})`,
    async () => {
      try {
        await fetch(`http://127.0.0.1:${port}/`, { method: 'GET' });
        return true;
      } catch {
        return false;
      }
    },
    15_000,
    50,
  );
}

async function deliverTo(id: 'node-receiver' | 'python-pyjwt', command: (file: string) => [string, string[]]) {
  const engine = await makeEngine({ clock: systemClock, delivery: { timeoutMs: 5000, pollIntervalMs: 50 } });
  cleanups.push(() => engine.close());
  const { hooks } = engine;
  await hooks.start();
  // What the page shows: GET /api/v1/verification, filled into the shared snippets.
  const { issuer, jwksUrl } = hooks.verification.get();
  const snippet = verifySnippets({ issuer, jwksUrl }).find((s) => s.id === id)!;
  const file = join(scratch.dir, id === 'python-pyjwt' ? 'receiver.py' : 'receiver.mjs');
  writeFileSync(file, snippet.code);
  const port = await closedPort();
  const [bin, args] = command(file);
  const program = run(bin, args, { PORT: String(port) });
  await listening(port, program.errors);

  const webhook = await hooks.webhooks.create({
    name: 'snippet',
    endpoint: `http://127.0.0.1:${port}/webhooks`,
    eventTypes: ['user.created'],
  });
  const { deliveryId } = await hooks.webhooks.test(webhook.id, { eventType: 'user.created' });
  await until('the delivery is recorded', async () => (await hooks.deliveries.get(deliveryId)).status !== 'pending', 15_000, 20);
  expect((await hooks.deliveries.get(deliveryId)).status, program.errors.join('\n')).toBe('delivered');
  await until('the snippet says so', () => program.lines.length > 0, 5000);
  expect(program.lines).toContain(`verified user.created ${deliveryId}`);
}

describe('how to verify: the snippets as shown', () => {
  test('Node, identity-webhooks/receiver: verifies a real delivery', async () => {
    await deliverTo('node-receiver', (file) => [process.execPath, [file]]);
  }, 60_000);

  test('Python, PyJWT (Debian python3-jwt for /usr/bin/python3): verifies a real delivery', async () => {
    await deliverTo('python-pyjwt', (file) => ['/usr/bin/python3', [file]]);
  }, 60_000);

  test('Node, standardwebhooks: accepts a body signed with the secret, refuses one that is not', async () => {
    const snippet = verifySnippets({ issuer: '', jwksUrl: '', format: 'standard-webhooks' }).find((s) => s.id === 'node-standardwebhooks')!;
    const file = join(scratch.dir, 'standard.mjs');
    writeFileSync(file, snippet.code);
    const secret = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
    const port = await closedPort();
    const program = run(process.execPath, [file], { PORT: String(port), WEBHOOK_SECRET: secret });
    await listening(port, program.errors);
    const body = JSON.stringify({ type: 'user.created', data: { user: { id: 'kp_1' } } });
    const send = (signature?: string) => {
      const id = 'msg_standard_1';
      const timestamp = new Date();
      return fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature ?? new Webhook(secret).sign(id, timestamp, body),
        },
        body,
      });
    };
    expect((await send('v1,Zm9yZ2Vk')).status).toBe(400);
    expect((await send()).status).toBe(200);
    await until('the snippet says so', () => program.lines.length > 0, 5000);
    expect(program.lines).toEqual(['verified user.created msg_standard_1']);
  }, 60_000);

  test('every format has its snippets, each with an install line; the values are filled in', () => {
    const jwt = verifySnippets({ issuer: 'https://auth.example.com', jwksUrl: 'https://auth.example.com/.well-known/jwks' });
    expect(jwt.map((s) => s.id)).toEqual(['node-receiver', 'node-kinde', 'python-pyjwt', 'go']);
    for (const s of jwt) expect(s.code, s.id).toContain('https://auth.example.com');
    const standard = verifySnippets({ issuer: 'x', jwksUrl: 'y', format: 'standard-webhooks' });
    expect(standard.map((s) => s.id)).toEqual(['node-standardwebhooks', 'python-standardwebhooks']);
    for (const s of [...jwt, ...standard]) expect(s.install, s.id).toMatch(/^(npm|pip|go) /);
  });
});
