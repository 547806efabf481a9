import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, expect, test } from 'vitest';
import { importSigningKey } from '../../src/signing/keys.js';
import { KeySet } from '../../src/signing/keyset.js';
import { buildClaims, signClaims } from '../../src/signing/token.js';
import { testKey, userEvent } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';

// `identity-webhooks/receiver` must load where only jose is installed: no kysely, better-sqlite3,
// pg or undici, and no node: built-ins (edge runtimes have none). Each source file is compiled
// alone, as tsc emits it (type-only imports erased), into a directory whose node_modules holds
// nothing but jose; a child Node process then imports it and verifies a real token. Any runtime
// import of something else fails there with ERR_MODULE_NOT_FOUND.
const sourceDir = fileURLToPath(new URL('../../src/receiver/', import.meta.url));
const joseDir = fileURLToPath(new URL('../../node_modules/jose', import.meta.url));
const dir = tempDir('iw-receiver-isolation-');
afterAll(() => dir.cleanup());

function compileReceiver(): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(sourceDir).filter((f) => f.endsWith('.ts'))) {
    const { outputText } = ts.transpileModule(readFileSync(join(sourceDir, name), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      fileName: name,
    });
    out.set(name.replace(/\.ts$/, '.js'), outputText);
  }
  return out;
}

function runtimeSpecifiers(code: string): string[] {
  const info = ts.preProcessFile(code, true, true);
  return info.importedFiles.map((f) => f.fileName);
}

test('the emitted receiver imports only jose and its own files', () => {
  const files = compileReceiver();
  const outside = new Set<string>();
  for (const [name, code] of files) {
    for (const spec of runtimeSpecifiers(code)) {
      if (spec === 'jose') continue;
      if (spec.startsWith('./') && !spec.slice(2).includes('/') && files.has(spec.slice(2))) continue;
      outside.add(`${name} -> ${spec}`);
    }
  }
  expect([...outside]).toEqual([]);
  expect(runtimeSpecifiers(files.get('verifier.js')!)).toContain('jose'); // the scan sees imports
});

test('it loads and verifies a token in a directory where jose is the only package', async () => {
  const root = dir.file('app');
  mkdirSync(join(root, 'node_modules'), { recursive: true });
  symlinkSync(joseDir, join(root, 'node_modules', 'jose'), 'dir');
  mkdirSync(join(root, 'receiver'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const [name, code] of compileReceiver()) writeFileSync(join(root, 'receiver', name), code);

  const key = await testKey();
  const now = Date.parse('2026-03-01T12:00:00.000Z');
  const issuer = 'https://auth.example.com';
  const event = userEvent(now, { source: 'admin' });
  const token = await signClaims(buildClaims(event, issuer, now), await importSigningKey(key));
  const script = `
    const { createVerifier, createReceiver } = await import('./receiver/index.js');
    const input = JSON.parse(process.env.INPUT);
    const verifier = createVerifier({ issuer: input.issuer, jwks: input.jwks, clock: { now: () => input.now } });
    const handled = [];
    const receive = createReceiver({ verifier, on: { 'user.created': (e) => void handled.push(e.data.user.email) } });
    const res = await receive(new Request('https://r.example/hooks', { method: 'POST', headers: { 'content-type': 'application/jwt', 'webhook-id': 'msg_1' }, body: input.token }));
    console.log(JSON.stringify({ status: res.status, handled }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    env: { PATH: process.env.PATH, INPUT: JSON.stringify({ issuer, now, token, jwks: new KeySet([key]).jwks() }) },
  });
  expect(JSON.parse(stdout)).toEqual({ status: 200, handled: ['ada@example.com'] });
});
