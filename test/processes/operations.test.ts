import { type ChildProcess, fork } from 'node:child_process';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks, type Webhooks } from '../../src/index.js';
import { userData } from '../helpers/fixtures.js';
import { until, useFleet } from '../helpers/fleet.js';
import { startReceiver } from '../helpers/http.js';
import { createSchema } from '../helpers/postgres.js';

/**
 * Resend and recover under concurrency on PostgreSQL, with real host processes
 * (ops-worker.mjs over the compiled library) that deliver and run the operations: two processes
 * recovering the same webhook at once queue each failed delivery once; a resend racing with a
 * scheduled retry makes at most one extra attempt, never two attempts at once.
 */
const setup = useFleet('operations');
const cleanups = setup.cleanups;

interface OpsWorker {
  id: string;
  call<T>(message: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

const WORKER = join(resolve(import.meta.dirname), 'ops-worker.mjs');

async function spawnOpsWorker(url: string, id: string, options: Record<string, unknown>): Promise<OpsWorker> {
  const child: ChildProcess = fork(WORKER, [], {
    env: {
      ...process.env,
      IW_DIST: setup.dist,
      DATABASE_URL: url,
      WORKER_ID: id,
      IW_KEY: JSON.stringify(setup.key),
      IW_OPTIONS: JSON.stringify(options),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  cleanups.push(async () => {
    if (exited) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let seq = 0;
  child.on('message', (m: { type?: string; seq?: number; value?: unknown; error?: string }) => {
    if (m?.type !== 'result') return;
    const p = pending.get(m.seq!);
    pending.delete(m.seq!);
    if (m.error !== undefined) p?.reject(new Error(`${id}: ${m.error}`));
    else p?.resolve(m.value);
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`${id} not ready within 20 s`)), 20_000);
    child.on('message', (m: { type?: string }) => m?.type === 'ready' && (clearTimeout(timer), ready()));
    child.once('exit', (code) => (clearTimeout(timer), fail(new Error(`${id} exited (${code}) before ready`))));
  });
  return {
    id,
    call: <T>(message: Record<string, unknown>) =>
      new Promise<T>((resolveCall, reject) => {
        const n = ++seq;
        pending.set(n, { resolve: resolveCall as (v: unknown) => void, reject });
        child.send({ ...message, seq: n });
      }),
    stop: () =>
      new Promise<void>((resolveStop, reject) => {
        const timer = setTimeout(() => reject(new Error(`${id} did not stop within 10 s`)), 10_000);
        child.on('message', (m: { type?: string }) => m?.type === 'stopped' && (clearTimeout(timer), resolveStop()));
        child.send({ type: 'stop' });
      }),
  };
}

/** A fresh schema, two delivering processes, an emitter here that never delivers, an admin pool. */
async function fleet(options: Record<string, unknown>) {
  const schema = await createSchema(setup.server.url, 'o');
  cleanups.push(() => schema.drop());
  const workers = await Promise.all(['w0', 'w1'].map((id) => spawnOpsWorker(schema.url, id, options)));
  const emitter: Webhooks = createWebhooks({
    store: postgresStore({ connectionString: schema.url, maxConnections: 4 }),
    keys: [setup.key],
    issuer: 'http://127.0.0.1/',
    allowPrivateNetworks: true,
  });
  cleanups.push(() => emitter.close());
  const admin = new pg.Pool({ connectionString: schema.url, max: 2 });
  cleanups.push(() => admin.end());
  const count = async (sql: string) => Number((await admin.query(sql)).rows[0].n);
  const emitMany = async (n: number) => {
    for (let i = 0; i < n; i += 25)
      await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, () => emitter.emit({ type: 'user.created', source: 'api', data: userData() })),
      );
  };
  return { workers, emitter, admin, count, emitMany };
}

/** Attempts per delivery, from the database. */
async function attemptsPer(admin: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await admin.query('select delivery_id, count(*)::int as n from iw_attempts group by delivery_id');
  return new Map(rows.map((r) => [r.delivery_id as string, r.n as number]));
}

describe('delivery operations on PostgreSQL, several processes', () => {
  test('two processes recovering the same webhook at once queue each failed delivery once, and each is attempted once more', async () => {
    const N = 1200; // more than two recover batches (500), so the two interleave batch by batch
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    cleanups.push(() => receiver.close());
    // No back-off: the first failure fails the delivery.
    const f = await fleet({ backoff: { schedule: [] }, delivery: { pollIntervalMs: 200, concurrency: 32, perWebhookConcurrency: 32 } });
    const webhook = await f.emitter.webhooks.create({ name: 'flaky', endpoint: `${receiver.url}/flaky`, eventTypes: ['user.created'] });
    const since = new Date(Date.now() - 1000).toISOString();
    await f.emitMany(N);
    await until(
      'every delivery failed',
      async () => (await f.count("select count(*)::int as n from iw_deliveries where status = 'failed'")) === N,
      120_000, // a failing webhook is probed one attempt at a time (per process): 1,200 in a row
      50,
    );
    expect(receiver.requests).toHaveLength(N);

    healthy = true;
    const at = Date.now() + 300; // both start at this moment
    type Ran = { recovered: number; startedAt: number; endedAt: number };
    const results = await Promise.all(f.workers.map((w) => w.call<Ran>({ type: 'recover', webhookId: webhook.id, since, at })));
    const recovered = results.map((r) => r.recovered);
    const span = (r: Ran) => `${r.startedAt - at}..${r.endedAt - at} ms`;
    console.info(
      `[processes] recover race over ${N} failed deliveries: w0 queued ${recovered[0]} (${span(results[0]!)}), w1 queued ${recovered[1]} (${span(results[1]!)})`,
    );
    expect(recovered[0]! + recovered[1]!).toBe(N);

    await until(
      'every delivery delivered',
      async () => (await f.count("select count(*)::int as n from iw_deliveries where status <> 'delivered'")) === 0,
      // Generous: on a loaded machine an attempt past 400 ms is overdue and its webhook re-earns its slots.
      120_000,
      50,
    );
    await new Promise((r) => setTimeout(r, 500)); // a second send, if any, would arrive now
    const arrivals = new Map<string, number>();
    for (const r of receiver.requests)
      arrivals.set(String(r.headers['webhook-id']), (arrivals.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    expect(arrivals.size).toBe(N);
    expect([...arrivals.values()].filter((n) => n !== 2)).toEqual([]); // the failure, then exactly one more
    const attempts = await attemptsPer(f.admin);
    expect([...attempts.values()].filter((n) => n !== 2)).toEqual([]);
    // Nothing left to recover.
    expect(await f.workers[0]!.call<{ recovered: number }>({ type: 'recover', webhookId: webhook.id, since, at: 0 })).toMatchObject({
      recovered: 0,
    });
    await Promise.all(f.workers.map((w) => w.stop()));
  }, 300_000); // bounds, not timings: 2,400 attempts across three processes on a shared 2-core machine

  test('a resend during an attempt whose outcome is being written neither waits for it nor queues a second attempt', async () => {
    const schema = await createSchema(setup.server.url, 'o');
    cleanups.push(() => schema.drop());
    const hooks = createWebhooks({
      store: postgresStore({ connectionString: schema.url, maxConnections: 4 }),
      keys: [setup.key],
      issuer: 'http://127.0.0.1/',
      allowPrivateNetworks: true,
    });
    cleanups.push(() => hooks.close());
    await hooks.webhooks.create({ name: 'w', endpoint: 'http://127.0.0.1:9/in', eventTypes: ['user.created'] });
    const [id] = (await hooks.emit({ type: 'user.created', source: 'api', data: userData() })).deliveryIds;
    const outcome = new pg.Client({ connectionString: schema.url });
    await outcome.connect();
    cleanups.push(() => outcome.end());
    // An attempt in flight in another process (a live lease) whose outcome is being written now.
    const leaseEnds = Date.now() + 60_000;
    // As a claim leaves it: the lease also moves next_attempt_at to its expiry.
    await outcome.query(
      "update iw_deliveries set locked_by = 'other', locked_until = $2, next_attempt_at = $2, attempt_count = 1 where id = $1",
      [id, leaseEnds],
    );
    await outcome.query('begin');
    await outcome.query(
      "update iw_deliveries set status = 'delivered', locked_by = null, locked_until = null, next_attempt_at = null, attempt_count = 2 where id = $1",
      [id],
    );
    // It answers at once (waiting on the attempt's row lock would deadlock with the outcome, which
    // locks the webhook next) with the row it decided on: in flight, so nothing queued.
    const waited = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('the resend waited for the outcome')), 5_000).unref(),
    );
    const answered = await Promise.race([hooks.deliveries.resend(id!), waited]).finally(() => void outcome.query('commit').catch(() => {}));
    // The leased row as it was (a queued resend would be due now), not the outcome being written.
    expect(answered).toMatchObject({ status: 'pending', attemptCount: 1, nextAttemptAt: leaseEnds });
    await outcome.query('select 1'); // after the commit queued above
    expect(await hooks.deliveries.get(id!)).toMatchObject({ status: 'delivered', attemptCount: 2 });
    const { rows } = await outcome.query('select locked_by from iw_deliveries where id = $1', [id]);
    expect(rows[0].locked_by).toBeNull();
  }, 30_000);

  test('a resend racing with a scheduled retry makes at most one extra attempt, never two at once', async () => {
    const N = 120;
    const RETRY_MS = 1000;
    const SLOW_MS = 150; // every attempt after the first is answered slowly: a wide window to resend into
    const seen = new Map<string, number>();
    const receiver = await startReceiver((req) => {
      const id = String(req.headers['webhook-id']);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      return n === 1 ? 500 : { status: 200, delayMs: SLOW_MS };
    });
    cleanups.push(() => receiver.close());
    const f = await fleet({ backoff: { schedule: [RETRY_MS, RETRY_MS], jitter: 0 }, delivery: { pollIntervalMs: 50 } });
    await f.emitter.webhooks.create({ name: 'flaky', endpoint: `${receiver.url}/flaky`, eventTypes: ['user.created'] });
    await f.emitMany(N);
    await until(
      'every first attempt recorded',
      async () => (await f.count('select count(distinct delivery_id)::int as n from iw_attempts')) === N,
      20_000,
      10,
    );
    const firstDone = Date.now();
    const ids = (await f.admin.query('select id from iw_deliveries order by next_attempt_at, id')).rows.map((r) => r.id as string);

    // Resends from the other side of the retry: from well before it is due to after it was answered.
    const gapMs = Math.ceil((RETRY_MS + 3 * SLOW_MS) / N);
    const answers = await f.workers[1]!.call<Array<{ id: string; status: string; attemptCount: number; inFlight: boolean }>>({
      type: 'resend',
      ids,
      at: firstDone + RETRY_MS / 2,
      gapMs,
    });
    await until(
      'every delivery delivered',
      async () => (await f.count("select count(*)::int as n from iw_deliveries where status <> 'delivered'")) === 0,
      20_000,
      20,
    );
    await new Promise((r) => setTimeout(r, 500)); // a stray extra attempt would arrive now

    const attempts = await attemptsPer(f.admin);
    const kinds = { queuedBeforeRetry: 0, absorbedInFlight: 0, afterRetry: 0 };
    const wrong: string[] = [];
    for (const a of answers) {
      if (a.inFlight) kinds.absorbedInFlight++;
      else if (a.attemptCount === 1) kinds.queuedBeforeRetry++;
      else kinds.afterRetry++;
      // Before or during the retry, the resend IS the retry (2 attempts); after it, one more (3).
      const expected = a.attemptCount + 1;
      if (attempts.get(a.id) !== expected || seen.get(a.id) !== expected)
        wrong.push(`${a.id}: ${JSON.stringify(a)}, ${attempts.get(a.id)} attempts, ${seen.get(a.id)} arrivals`);
    }
    console.info(`[processes] resend vs scheduled retry, ${N} deliveries: ${JSON.stringify(kinds)}`);
    expect(wrong).toEqual([]);
    expect(Math.max(...attempts.values())).toBeLessThanOrEqual(3);
    // Never two attempts of one delivery in flight at once: each later arrival comes after the previous answer.
    const times = new Map<string, number[]>();
    for (const r of receiver.requests)
      times.set(String(r.headers['webhook-id']), [...(times.get(String(r.headers['webhook-id'])) ?? []), r.at]);
    const overlapping = [...times].filter(([, t]) => t.slice(2).some((at, i) => at - t[i + 1]! < SLOW_MS - 20));
    expect(overlapping).toEqual([]);
    await Promise.all(f.workers.map((w) => w.stop()));
  }, 30_000);
});
