import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks } from '../../src/index.js';
import { userData } from '../helpers/fixtures.js';
import { percentile, spawnWorker, startLedger, until, useFleet, type WorkerOptions } from '../helpers/fleet.js';
import { pgbouncerAvailable, startPgBouncer, type TestPgBouncer } from '../helpers/pgbouncer.js';
import { createDatabase } from '../helpers/postgres.js';

/**
 * Three host processes on one PostgreSQL, every statement through PgBouncer in transaction mode
 * (decision 027): claims, leases, emits, outcomes and migrations on the pooled URL; wake-ups on
 * the direct URL when given, else polling. Latencies are printed, never asserted.
 */
const setup = useFleet('pgbouncer');
const cleanups = setup.cleanups;
const available = pgbouncerAvailable('processes/pgbouncer.test.ts');
let bouncer: TestPgBouncer;
beforeAll(async () => {
  if (available) bouncer = await startPgBouncer(setup.server.adminUrl);
}, 60_000);
afterAll(async () => {
  await bouncer?.close();
});

/**
 * A fresh database, N workers on its pooled URL (started at once, so they migrate at once), an
 * emitter on the pooled URL too (its emits send the wake-up hint when the workers listen).
 */
async function fleet(n: number, options: WorkerOptions) {
  const database = await createDatabase(setup.server.adminUrl, 'pgb');
  cleanups.push(() => database.drop());
  const pooled = bouncer.pooled(database.url);
  // Wake-ups listen on the direct URL unless notifications are off.
  const given: WorkerOptions = options.notifications === false ? options : { ...options, directConnectionString: database.url };
  const workers = await Promise.all(Array.from({ length: n }, (_, i) => spawnWorker(setup.dist, pooled, `w${i}`, setup.key, given)));
  cleanups.push(() => Promise.all(workers.map((w) => w.kill())));
  const store = postgresStore({
    connectionString: pooled,
    maxConnections: 8,
    ...(options.notifications === false ? { notifications: false } : { directConnectionString: database.url }),
  });
  const emitter = createWebhooks({ store, keys: [setup.key], issuer: 'http://127.0.0.1/', allowPrivateNetworks: true });
  cleanups.push(() => emitter.close());
  const admin = new pg.Pool({ connectionString: database.url, max: 2 });
  admin.on('error', () => {});
  cleanups.push(() => admin.end());
  const count = async (where = "status <> 'delivered'") =>
    Number((await admin.query(`select count(*)::int as n from iw_deliveries where ${where}`)).rows[0].n);
  return { url: database.url, workers, emitter, store, admin, count };
}

/**
 * Emits one event at a time and times emit -> its first attempt at the receiver. `gapMs`: a
 * random pause before each emit, up to that long, so that it does not land just as the worker
 * that took the previous one claims again.
 */
async function pickup(f: Awaited<ReturnType<typeof fleet>>, ledger: Awaited<ReturnType<typeof startLedger>>, n: number, gapMs = 0) {
  const samples: number[] = [];
  const start = ledger.arrivals.length;
  for (let i = 0; i < n; i++) {
    if (gapMs > 0) await new Promise((r) => setTimeout(r, Math.random() * gapMs));
    const t0 = performance.now();
    await f.emitter.emit({ type: 'user.created', source: 'admin', data: userData() });
    await until('the delivery', () => ledger.arrivals.length > start + i, 20_000, 1);
    samples.push(ledger.arrivals[start + i]!.at - t0);
  }
  return samples;
}

describe.skipIf(!available)('three host processes through PgBouncer (transaction mode)', () => {
  test('wake-ups on the direct URL, everything else pooled: 1,000 events x 2 webhooks all arrive, each webhook-id exactly once', async () => {
    const EVENTS = 1000;
    const ledger = await startLedger();
    cleanups.push(() => ledger.close());
    // Polling every 30 s: a pickup faster than that is the wake-up, heard on the direct URL.
    const f = await fleet(3, { delivery: { concurrency: 32, perWebhookConcurrency: 32, batchSize: 32, pollIntervalMs: 30_000 } });
    // Migrated once, by three processes starting together through the pooler.
    const { rows: ledgerRows } = await f.admin.query('select count(*)::int as n, count(distinct version)::int as d from iw_migrations');
    expect(ledgerRows[0].n).toBe(ledgerRows[0].d);
    await f.emitter.webhooks.create({ name: 'a', endpoint: `${ledger.url}/a`, eventTypes: ['user.created'] });
    const woken = await pickup(f, ledger, 50);
    await f.emitter.webhooks.create({ name: 'b', endpoint: `${ledger.url}/b`, eventTypes: ['user.created'] });

    const t0 = performance.now();
    for (let i = 0; i < EVENTS; i += 50)
      await f.store.kysely.transaction().execute(async (trx) => {
        for (let j = 0; j < 50; j++)
          await f.emitter.emit({ type: 'user.created', source: 'admin', data: userData() }, { transaction: trx });
      });
    await until('every delivery', () => ledger.arrivals.length >= 50 + 2 * EVENTS, 120_000, 100);
    const done = performance.now();
    await until('every outcome recorded', async () => (await f.count()) === 0, 30_000, 100);
    const errors = await Promise.all(f.workers.map((w) => w.stop()));

    const counts = ledger.counts();
    expect(counts.size).toBe(50 + 2 * EVENTS);
    expect([...counts.values()].filter((c) => c !== 1)).toEqual([]);
    const perWorker = Object.fromEntries(['w0', 'w1', 'w2'].map((w) => [w, ledger.arrivals.filter((a) => a.worker === w).length]));
    console.info(
      `[processes] through PgBouncer: wake-up pickup (direct URL, poll 30 s) p50 ${percentile(woken, 50).toFixed(1)} ms, p99 ${percentile(woken, 99).toFixed(1)} ms; ` +
        `${2 * EVENTS} deliveries by 3 processes in ${((done - t0) / 1000).toFixed(1)} s; per worker ${JSON.stringify(perWorker)}; ` +
        `workers logged ${errors.reduce((s, e) => s + e.errors, 0)} errors`,
    );
  }, 240_000);

  test('no direct URL, notifications off: polling alone delivers everything (pickup within a poll interval)', async () => {
    const ledger = await startLedger();
    cleanups.push(() => ledger.close());
    const f = await fleet(3, { notifications: false, delivery: { pollIntervalMs: 1000 } });
    await f.emitter.webhooks.create({ name: 'one', endpoint: `${ledger.url}/one`, eventTypes: ['user.created'] });
    const samples = await pickup(f, ledger, 10, 1000);
    await until('every outcome recorded', async () => (await f.count()) === 0, 30_000, 100);
    await Promise.all(f.workers.map((w) => w.stop()));
    expect(ledger.counts().size).toBe(10);
    expect([...ledger.counts().values()].filter((c) => c !== 1)).toEqual([]);
    console.info(
      `[processes] through PgBouncer, polling only (pollIntervalMs 1000, 3 processes, emits 0-1 s apart): emit -> first attempt ` +
        `p50 ${percentile(samples, 50).toFixed(0)} ms, p99 ${percentile(samples, 99).toFixed(0)} ms, max ${Math.max(...samples).toFixed(0)} ms`,
    );
  }, 120_000);
});
