import type { Kysely } from 'kysely';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks, type Webhooks } from '../../src/index.js';
import { userData } from '../helpers/fixtures.js';
import { percentile, spawnWorker, startLedger, until, useFleet, type Worker, type WorkerOptions } from '../helpers/fleet.js';
import { createSchema, disruptDatabase } from '../helpers/postgres.js';

/**
 * Real host processes on one PostgreSQL: the claims, leases and wake-ups that let N processes
 * share the work with no coordinator. Workers are `node` children over the compiled library;
 * receivers and the ledger live here. Latencies are measured and printed, never asserted.
 */
const setup = useFleet('processes');
const cleanups = setup.cleanups;

/** A fresh schema, N workers started on it at once (so they migrate at once), an emitter that never delivers, an admin pool. */
async function fleet(n: number, options: WorkerOptions) {
  const schema = await createSchema(setup.server.url, 'p');
  cleanups.push(() => schema.drop());
  const workers = await Promise.all(Array.from({ length: n }, (_, i) => spawnWorker(setup.dist, schema.url, `w${i}`, setup.key, options)));
  cleanups.push(() => Promise.all(workers.map((w) => w.kill())));
  const store = postgresStore({ connectionString: schema.url, maxConnections: 8 });
  const emitter = createWebhooks({ store, keys: [setup.key], issuer: 'http://127.0.0.1/', allowPrivateNetworks: true });
  cleanups.push(() => emitter.close());
  const emitMany = (n: number) => emitEvents(emitter, store.kysely, n);
  const admin = new pg.Pool({ connectionString: schema.url, max: 2 });
  admin.on('error', () => {}); // the restart test kills these too
  cleanups.push(() => admin.end());
  const count = async (where = "status <> 'delivered'") =>
    Number((await admin.query(`select count(*)::int as n from iw_deliveries where ${where}`)).rows[0].n);
  return { url: schema.url, workers, emitter, emitMany, admin, count };
}

/**
 * Emits `n` events, `perTransaction` at a time inside one host transaction (the transactional
 * outbox path): one commit, and one coalesced wake-up, per batch instead of per event.
 */
async function emitEvents(hooks: Webhooks, kysely: Kysely<any>, n: number, perTransaction = 50, concurrency = 4): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const size = Math.min(perTransaction, n - next);
        next += size;
        const batch = await kysely.transaction().execute(async (trx) => {
          const out: string[] = [];
          for (let i = 0; i < size; i++)
            out.push(...(await hooks.emit({ type: 'user.created', source: 'admin', data: userData() }, { transaction: trx })).deliveryIds);
          return out;
        });
        ids.push(...batch);
      }
    }),
  );
  return ids;
}

async function stopAll(workers: Worker[]): Promise<number> {
  const results = await Promise.all(workers.filter((w) => !w.exit).map((w) => w.stop()));
  return results.reduce((sum, r) => sum + r.errors, 0);
}

describe('several host processes on one PostgreSQL', () => {
  test('an event emitted in one process is attempted by another within milliseconds (LISTEN/NOTIFY), not a poll interval', async () => {
    const ledger = await startLedger();
    cleanups.push(() => ledger.close());
    // Polling every 30 s: anything faster is the wake-up.
    const f = await fleet(4, { delivery: { pollIntervalMs: 30_000 } });
    await f.emitter.webhooks.create({ name: 'one', endpoint: `${ledger.url}/one`, eventTypes: ['user.created'] });
    const samples: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      await f.emitter.emit({ type: 'user.created', source: 'admin', data: userData() });
      await until('the delivery', () => ledger.arrivals.length > i, 10_000, 1);
      samples.push(ledger.arrivals[i]!.at - t0);
    }
    const workersSeen = new Set(ledger.arrivals.map((a) => a.worker));
    console.info(
      `[processes] emit -> first attempt across processes, ${samples.length} events, 4 workers (poll 30 s): ` +
        `p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms, max ${Math.max(...samples).toFixed(1)} ms; ` +
        `attempted by ${workersSeen.size} workers`,
    );
    expect(ledger.arrivals).toHaveLength(200);
    expect(await stopAll(f.workers)).toBe(0);
  }, 120_000);

  test('4 processes deliver 3,000 events x 2 webhooks: every delivery arrives, each webhook-id exactly once', async () => {
    const EVENTS = Number(process.env.TEST_SCALE_EVENTS ?? 3_000);
    const ledger = await startLedger();
    cleanups.push(() => ledger.close());
    // Two hot webhooks: the per-endpoint bound is raised to the process bound (TEST_SCALE_DEFAULTS=1 measures the defaults).
    const f = await fleet(
      4,
      process.env.TEST_SCALE_DEFAULTS === '1' ? {} : { delivery: { concurrency: 32, perWebhookConcurrency: 32, batchSize: 32 } },
    );
    for (const name of ['a', 'b'])
      await f.emitter.webhooks.create({ name, endpoint: `${ledger.url}/${name}`, eventTypes: ['user.created'] });

    const t0 = performance.now();
    const ids = await f.emitMany(EVENTS);
    const emitted = performance.now();
    await until('every delivery', () => ledger.arrivals.length >= 2 * EVENTS, 150_000, 100);
    const done = performance.now();
    await until('every outcome recorded', async () => (await f.count()) === 0, 20_000, 100);
    expect(await stopAll(f.workers)).toBe(0);

    const counts = ledger.counts();
    expect(ids).toHaveLength(2 * EVENTS);
    expect(new Set(counts.keys())).toEqual(new Set(ids));
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]); // no claim races
    const { rows } = await f.admin.query(
      'select count(*)::int as attempts, count(distinct delivery_id)::int as deliveries from iw_attempts',
    );
    expect(rows[0]).toEqual({ attempts: 2 * EVENTS, deliveries: 2 * EVENTS });
    const perWorker = Object.fromEntries(['w0', 'w1', 'w2', 'w3'].map((w) => [w, ledger.arrivals.filter((a) => a.worker === w).length]));
    console.info(
      `[processes] scale-out: ${2 * EVENTS} deliveries by 4 processes in ${((done - t0) / 1000).toFixed(1)} s ` +
        `(${Math.round((2 * EVENTS) / ((done - t0) / 1000))}/s end to end; emitting took ${((emitted - t0) / 1000).toFixed(1)} s); per worker ${JSON.stringify(perWorker)}`,
    );
  }, 240_000);

  test('a process killed with SIGKILL mid-run: its leased deliveries go out from the others after the lease, same webhook-id', async () => {
    const EVENTS = 1200;
    const LEASE = 3000;
    const ledger = await startLedger(20); // slow enough that many attempts are in flight at the kill
    cleanups.push(() => ledger.close());
    const f = await fleet(4, {
      delivery: { concurrency: 16, perWebhookConcurrency: 16, batchSize: 16, timeoutMs: 2000, leaseMs: LEASE, pollIntervalMs: 500 },
    });
    for (const name of ['a', 'b'])
      await f.emitter.webhooks.create({ name, endpoint: `${ledger.url}/${name}`, eventTypes: ['user.created'] });
    const ids = await f.emitMany(EVENTS);

    await until('a third of the deliveries', () => ledger.arrivals.length >= (2 * EVENTS) / 3, 60_000, 5);
    const victim = f.workers[0]!;
    await victim.kill();
    const killedAt = performance.now();
    // Read at once, well within the lease: what w0 holds now is all it can have sent without
    // recording (a claim still executing after its death never reached it).
    const leased = new Set(
      (await f.admin.query("select id from iw_deliveries where locked_by = 'w0' and status = 'pending'")).rows.map((r) => r.id as string),
    );
    await until('every delivery recorded', async () => (await f.count()) === 0, 60_000, 100);
    const errors = await stopAll(f.workers.slice(1));

    const counts = ledger.counts();
    expect(new Set(counts.keys())).toEqual(new Set(ids)); // nothing lost
    const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    const from = (id: string, survivor: boolean) => ledger.arrivals.filter((a) => a.webhookId === id && (a.worker !== 'w0') === survivor);
    for (const id of duplicates) {
      // Duplicates only among those in flight at the kill: sent by w0, sent again by a survivor.
      expect(leased.has(id), id).toBe(true);
      expect(from(id, false).length, id).toBe(1);
      expect(from(id, true).length, id).toBe(1);
    }
    // What w0 had claimed but not sent went out from a survivor, with the same webhook-id. (What it
    // had sent may also have been recorded by a commit already on its way when it died.)
    for (const id of leased) if (from(id, false).length === 0) expect(from(id, true).length, id).toBe(1);
    const redone = ledger.arrivals.filter((a) => leased.has(a.webhookId) && a.worker !== 'w0').map((a) => a.at - killedAt);
    console.info(
      `[processes] crash: w0 killed holding ${leased.size} leases; ${duplicates.length} duplicate deliveries (all among those leases); ` +
        `survivors re-sent them ${(Math.min(...redone) / 1000).toFixed(1)}-${(Math.max(...redone) / 1000).toFixed(1)} s after the kill (lease ${LEASE / 1000} s); survivors logged ${errors} errors`,
    );
  }, 180_000);

  test('PostgreSQL goes away mid-run (every backend killed, connections refused for a while): the processes reconnect and finish, nothing lost', async () => {
    const EVENTS = 1200;
    const ledger = await startLedger(10);
    cleanups.push(() => ledger.close());
    // A lease well past the outage: what was in flight is re-sent only if its outcome could not be recorded.
    const f = await fleet(3, {
      delivery: { concurrency: 16, perWebhookConcurrency: 16, batchSize: 16, timeoutMs: 2000, leaseMs: 8000, pollIntervalMs: 500 },
    });
    for (const name of ['a', 'b'])
      await f.emitter.webhooks.create({ name, endpoint: `${ledger.url}/${name}`, eventTypes: ['user.created'] });
    const ids = await f.emitMany(EVENTS);

    await until('a third of the deliveries', () => ledger.arrivals.length >= (2 * EVENTS) / 3, 60_000, 5);
    const outage = await disruptDatabase(setup.server, f.url, Number(process.env.TEST_PG_OUTAGE_MS ?? 1500));
    const back = performance.now();
    const seen = new Set(ledger.arrivals.filter((a) => a.at < outage.startedAt).map((a) => a.webhookId));
    await until(
      'deliveries flowing again',
      () => ledger.arrivals.some((a) => a.at > back && !seen.has(a.webhookId) && !outage.leased.has(a.webhookId)),
      30_000,
      5,
    );
    const flowing = performance.now();
    await until('every delivery recorded', async () => (await f.count().catch(() => -1)) === 0, 90_000, 100);
    const finished = performance.now();

    for (const w of f.workers) expect(w.exit).toBeUndefined(); // nobody crashed, nobody was restarted
    const errors = await stopAll(f.workers);
    const counts = ledger.counts();
    expect(new Set(counts.keys())).toEqual(new Set(ids));
    const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    for (const id of duplicates) expect(outage.leased.has(id)).toBe(true);
    console.info(
      `[processes] ${outage.how}: database away ${(back - outage.startedAt).toFixed(0)} ms` +
        `${Number.isNaN(outage.terminated) ? '' : `, ${outage.terminated} backends killed`}, ${outage.leased.size} deliveries in flight; ` +
        `new deliveries flowing ${(flowing - back).toFixed(0)} ms after the database was back; all done ${((finished - back) / 1000).toFixed(1)} s after; ` +
        `${duplicates.length} duplicates (all among those in flight); workers logged ${errors} errors`,
    );
  }, 180_000);
});
