import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { KyselyStore } from '../../adapters/kysely/store.js';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, type WebhooksOptions } from '../../src/index.js';
import type { PurgeArgs, PurgeCounts } from '../../src/store.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * Retention on the engine's ManualClock, on SQLite and on PostgreSQL: what goes after the period
 * (finished deliveries, their attempts, events with nothing left, sent notices), what stays
 * (recent records, pending and held deliveries and their events), and that purging works in
 * bounded transactions a host's emit slips between.
 */
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const cleanups = useCleanups();

let pg: TestPostgres;
beforeAll(async () => {
  pg = await useTestPostgres('retention');
}, 60_000);
afterAll(async () => {
  await pg?.close();
});

const backends: Array<{ name: string; open(): Promise<KyselyStore> }> = [
  {
    name: 'sqlite',
    async open() {
      const dir = tempDir('iw-retention-');
      cleanups.push(() => dir.cleanup());
      return sqliteStore({ filename: dir.file('webhooks.db') });
    },
  },
  {
    name: 'postgres',
    async open() {
      const schema = await createSchema(pg.url, 'r');
      cleanups.push(() => schema.drop());
      return postgresStore({ connectionString: schema.url, maxConnections: 4 });
    },
  },
];

/** Engine on `store`: receiver paths /ok (200) and /fail (500); a disabled webhook's notice fails for env_f. */
async function engine(store: KyselyStore, extra: Partial<WebhooksOptions> = {}) {
  const receiver = await startReceiver((req) => (req.path === '/ok' ? 200 : 500));
  cleanups.push(() => receiver.close());
  const sent: string[] = [];
  const env = await makeEngine({
    store,
    authorize: () => ({ environment: 'default' }),
    notifier: {
      webhookDisabled: (info) => {
        if (info.environment === 'env_f') throw new Error('mail relay refused');
        sent.push(info.environment);
      },
    },
    delivery: { timeoutMs: 2000, pollIntervalMs: 6 * HOUR },
    ...extra,
  });
  cleanups.push(() => env.close());
  await env.hooks.start();
  const attempts = async (deliveryId: string) =>
    Number(
      (
        await store.kysely
          .selectFrom('iw_attempts')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('delivery_id', '=', deliveryId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const apiEvent = async (id: string) => (await env.hooks.handler(new Request(`http://hooks.test/api/v1/events/${id}`))).status;
  const emit = async (environment: string) => {
    const e = await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment });
    await env.hooks.drain();
    return e;
  };
  /**
   * Moves the clock to `t` a quarter day at a time, draining in between. (One long advance can
   * skip passes: a pass re-run because of a wake-up during the previous one is not awaited by the
   * ManualClock, which then finds no timer and jumps to the end.)
   */
  const walkTo = async (t: number) => {
    while (env.clock.now() < t) {
      await env.clock.advance(Math.min(6 * HOUR, t - env.clock.now()));
      await env.hooks.drain();
    }
  };
  return { ...env, receiver, sent, attempts, apiEvent, emit, walkTo };
}

describe.each(backends)('retention on $name', (backend) => {
  test('after 31 days: old events answer 404 with their deliveries and attempts gone; recent, pending and held records stay; sent notices go; expired holds go a period later', async () => {
    const store = await backend.open();
    // Failures retry after 1 h, then after 40 days; a webhook failing for 2 h is disabled.
    const e = await engine(store, { backoff: { schedule: [HOUR, 40 * DAY, 40 * DAY], jitter: 0 }, disableAfterMs: 2 * HOUR });

    const { hooks, clock, receiver } = e;
    const start = clock.now();
    const create = (environment: string, path: string) =>
      hooks.webhooks.create({ name: `hook ${environment}`, endpoint: `${receiver.url}${path}`, eventTypes: ['user.created'], environment });
    await create('default', '/ok');
    const p = await create('env_p', '/fail'); // one event, failing: pending until day 40
    const n = await create('env_n', '/fail'); // failing on every event: disabled at 2 h, its notice sent
    const f = await create('env_f', '/fail'); // the same, but its notice fails

    const old = await e.emit('default');
    const orphan = await e.emit('env_none'); // nobody subscribed: an event with no delivery at all
    const pending = await e.emit('env_p');
    const held = [await e.emit('env_n'), await e.emit('env_f')];
    await clock.advance(HOUR);
    held.push(await e.emit('env_n'), await e.emit('env_f'));
    await clock.advance(HOUR);
    await hooks.drain();
    expect((await hooks.webhooks.get(n.id, { environment: 'env_n' })).status).toBe('disabled');
    expect((await hooks.webhooks.get(f.id, { environment: 'env_f' })).status).toBe('disabled');
    expect(e.sent).toEqual(['env_n']);
    expect(await e.attempts(old.deliveryIds[0]!)).toBe(1);

    await e.walkTo(start + 23 * DAY);
    const recent = await e.emit('default');
    const recentHour = clock.now() - (clock.now() % HOUR);
    await e.walkTo(start + 31 * DAY);
    await hooks.drain();

    // Gone: the 31-day-old event, its delivery, its attempts.
    await expect(hooks.events.get(old.id)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect(await e.apiEvent(old.id)).toBe(404);
    await expect(hooks.events.get(orphan.id, { environment: 'env_none' })).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    await expect(hooks.deliveries.get(old.deliveryIds[0]!)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect(await e.attempts(old.deliveryIds[0]!)).toBe(0);
    // Kept: the 8-day-old event with its delivery and attempt.
    expect((await hooks.events.get(recent.id)).id).toBe(recent.id);
    expect(await e.apiEvent(recent.id)).toBe(200);
    expect(await hooks.deliveries.get(recent.deliveryIds[0]!)).toMatchObject({ status: 'delivered' });
    expect(await e.attempts(recent.deliveryIds[0]!)).toBe(1);
    // Kept: a pending delivery 31 days old, and its event.
    expect(await hooks.deliveries.get(pending.deliveryIds[0]!, { environment: 'env_p' })).toMatchObject({
      status: 'pending',
      nextAttemptAt: start + HOUR + 40 * DAY,
    });
    expect((await hooks.events.get(pending.id, { environment: 'env_p' })).id).toBe(pending.id);
    expect(await e.attempts(pending.deliveryIds[0]!)).toBe(2);
    // Held by a webhook disabled for more than the period: failed as expired, still listed (and their events).
    for (const h of held) {
      expect(await hooks.deliveries.get(h.deliveryIds[0]!, { environment: h.environment })).toMatchObject({
        status: 'failed',
        lastResult: 'expired',
        nextAttemptAt: null,
      });
      expect((await hooks.events.get(h.id, { environment: h.environment })).id).toBe(h.id);
    }
    // The dashboard's hourly counters: those of the old attempts' hours went, the recent one's stayed.
    const hours = async (environment: string) =>
      (await store.readHours(environment, { since: 0, until: clock.now() + HOUR })).map((r) => r.hour);
    expect(await hours('default')).toEqual([recentHour]);
    for (const environment of ['env_p', 'env_n', 'env_f']) expect(await hours(environment)).toEqual([]);
    // The sent notice is older than the period: gone. The one that failed stays for the operator.
    expect((await hooks.notices.list()).map((x) => [x.environment, x.status])).toEqual([['env_f', 'failed']]);

    // One period after the expiry.
    await e.walkTo(start + 62 * DAY);
    await hooks.drain();
    for (const h of held) {
      await expect(hooks.deliveries.get(h.deliveryIds[0]!, { environment: h.environment })).rejects.toMatchObject({
        code: 'ERR_NOT_FOUND',
      });
      await expect(hooks.events.get(h.id, { environment: h.environment })).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
      expect(await e.attempts(h.deliveryIds[0]!)).toBe(0);
    }
    await expect(hooks.events.get(recent.id)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    // The pending delivery failed again at day 40 and its webhook was disabled: held now, 62 days old, kept.
    expect((await hooks.webhooks.get(p.id, { environment: 'env_p' })).status).toBe('disabled');
    expect(await hooks.deliveries.get(pending.deliveryIds[0]!, { environment: 'env_p' })).toMatchObject({ status: 'held' });
    expect((await hooks.events.get(pending.id, { environment: 'env_p' })).id).toBe(pending.id);
    expect(await e.attempts(pending.deliveryIds[0]!)).toBe(3);
    expect(e.sent).toEqual(['env_n', 'env_p']);
    expect(e.logged.filter((l) => l.includes('retention failed'))).toEqual([]);
  }, 60_000);

  test('hourly counters: those of hours that ended before the cutoff go, oldest first, a batch at a time; later ones stay', async () => {
    const store = await backend.open();
    const now = Date.parse('2026-03-01T12:30:00Z');
    await store.migrate(now);
    const cutoff = now - 30 * DAY; // 2026-01-30T12:30Z: its own hour (12:00) ended after it
    const cutoffHour = cutoff - (cutoff % HOUR);
    // Two environments, three webhooks, the 8 hours before the cutoff's hour and the 3 from it on.
    const rows = [];
    for (const [environment, webhookId] of [
      ['env_a', 'webhook_a'],
      ['env_a', 'webhook_b'],
      ['env_b', 'webhook_c'],
    ] as const)
      for (let h = -8; h < 3; h++) {
        const buckets = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`d${i}`, i === 0 ? 1 : 0]));
        rows.push({ environment, webhook_id: webhookId, hour: cutoffHour + h * HOUR, succeeded: 1, failed: 0, ...buckets });
      }
    await store.kysely
      .insertInto('iw_webhook_hours')
      .values(rows as never)
      .execute();
    const kept = async (environment: string) =>
      (await store.readHours(environment, { since: 0, until: now })).map((r) => `${r.webhookId} ${(r.hour - cutoffHour) / HOUR}`).sort();
    // Batches of 10: the 24 old rows go in three rounds, oldest hours first.
    const first = await store.purge({ cutoff, now, limit: 10 });
    expect(first).toMatchObject({ hours: 10 });
    expect((await kept('env_a')).concat(await kept('env_b'))).not.toContain('webhook_a -8');
    expect(await store.purge({ cutoff, now, limit: 10 })).toMatchObject({ hours: 10 });
    expect(await store.purge({ cutoff, now, limit: 10 })).toMatchObject({ hours: 4 });
    expect(await store.purge({ cutoff, now, limit: 10 })).toMatchObject({ hours: 0 });
    expect(await kept('env_a')).toEqual(['webhook_a 0', 'webhook_a 1', 'webhook_a 2', 'webhook_b 0', 'webhook_b 1', 'webhook_b 2']);
    expect(await kept('env_b')).toEqual(['webhook_c 0', 'webhook_c 1', 'webhook_c 2']);
  }, 30_000);

  test('retention: false keeps everything', async () => {
    const store = await backend.open();
    const e = await engine(store, { retention: false });
    await e.hooks.webhooks.create({ name: 'ok', endpoint: `${e.receiver.url}/ok`, eventTypes: ['user.created'] });
    const old = await e.emit('default');
    // Twice the default's 30 days, a purge pass every quarter day on the way.
    await e.walkTo(e.clock.now() + 61 * DAY);
    await e.hooks.drain();
    expect((await e.hooks.events.get(old.id)).id).toBe(old.id);
    expect(await e.hooks.deliveries.get(old.deliveryIds[0]!)).toMatchObject({ status: 'delivered' });
    expect(await e.attempts(old.deliveryIds[0]!)).toBe(1);
  }, 60_000);

  test('a purge works in bounded transactions: at most 1000 rows of each table per step, and an emit slips in between', async () => {
    const store = await backend.open();
    const e = await engine(store);
    const { hooks, clock, receiver } = e;
    const hook = await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    // 3,500 finished deliveries 40 days old, one in ten failed after 12 attempts.
    const OLD = 3500;
    await seedFinished(store, hook.id, OLD, clock.now() - 40 * DAY);
    // Seeded rows only (their ids say so): the emit below adds rows of its own meanwhile.
    const count = async (table: 'iw_events' | 'iw_deliveries' | 'iw_attempts') =>
      Number(
        (
          await store.kysely
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .where('id', 'like', '%seed%')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = { events: await count('iw_events'), deliveries: await count('iw_deliveries'), attempts: await count('iw_attempts') };
    expect(before).toEqual({ events: OLD, deliveries: OLD, attempts: OLD * 0.9 + OLD * 0.1 * 12 });

    // Every call of the store's purge (one round: one transaction per step), measured from outside.
    const rounds: Array<{
      args: PurgeArgs;
      counts: PurgeCounts | null;
      deleted: { events: number; deliveries: number; attempts: number };
    }> = [];
    const order: string[] = [];
    let emitted: Promise<unknown> | null = null;
    const purge = store.purge.bind(store);
    store.purge = async (args) => {
      const at = { events: await count('iw_events'), deliveries: await count('iw_deliveries'), attempts: await count('iw_attempts') };
      if (emitted === null) {
        // A host emits while the first round runs.
        emitted = hooks.emit({ type: 'user.created', source: 'user', data: userData() }).then(() => order.push('emit done'));
      }
      const counts = await purge(args);
      order.push(`round ${rounds.length + 1} done`);
      const after = { events: await count('iw_events'), deliveries: await count('iw_deliveries'), attempts: await count('iw_attempts') };
      rounds.push({
        args,
        counts,
        deleted: { events: at.events - after.events, deliveries: at.deliveries - after.deliveries, attempts: at.attempts - after.attempts },
      });
      return counts;
    };
    // Past the first purge interval; a pass (here woken by hand) runs the round.
    await clock.advance(10 * 60_000);
    hooks.wake();
    await hooks.drain();
    await emitted;

    expect(rounds.length).toBeGreaterThanOrEqual(4);
    for (const r of rounds) {
      expect(r.args.limit).toBe(1000);
      expect(r.deleted.deliveries).toBeLessThanOrEqual(1000);
      expect(r.deleted.events).toBeLessThanOrEqual(1000);
      expect(r.deleted.attempts).toBeLessThanOrEqual(1000);
      expect(r.counts?.deliveries).toBe(r.deleted.deliveries);
    }
    // Everything old went, in this one run; the emit landed while the purge ran, not after it. It
    // may wait for one bounded transaction or a connection of the pool (one round, on a busy
    // machine), never for the whole purge: it is done before the last round is.
    expect(rounds.reduce((n, r) => n + r.deleted.deliveries, 0)).toBe(OLD);
    expect(rounds.reduce((n, r) => n + r.deleted.events, 0)).toBe(OLD);
    expect(rounds.reduce((n, r) => n + r.deleted.attempts, 0)).toBe(before.attempts);
    expect(order.indexOf('emit done')).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('emit done')).toBeLessThan(order.length - 1);
    expect(await count('iw_events')).toBe(0);
    expect(await count('iw_deliveries')).toBe(0);
    expect(await count('iw_attempts')).toBe(0);
    expect((await hooks.deliveries.list()).deliveries).toHaveLength(1); // the emitted one
    console.info(
      `[retention] ${backend.name}: ${rounds.length} rounds; rows deleted per round ${JSON.stringify(rounds.map((r) => r.deleted))}`,
    );
  }, 60_000);
});

describe('the retention option', () => {
  const open = async () => {
    const dir = tempDir('iw-retention-');
    cleanups.push(() => dir.cleanup());
    const store = sqliteStore({ filename: dir.file('webhooks.db') });
    cleanups.push(() => store.close());
    return { store, keys: [await testKey()], issuer: 'https://id.example.com', logger: { warn: () => {}, error: () => {} } };
  };

  test.each([
    ['{ days: 0 }', { days: 0 }],
    ['{ days: -1 }', { days: -1 }],
    ['{ days: NaN }', { days: Number.NaN }],
    ['{ days: Infinity }', { days: Number.POSITIVE_INFINITY }],
    ['{ days: 36501 } (over a century)', { days: 36_501 }],
    ["{ days: '30' }", { days: '30' }],
    ['{}', {}],
    ["'x'", 'x'],
    ['30 (not an object)', 30],
    ['true', true],
    ['null', null],
  ])('%s is refused by createWebhooks with a TypeError naming the option', async (_label, retention) => {
    const options = await open();
    expect(() => createWebhooks({ ...options, retention: retention as never })).toThrow(
      new TypeError('createWebhooks: retention must be { days: n } with n > 0, or false to keep everything'),
    );
  });

  test('{ days: 30 }, false and no option at all are taken', async () => {
    for (const retention of [{ days: 30 }, false, undefined] as Array<WebhooksOptions['retention']>) {
      const hooks = createWebhooks({ ...(await open()), retention });
      await hooks.close();
    }
  });
});

describe('retention on postgres: one process at a time', () => {
  test('two stores purging at once: the second gets null while the first holds the retention lock', async () => {
    const schema = await createSchema(pg.url, 'r');
    cleanups.push(() => schema.drop());
    const a = postgresStore({ connectionString: schema.url, maxConnections: 2 });
    const b = postgresStore({ connectionString: schema.url, maxConnections: 2 });
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const now = Date.parse('2026-03-01T00:00:00Z');
    await a.migrate(now);
    await seedFinished(a, 'webhook_x', 10, now - 40 * DAY);
    // A sent notice, old, that a third session has locked: a's round stops at its notices step, holding the lock.
    await a.kysely
      .insertInto('iw_notices')
      .values({
        id: 'notice_old',
        environment: 'default',
        kind: 'webhook_disabled',
        webhook_id: 'webhook_x',
        payload: '{}',
        status: 'sent',
        attempt_count: 1,
        next_attempt_at: null,
        locked_by: null,
        locked_until: null,
        last_error: null,
        sent_at: now - 40 * DAY,
        created_at: now - 40 * DAY,
        updated_at: now - 40 * DAY,
      })
      .execute();
    const blocker = new (await import('pg')).default.Client({ connectionString: schema.url });
    await blocker.connect();
    cleanups.push(() => blocker.end());
    await blocker.query('begin');
    await blocker.query("select * from iw_notices where id = 'notice_old' for update");

    const args = { cutoff: now - 30 * DAY, now, limit: 1000 };
    const first = a.purge(args);
    await waitForLockWaiter(blocker);
    expect(await b.purge(args)).toBeNull();
    await blocker.query('commit');
    // (The events went with their last delivery, in the deliveries step.)
    expect(await first).toEqual({ expired: 0, deliveries: 10, events: 0, notices: 1, hours: 0, packs: 0 });
    expect(await a.getEvent('default', 'event_seed00000000')).toBeNull();
    // Free again: the other store purges (nothing left).
    expect(await b.purge(args)).toEqual({ expired: 0, deliveries: 0, events: 0, notices: 0, hours: 0, packs: 0 });
  }, 30_000);
});

/** Waits until some session waits for a lock `blocker` holds. */
async function waitForLockWaiter(blocker: import('pg').Client): Promise<void> {
  const { rows } = await blocker.query('select pg_backend_pid() as pid');
  for (let i = 0; i < 500; i++) {
    const waiting = await blocker.query('select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [
      rows[0].pid,
    ]);
    if (waiting.rows[0].n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('nobody waited for the lock');
}

/**
 * `n` events, each with one finished delivery to `webhookId` at `at`: one in ten failed after 12
 * attempts, the rest delivered at the first. Written with plain inserts, 250 rows a statement.
 */
async function seedFinished(store: KyselyStore, webhookId: string, n: number, at: number): Promise<void> {
  const db = store.kysely;
  for (let from = 0; from < n; from += 250) {
    const idx = Array.from({ length: Math.min(250, n - from) }, (_, k) => from + k);
    const tag = (prefix: string, i: number) => `${prefix}_seed${String(i).padStart(8, '0')}`;
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('iw_events')
        .values(
          idx.map((i) => ({
            id: tag('event', i),
            environment: 'default',
            type: 'user.created',
            source: 'admin',
            data: '{}',
            event_timestamp: at + i,
            created_at: at + i,
          })),
        )
        .execute();
      await trx
        .insertInto('iw_deliveries')
        .values(
          idx.map((i) => ({
            id: tag('msg', i),
            environment: 'default',
            webhook_id: webhookId,
            event_id: tag('event', i),
            event_type: 'user.created',
            status: i % 10 === 0 ? 'failed' : 'delivered',
            attempt_count: i % 10 === 0 ? 12 : 1,
            next_attempt_at: null,
            locked_by: null,
            locked_until: null,
            last_attempt_at: at + i,
            last_result: i % 10 === 0 ? '500' : '200',
            last_error: null,
            created_at: at + i,
            updated_at: at + i,
          })),
        )
        .execute();
      const attempts = idx.flatMap((i) =>
        Array.from({ length: i % 10 === 0 ? 12 : 1 }, (_, k) => ({
          id: `${tag('attempt', i)}_${k}`,
          delivery_id: tag('msg', i),
          webhook_id: webhookId,
          environment: 'default',
          started_at: at + i,
          duration_ms: 3,
          status_code: i % 10 === 0 ? 500 : 200,
          error_kind: null,
          error_message: null,
          response_excerpt: null,
          success: i % 10 === 0 ? 0 : 1,
        })),
      );
      await trx.insertInto('iw_attempts').values(attempts).execute();
    });
  }
}
