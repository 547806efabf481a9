import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, type EmitInput, ManualClock, type Transport, type Webhooks, type WebhooksOptions } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';
import { adminQuery, createSchema, type TestPostgres, terminateBackends, useTestPostgres } from '../helpers/postgres.js';

/**
 * Inputs that used to get past validation and fail later: refused at the door with a
 * ValidationError naming the field, identically on SQLite and PostgreSQL; ids and environments
 * that cannot be stored are simply not found; our own failures never count against an endpoint.
 */
const cleanups = useCleanups();
let server: TestPostgres;
beforeAll(async () => {
  server = await useTestPostgres('poison');
});
afterAll(async () => {
  await server?.close();
});

type Kind = 'sqlite' | 'postgres';
const logged: string[] = [];

async function engine(kind: Kind, extra: Partial<WebhooksOptions> = {}): Promise<{ hooks: Webhooks; url?: string }> {
  let store: WebhooksOptions['store'];
  let url: string | undefined;
  if (kind === 'sqlite') {
    const dir = tempDir();
    cleanups.push(() => dir.cleanup());
    store = sqliteStore({ filename: dir.file('poison.db') });
  } else {
    const schema = await createSchema(server.url);
    cleanups.push(() => schema.drop());
    url = schema.url;
    store = postgresStore({ connectionString: schema.url });
  }
  const hooks = createWebhooks({
    store,
    keys: [await testKey()],
    issuer: 'https://auth.example.com',
    clock: new ManualClock(),
    allowPrivateNetworks: true,
    authorize: () => ({ environment: 'default' }),
    logger: { warn: () => {}, error: (m, meta) => logged.push(`${m} ${JSON.stringify(meta)}`) },
    delivery: { pollIntervalMs: 3600_000 },
    ...extra,
  });
  cleanups.push(() => hooks.close());
  await hooks.start();
  return { hooks, url };
}

/** `{ a: { a: … { a: 1 } } }` with `levels` objects. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe.each<Kind>(['sqlite', 'postgres'])('poison inputs on %s', (kind) => {
  test('data nested deeper than 32 levels is refused at emit, naming the field; 32 levels are accepted', async () => {
    const { hooks } = await engine(kind);
    // organization.created allows extra members: the place the deep data got in.
    const at = (levels: number) =>
      ({
        type: 'organization.created',
        source: 'api',
        data: { organization: { code: 'org_1', name: 'Acme', extra: nested(levels) } },
      }) as EmitInput;
    await expect(hooks.emit(at(30))).resolves.toMatchObject({ type: 'organization.created' }); // data → organization → extra → 30 more = 32
    const refused = await hooks.emit(at(31)).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'ERR_VALIDATION', field: 'data' });
    expect((refused as Error).message).toMatch(/more than 32 levels deep \(at data\.organization\.extra(\.a)+\)/);
    // The attack size: thousands of levels, refused without overflowing anything.
    await expect(hooks.emit(at(4000))).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'data' });
  });

  test('event timestamps outside the Date range, or not whole milliseconds, are refused', async () => {
    const { hooks } = await engine(kind);
    for (const eventTimestamp of [1e20, -1e17, 0.5, Number.NaN, new Date(Number.NaN)]) {
      await expect(
        hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_1' } }, eventTimestamp }),
      ).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
        field: 'eventTimestamp',
      });
    }
    const at = Date.parse('1999-12-31T23:59:59.999Z');
    expect(
      (await hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_1' } }, eventTimestamp: at })).eventTimestamp,
    ).toBe(at);
  });

  test('ids with NUL or a lone surrogate are not found; such environments are refused; never ERR_STORE or 500', async () => {
    const { hooks } = await engine(kind);
    const created = await hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
    for (const bad of [`${created.id}\u0000`, 'webhook_\u0000', 'webhook_\ud800', `${created.id.slice(0, -1)}\udc00`]) {
      for (const call of [
        () => hooks.webhooks.get(bad),
        () => hooks.webhooks.update(bad, { name: 'x' }),
        () => hooks.webhooks.delete(bad),
        () => hooks.webhooks.enable(bad),
        () => hooks.webhooks.disable(bad),
        () => hooks.webhooks.test(bad),
        () => hooks.webhooks.recover(bad, { since: 0 }),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
      }
    }
    for (const bad of ['event_\u0000', 'event_\ud800x'])
      await expect(hooks.events.get(bad)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    for (const bad of ['msg_\u0000', 'msg_\udfff']) {
      await expect(hooks.deliveries.get(bad)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
      await expect(hooks.deliveries.resend(bad)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    }
    expect((await hooks.deliveries.list({ webhookId: 'webhook_\u0000' })).deliveries).toEqual([]);
    for (const environment of ['a\u0000b', 'env\ud800']) {
      await expect(hooks.webhooks.list({ environment })).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'environment' });
      await expect(hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_1' } }, environment })).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
        field: 'environment',
      });
    }
    // Over HTTP: 404 for every route that takes an id, never a 500.
    for (const [method, path] of [
      ['GET', '/api/v1/webhooks/webhook_%00'],
      ['PATCH', '/api/v1/webhooks/webhook_%00'],
      ['DELETE', '/api/v1/webhooks/webhook_%00'],
      ['POST', '/api/v1/webhooks/webhook_%00/enable'],
      ['GET', '/api/v1/events/event_%00'],
      ['GET', '/api/v1/webhooks/webhook_%ED%A0%80'],
    ] as const) {
      const body = method === 'PATCH' ? JSON.stringify({ name: 'x' }) : undefined;
      const res = await hooks.handler(
        new Request(`https://auth.example.com${path}`, { method, body, headers: body ? { 'content-type': 'application/json' } : {} }),
      );
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
  });

  test('recover times that are not whole milliseconds within the Date range are refused, naming the field', async () => {
    const { hooks } = await engine(kind);
    const wh = await hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
    // Compared with a bigint column: 0.5 used to fail on PostgreSQL (ERR_STORE) and pass on SQLite.
    for (const since of [0.5, -0.25, 1e20, Number.MAX_SAFE_INTEGER + 2, Number.NaN, new Date(Number.NaN)]) {
      await expect(hooks.webhooks.recover(wh.id, { since })).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'since' });
    }
    for (const until of [1.5, Number.POSITIVE_INFINITY]) {
      await expect(hooks.webhooks.recover(wh.id, { since: 0, until })).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'until' });
    }
    // Whole milliseconds and Dates still work.
    await expect(hooks.webhooks.recover(wh.id, { since: 0 })).resolves.toEqual({ recovered: 0 });
    await expect(hooks.webhooks.recover(wh.id, { since: new Date(0), until: new Date(1) })).resolves.toEqual({ recovered: 0 });
  });

  test("an internal failure (ours, not the endpoint's) is logged with the delivery id, retried, and never counts toward the endpoint's health", async () => {
    const broken: Transport = {
      async send() {
        throw new RangeError('Maximum call stack size exceeded'); // what deep data used to cause
      },
    };
    logged.length = 0;
    const { hooks } = await engine(kind, { transport: broken });
    const wh = await hooks.webhooks.create({ name: 'healthy', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
    const sent = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const delivery = await hooks.deliveries.get(sent.deliveryIds[0]!);
    expect(delivery).toMatchObject({ status: 'pending', attemptCount: 1, lastResult: 'internal' });
    expect(delivery.nextAttemptAt).toBeGreaterThan(delivery.lastAttemptAt!);
    expect(await hooks.webhooks.get(wh.id)).toMatchObject({ status: 'enabled', failingSince: null, lastError: null });
    expect(
      logged.some(
        (l) => l.includes('failed inside the engine') && l.includes(sent.deliveryIds[0]!) && l.includes('"errorKind":"internal"'),
      ),
    ).toBe(true);
  });
});

test('PostgreSQL: emit right after every backend is killed succeeds (a transient retry with the same event id), five rounds of five', async () => {
  const { hooks, url } = await engine('postgres');
  await hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.deleted'] });
  const ids = new Set<string>();
  for (let round = 0; round < 5; round++) {
    expect(await terminateBackends(url!)).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      const ev = await hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: `kp_${round}_${i}` } } });
      expect(ev.deliveryIds).toHaveLength(1);
      ids.add(ev.id);
    }
  }
  expect(ids.size).toBe(25);
  for (const id of ids) expect((await hooks.deliveries.list({ eventId: id })).deliveries).toHaveLength(1);
});

test("PostgreSQL: emit inside the host's transaction surfaces a dead connection to the host at once, without the transient retry", async () => {
  const schema = await createSchema(server.url);
  cleanups.push(() => schema.drop());
  const store = postgresStore({ connectionString: schema.url });
  // Counts the calls and passes each to the real store: the retry would be a second call.
  let inserts = 0;
  const insertEvent = store.insertEvent.bind(store);
  store.insertEvent = (...args) => {
    inserts++;
    return insertEvent(...args);
  };
  const hooks = createWebhooks({
    store,
    keys: [await testKey()],
    issuer: 'https://auth.example.com',
    clock: new ManualClock(),
    allowPrivateNetworks: true,
    logger: { warn: () => {}, error: () => {} },
    delivery: { pollIntervalMs: 3600_000 },
  });
  cleanups.push(() => hooks.close());
  await hooks.start();
  await hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.deleted'] });
  inserts = 0;

  let emitted: unknown;
  const outcome = await store.kysely
    .transaction()
    .execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      // The host's backend dies mid-transaction, as in a PostgreSQL restart or a failover.
      await adminQuery(schema.url, 'select pg_terminate_backend($1)', [rows[0]!.pid]);
      emitted = await hooks
        .emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_tx' } } }, { transaction: trx })
        .catch((e: unknown) => e);
      throw emitted; // what a host does with it: its transaction is gone
    })
    .catch((e: unknown) => e);
  expect(outcome).toBeInstanceOf(Error); // the host's transaction failed (its rollback too, on a dead connection)
  expect(emitted).toMatchObject({ code: 'ERR_STORE' });
  // The cause is the kind our own transaction would have retried, and it was tried once.
  const cause = (emitted as { cause?: unknown }).cause;
  expect(store.isTransient(cause)).toBe(true);
  expect(inserts).toBe(1);
  // Nothing was written; the same emit on the engine's own transaction goes through (retried there if need be).
  const ok = await hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_tx' } } });
  expect(ok.deliveryIds).toHaveLength(1);
  expect(inserts).toBeGreaterThanOrEqual(2);
  expect(await adminQuery(schema.url, 'select count(*)::int as n from iw_events').then((r) => r.rows[0].n)).toBe(1);
});
