import { type ChildProcess, execFile, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { SigningKey } from '../../src/index.js';
import { testKey } from './fixtures.js';
import { type TestPostgres, useTestPostgres } from './postgres.js';

export { until } from './cleanup.js';

const ROOT = resolve(import.meta.dirname, '../..');
// One build per checkout: git worktrees share node_modules through a symlink, and one tree's
// build (its stamp newer than the other's sources) must never run another tree's tests.
const OUT = join(ROOT, 'node_modules/.cache/identity-webhooks-test', createHash('sha256').update(ROOT).digest('hex').slice(0, 12), 'dist');

/**
 * Compiles src/ and adapters/ for the child processes (plain node cannot run our TypeScript),
 * into a cache of its own so `npm run build` and other tests never see it half-written.
 * Skipped when nothing changed since the last build.
 */
export async function buildForChildren(): Promise<string> {
  const stamp = join(OUT, '.built');
  const newest = Math.max(...['src', 'adapters'].flatMap((d) => mtimes(join(ROOT, d))));
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= newest) return OUT;
  mkdirSync(OUT, { recursive: true });
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', OUT], { cwd: ROOT });
  } catch (error) {
    // Type errors elsewhere (work in progress) still emit JavaScript; a missing entry point is fatal.
    if (!existsSync(join(OUT, 'adapters/postgres/index.js'))) throw error;
    console.warn(
      '[fleet] tsc reported errors; using the emitted JavaScript:',
      String((error as { stdout?: string }).stdout ?? error).slice(0, 500),
    );
  }
  writeFileSync(stamp, '');
  return OUT;
}

function mtimes(dir: string): number[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? mtimes(join(dir, e.name)) : e.name.endsWith('.ts') ? [statSync(join(dir, e.name)).mtimeMs] : [],
  );
}

export interface Worker {
  id: string;
  child: ChildProcess;
  /** Set when the process ended; `undefined` while it runs. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stderr: string[];
  /** Graceful: the engine closes (in-flight attempts recorded), reports its logged errors. */
  stop(): Promise<{ errors: number }>;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

export interface WorkerOptions {
  delivery?: Record<string, number>;
  maxConnections?: number;
  /** The auto-disable threshold (default 72 h). */
  disableAfterMs?: number;
  /** The durable back-off of deliveries. */
  backoff?: { schedule: number[]; jitter?: number };
  /** Send disable notices with smtpNotifier to this server, from `webhooks+<worker id>@acme.example`. */
  smtp?: { url: string };
  /** PostgreSQL behind a pooler: the direct URL for wake-ups (postgresStore's option of that name). */
  directConnectionString?: string;
  /** postgresStore's `notifications` (default true). */
  notifications?: boolean;
}

/**
 * Starts one host process on `store` (a PostgreSQL URL, or a SQLite file's path); resolves when
 * its engine has started.
 */
export async function spawnWorker(dist: string, store: string, id: string, key: SigningKey, options: WorkerOptions = {}): Promise<Worker> {
  let at = store;
  if (store.startsWith('postgres')) {
    const u = new URL(store);
    u.searchParams.set('application_name', id); // lets the crash test see when its backends are gone
    at = u.toString();
  }
  const child = fork(join(ROOT, 'test/helpers/host-worker.mjs'), [], {
    env: {
      ...process.env,
      IW_DIST: dist,
      IW_STORE: at,
      WORKER_ID: id,
      IW_KEY: JSON.stringify(key),
      IW_OPTIONS: JSON.stringify(options),
    },
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    execArgv: [], // plain node, not vitest's loader flags
  });
  const w: Worker = {
    id,
    child,
    exit: undefined,
    stderr: [],
    stop: () =>
      new Promise((resolveStop, reject) => {
        if (w.exit) return reject(new Error(`${id} had already exited: ${JSON.stringify(w.exit)}\n${w.stderr.join('')}`));
        const timer = setTimeout(() => reject(new Error(`${id} did not stop within 20 s`)), 20_000);
        child.on('message', (m: { type?: string; errors?: number }) => {
          if (m?.type === 'stopped') clearTimeout(timer), resolveStop({ errors: m.errors ?? 0 });
        });
        child.send({ type: 'stop' });
      }),
    kill: () =>
      new Promise((resolveKill) => {
        if (w.exit) return resolveKill();
        child.once('exit', () => resolveKill());
        child.kill('SIGKILL');
      }),
  };
  child.stderr!.on('data', (d: Buffer) => {
    const line = d.toString();
    w.stderr.push(line);
    process.stderr.write(line);
  });
  child.on('exit', (code, signal) => (w.exit = { code, signal }));
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`${id} not ready within 30 s\n${w.stderr.join('')}`)), 30_000);
    child.on('message', (m: { type?: string }) => m?.type === 'ready' && (clearTimeout(timer), ready()));
    child.once('exit', (code) => (clearTimeout(timer), fail(new Error(`${id} exited (${code}) before ready\n${w.stderr.join('')}`))));
  });
  return w;
}

export interface Arrival {
  webhookId: string;
  worker: string;
  path: string;
  /** performance.timeOrigin-based ms, comparable with the parent's `performance.now()`. */
  at: number;
}

/** A receiver on 127.0.0.1 that answers 200 (after `delayMs`) and keeps the ledger of arrivals. */
export async function startLedger(delayMs = 0) {
  const arrivals: Arrival[] = [];
  const server = http.createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      arrivals.push({ webhookId: String(req.headers['webhook-id']), worker: String(req.headers['x-worker']), path: req.url ?? '', at });
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', 511, r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    /** How many times each webhook-id arrived. */
    counts(): Map<string, number> {
      const m = new Map<string, number>();
      for (const a of arrivals) m.set(a.webhookId, (m.get(a.webhookId) ?? 0) + 1);
      return m;
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Percentile of a sample (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/**
 * The setup every multi-process test file shares: the test PostgreSQL, the library built for the
 * children, a signing key, and cleanups run after each test (a failing one is reported, not fatal).
 */
export function useFleet(label: string) {
  const fleet = { cleanups: [] as Array<() => Promise<unknown>> } as {
    server: TestPostgres;
    dist: string;
    key: SigningKey;
    cleanups: Array<() => Promise<unknown>>;
  };
  beforeAll(async () => {
    [fleet.server, fleet.dist, fleet.key] = await Promise.all([useTestPostgres(label), buildForChildren(), testKey()]);
  }, 120_000);
  afterAll(async () => {
    await fleet.server?.close();
  });
  afterEach(async () => {
    while (fleet.cleanups.length) await fleet.cleanups.pop()!().catch((e) => console.warn('cleanup failed:', e));
  });
  return fleet;
}
