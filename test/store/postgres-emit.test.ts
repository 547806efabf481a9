import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EMIT_CALL } from '../../adapters/postgres/emit.js';
import { postgresStore } from '../../adapters/postgres/index.js';
import { newId } from '../../src/ids.js';
import { useCleanups } from '../helpers/cleanup.js';
import { until } from '../helpers/fleet.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
import { event, webhook } from './conformance.js';

/** PostgreSQL emit in one round trip: what the database sees for one insertEvent. */
let server: TestPostgres;
beforeAll(async () => {
  server = await useTestPostgres('pgemit');
});
afterAll(async () => {
  await server?.close();
});

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const cleanups = useCleanups();

/** A store on a pool whose every connection records the statements it sends, and their parameters. */
async function counted(options: { notifications?: boolean } = {}) {
  const schema = await createSchema(server.url);
  cleanups.push(() => schema.drop());
  const pool = new pg.Pool({ connectionString: schema.url, max: 4 });
  cleanups.push(() => pool.end());
  const statements: string[] = [];
  const parameters: unknown[][] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const text = args[0];
      statements.push(typeof text === 'string' ? text : String((text as { text?: unknown }).text));
      parameters.push((typeof text === 'string' ? args[1] : (text as { values?: unknown }).values) as unknown[]);
      return query(...args);
    };
  });
  const store = postgresStore({ pool, ...options });
  cleanups.push(() => store.close());
  await store.migrate(T0);
  const hooks = [];
  for (let i = 0; i < 10; i++) {
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    hooks.push(hook);
  }
  const made: string[] = [];
  const newDeliveryId = () => {
    const id = newId('msg', T0);
    made.push(id);
    return id;
  };
  /** The statements sent while `fn` ran, and their parameters. */
  const during = async <T>(fn: () => Promise<T>): Promise<{ result: T; sent: string[]; values: unknown[][] }> => {
    const from = statements.length;
    const result = await fn();
    return { result, sent: statements.slice(from), values: parameters.slice(from) };
  };
  return { store, url: schema.url, hooks, made, newDeliveryId, during };
}

const count = async (url: string, sql: string, values: unknown[]) => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query(sql, values)).rows[0].n);
  } finally {
    await client.end();
  }
};

describe('postgres: emit in one statement', () => {
  test('10 subscribers: one statement outside a transaction (no BEGIN/COMMIT), ids from newDeliveryId, rows as returned', async () => {
    const { store, hooks, made, newDeliveryId, during } = await counted();
    const ev = event('env_a', { createdAt: T0 });
    const {
      result: deliveries,
      sent,
      values,
    } = await during(() =>
      store.insertEvent(ev, { newDeliveryId, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
    );
    expect(sent).toEqual([EMIT_CALL]);
    expect(values[0]!.at(-3)).toBe(true); // the hint goes out with it (the last parameters are the subject and the email)
    expect(deliveries.map((d) => d.webhookId).sort()).toEqual(hooks.map((h) => h.id).sort());
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(10);
    for (const d of deliveries) {
      expect(made).toContain(d.id);
      expect(d.id).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(await store.getDelivery('env_a', d.id)).toEqual(d);
    }
    expect(await store.getEvent('env_a', ev.id)).toEqual(ev);
    const [claimed] = await store.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: 1000 });
    expect(claimed?.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  });

  test('idempotent by event id: a retry returns what the first commit wrote and writes nothing', async () => {
    const { store, url, newDeliveryId, during } = await counted();
    const ev = event('env_a');
    const first = await store.insertEvent(ev, { newDeliveryId });
    await store.claimDue({ now: T0, limit: 3, workerId: 'w1', leaseMs: 1000 }); // the rows move on meanwhile
    const { result: again, sent } = await during(() => store.insertEvent(ev, { newDeliveryId }));
    expect(sent).toHaveLength(2); // the statement wrote nothing; the deliveries are read in a new one
    expect(again.map((d) => d.id).sort()).toEqual(first.map((d) => d.id).sort());
    for (const d of again) expect(await store.getDelivery('env_a', d.id)).toEqual(d);
    expect(await count(url, 'select count(*) as n from iw_deliveries where event_id = $1', [ev.id])).toBe(10);
    expect(await count(url, 'select count(*) as n from iw_events where id = $1', [ev.id])).toBe(1);
  });

  test('a retry that waited on the first (still committing) answers with what that commit wrote', async () => {
    const { store, url, newDeliveryId } = await counted();
    const ev = event('env_a');
    let commit!: () => void;
    let wrote!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const uncommitted = new Promise<void>((resolve) => (wrote = resolve));
    const first = store.kysely.transaction().execute(async (trx) => {
      const deliveries = await store.insertEvent(ev, { newDeliveryId, transaction: trx });
      wrote();
      await committed;
      return deliveries;
    });
    await uncommitted;
    // The retry's statement takes its snapshot now, then waits on the event id the first holds.
    const retry = store.insertEvent(ev, { newDeliveryId });
    await until(
      'the retry to wait on the first',
      async () =>
        (await count(
          url,
          "select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
          [],
        )) > 0,
    );
    commit();
    const written = await first;
    expect(written).toHaveLength(10);
    expect((await retry).map((d) => d.id).sort()).toEqual(written.map((d) => d.id).sort());
  });

  test('inside a host transaction: the same one statement; a rollback leaves no event and no delivery', async () => {
    const { store, url, newDeliveryId, during } = await counted();
    const lost = event('env_a');
    const { sent } = await during(() =>
      expect(
        store.kysely.transaction().execute(async (trx) => {
          const deliveries = await store.insertEvent(lost, { newDeliveryId, transaction: trx });
          expect(deliveries).toHaveLength(10);
          throw new Error('host rolls back');
        }),
      ).rejects.toThrow('host rolls back'),
    );
    expect(sent.map((s) => s.toLowerCase())).toEqual(['begin', EMIT_CALL.toLowerCase(), 'rollback']);
    expect(await store.getEvent('env_a', lost.id)).toBeNull();
    expect(await count(url, 'select count(*) as n from iw_deliveries where event_id = $1', [lost.id])).toBe(0);

    const kept = event('env_a');
    const deliveries = await store.kysely.transaction().execute((trx) => store.insertEvent(kept, { newDeliveryId, transaction: trx }));
    expect(await store.getEvent('env_a', kept.id)).toEqual(kept);
    expect(await count(url, 'select count(*) as n from iw_deliveries where event_id = $1', [kept.id])).toBe(deliveries.length);
  });

  test('more subscribers than ids offered: nothing half-written, a second try with enough; the next emit needs one', async () => {
    const { store, url, during } = await counted();
    for (let i = 0; i < 20; i++) await store.createWebhook(webhook('env_a'), { maxWebhooks: null }); // 30 in all
    const newDeliveryId = () => newId('msg', T0);
    const ev = event('env_a');
    const { result: deliveries, sent } = await during(() => store.insertEvent(ev, { newDeliveryId }));
    expect(sent).toHaveLength(2);
    expect(new Set(deliveries.map((d) => d.webhookId)).size).toBe(30);
    expect(new Set(deliveries.map((d) => d.id)).size).toBe(30);
    expect(await count(url, 'select count(*) as n from iw_deliveries where event_id = $1', [ev.id])).toBe(30);
    const next = await during(() => store.insertEvent(event('env_a'), { newDeliveryId }));
    expect(next.sent).toHaveLength(1);
    expect(next.result).toHaveLength(30);
  });

  test('no subscriber: the event alone, still one statement', async () => {
    const { store, url, newDeliveryId, during } = await counted();
    const ev = event('env_nobody');
    const { result, sent } = await during(() => store.insertEvent(ev, { newDeliveryId }));
    expect(result).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(await store.getEvent('env_nobody', ev.id)).toEqual(ev);
    expect(await count(url, 'select count(*) as n from iw_deliveries where event_id = $1', [ev.id])).toBe(0);
  });

  test('the hint goes out with the statement: a second store subscribed is woken; no delivery, or a retry, no hint', async () => {
    const { store, url, newDeliveryId } = await counted();
    const other = postgresStore({ connectionString: url, maxConnections: 2 });
    cleanups.push(() => other.close());
    const wakes: number[] = [];
    const stop = await other.subscribe!(() => wakes.push(performance.now()));
    cleanups.push(stop);
    await until('the listener to connect', () => wakes.length >= 1, 10_000, 5); // it wakes once on (re)connect

    const ev = event('env_a');
    let before = wakes.length;
    await store.insertEvent(ev, { newDeliveryId });
    await until('the wake-up', () => wakes.length > before, 5000, 1);

    before = wakes.length;
    await store.insertEvent(ev, { newDeliveryId }); // a retry writes nothing
    await store.insertEvent(event('env_nobody'), { newDeliveryId });
    await new Promise((r) => setTimeout(r, 300));
    expect(wakes.length).toBe(before);
  });

  test('notifications off: one statement, and no hint goes out', async () => {
    const { store, url, newDeliveryId, during } = await counted({ notifications: false });
    const other = postgresStore({ connectionString: url, maxConnections: 2 });
    cleanups.push(() => other.close());
    const wakes: number[] = [];
    cleanups.push(await other.subscribe!(() => wakes.push(performance.now())));
    await until('the listener to connect', () => wakes.length >= 1, 10_000, 5); // it wakes once on (re)connect
    const before = wakes.length;
    const { result, sent, values } = await during(() => store.insertEvent(event('env_a'), { newDeliveryId }));
    expect(result).toHaveLength(10);
    expect(sent).toEqual([EMIT_CALL]);
    expect(values[0]!.at(-3)).toBe(false);
    // A hint would reach the listener within milliseconds (the test above waits for one).
    await new Promise((r) => setTimeout(r, 300));
    expect(wakes.length).toBe(before);
  });

  test('the emit function (iw_emit_3): planned once per connection, sequential scans off', async () => {
    const { url } = await counted();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(`select proconfig from pg_proc where oid = 'iw_emit_3'::regproc`);
      expect(rows[0].proconfig).toEqual(['plan_cache_mode=force_generic_plan', 'enable_seqscan=off']);
    } finally {
      await client.end();
    }
  });
});
