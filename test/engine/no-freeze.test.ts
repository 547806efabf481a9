import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { type Store, systemClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { serveHandler, startReceiver, tempDir } from '../helpers/http.js';
import { createDatabase, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * The reproduction of the freeze, in real time, on each database: an account holder sends 100
 * test events through the management API to an endpoint that answers 429 with Retry-After. The
 * host must keep answering another environment's requests, its event loop stay free, its store
 * calls stay few, and on PostgreSQL the transactions too while 1,000 deliveries wait on a
 * Retry-After of an hour. The bounds are generous (a busy machine must not fail them): a loop
 * that spins misses them by orders of magnitude (on SQLite it never answers again).
 */

const cleanups = useCleanups();

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await useTestPostgres('no_freeze');
});
afterAll(async () => {
  await postgres?.close();
});

/** Counts every store call (one round trip or transaction each at most). */
function counting(store: Store) {
  const counter = { calls: 0 };
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'isTransient') return value;
      return (...args: unknown[]) => {
        counter.calls++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, counter };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function transactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

describe.each(['SQLite', 'PostgreSQL'] as const)('no freeze (%s)', (database) => {
  test('100 test sends to a 429 with Retry-After: the host keeps answering, its loop stays free, its store calls few', async () => {
    let retryAfter = '1';
    const receiver = await startReceiver((req) => (req.path === '/ok' ? 200 : { status: 429, headers: { 'retry-after': retryAfter } }));
    cleanups.push(() => receiver.close());
    const db = database === 'PostgreSQL' ? await createDatabase(postgres.adminUrl, 'freeze') : null;
    if (db) cleanups.push(() => db.drop());
    const dir = tempDir();
    cleanups.push(() => dir.cleanup());
    const made = counting(db ? postgresStore({ connectionString: db.url }) : sqliteStore({ filename: dir.file('freeze.db') }));
    const engine = await makeEngine({
      clock: systemClock,
      store: made.store,
      delivery: {}, // the defaults, as the account holder met them
      authorize: (request) => ({ environment: request.headers.get('x-environment') ?? 'noisy' }),
    });
    cleanups.push(() => engine.close());
    const { hooks } = engine;
    const api = await serveHandler((request) => hooks.handler(request));
    cleanups.push(() => api.close());
    const call = (path: string, environment: string, init: RequestInit = {}) =>
      fetch(`${api.url}${path}`, {
        ...init,
        headers: { 'x-environment': environment, 'content-type': 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
    const noisy = await hooks.webhooks.create({
      environment: 'noisy',
      name: 'n',
      endpoint: `${receiver.url}/busy`,
      eventTypes: ['user.created'],
    });
    await hooks.webhooks.create({
      environment: 'quiet',
      name: 'q',
      endpoint: `${receiver.url}/ok`,
      eventTypes: ['user.created'],
    });
    await hooks.start();

    for (let i = 0; i < 100; i++)
      expect((await call(`/api/v1/webhooks/${noisy.id}/test`, 'noisy', { method: 'POST', body: '{}' })).status).toBe(200);

    // Five seconds beside it: another environment's reads and deliveries, the loop's delay.
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const before = made.counter.calls;
    const probes: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      const response = await call('/api/v1/webhooks', 'quiet');
      expect(response.status).toBe(200);
      probes.push(performance.now() - t0);
      await hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment: 'quiet' });
      await sleep(500);
    }
    delay.disable();
    const calls = made.counter.calls - before;
    const quietDelivered = receiver.requests.filter((r) => r.path === '/ok').length;
    const p99 = delay.percentile(99) / 1e6;
    console.info(
      `[no-freeze ${database}] event loop delay p99 ${p99.toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(1)} ms; probes max ${Math.max(...probes).toFixed(0)} ms; ` +
        `quiet delivered ${quietDelivered} of 10; attempts of the 429 endpoint ${receiver.requests.length - quietDelivered}` +
        `; store calls ${calls} in 5 s`,
    );
    expect(p99).toBeLessThan(250);
    expect(quietDelivered).toBeGreaterThanOrEqual(9);
    expect(calls / 5).toBeLessThan(100);

    if (!db) return;
    // 1,000 deliveries waiting on an hour's Retry-After: transactions per second stay few.
    retryAfter = '3600';
    for (let i = 0; i < 900; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment: 'noisy' });
    await sleep(3000); // the attempts under way answer, the deferral is written, the backlog paced
    const t0 = await transactions(db.url);
    const c0 = made.counter.calls;
    await sleep(5000);
    const perSecond = ((await transactions(db.url)) - t0 - 1) / 5;
    const callsPerSecond = (made.counter.calls - c0) / 5;
    console.info(`[no-freeze PostgreSQL] 1,000 waiting on Retry-After: ${perSecond} transactions/s, ${callsPerSecond} store calls/s`);
    expect(perSecond).toBeLessThan(100);
  }, 60_000);
});
