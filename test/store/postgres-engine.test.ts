import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks, ManualClock, type WebhookDisabledInfo } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/** The engine on PostgreSQL: the host's own transaction, and the Clock as the database's only time. */
let server: TestPostgres;
beforeAll(async () => {
  server = await useTestPostgres('pgengine');
});
afterAll(async () => {
  await server?.close();
});

const cleanups = useCleanups();

interface HostTables {
  users: { id: string; email: string };
}

describe('engine on PostgreSQL', () => {
  test("emit inside the host's own Kysely transaction: rollback leaves nothing, commit is delivered (woken by the commit)", async () => {
    const schema = await createSchema(server.url);
    cleanups.push(() => schema.drop());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    // The host's own pool and Kysely, as an identity server would have them.
    const hostPool = new pg.Pool({ connectionString: schema.url, max: 3 });
    const host = new Kysely<HostTables>({ dialect: new PostgresDialect({ pool: hostPool }) });
    cleanups.push(() => host.destroy());
    await host.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text')
      .execute();

    // Polling once a minute: a prompt delivery can only come from the commit's NOTIFY.
    const hooks = createWebhooks({
      store: postgresStore({ connectionString: schema.url }),
      keys: [await testKey()],
      issuer: 'http://127.0.0.1/',
      allowPrivateNetworks: true,
      delivery: { pollIntervalMs: 60_000 },
    });
    cleanups.push(() => hooks.close());
    await hooks.start();
    await hooks.webhooks.create({ name: 'crm', endpoint: `${receiver.url}/hook`, eventTypes: ['user.created'] });

    let rolledBack = '';
    await expect(
      host.transaction().execute(async (trx) => {
        await trx.insertInto('users').values({ id: 'kp_1', email: 'ada@example.com' }).execute();
        rolledBack = (await hooks.emit({ type: 'user.created', source: 'user', data: userData() }, { transaction: trx })).id;
        throw new Error('sign-up failed later in the same transaction');
      }),
    ).rejects.toThrow('sign-up failed');
    expect(await host.selectFrom('users').selectAll().execute()).toEqual([]);
    await expect(hooks.events.get(rolledBack)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect((await hooks.deliveries.list()).deliveries).toEqual([]);

    const committedAt = { t: 0 };
    const ev = await host.transaction().execute(async (trx) => {
      await trx.insertInto('users').values({ id: 'kp_2', email: 'grace@example.com' }).execute();
      const emitted = await hooks.emit({ type: 'user.created', source: 'user', data: userData() }, { transaction: trx });
      committedAt.t = performance.now();
      return emitted;
    });
    await receiver.waitFor(1, 10_000);
    console.info(
      `[pgengine] host commit -> delivery arrived in ${(receiver.requests[0]!.at - performance.timeOrigin - committedAt.t).toFixed(0)} ms (poll interval 60 s)`,
    );
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual(ev.deliveryIds);
    await hooks.drain();
    expect(await hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'delivered', attemptCount: 1 });
    expect(await host.selectFrom('users').select('id').execute()).toEqual([{ id: 'kp_2' }]);
  });

  test("every query runs on the Clock's time: with the clock in 2035, attempts, retries and the 72-hour disable follow it", async () => {
    const schema = await createSchema(server.url);
    cleanups.push(() => schema.drop());
    const receiver = await startReceiver(() => 500);
    cleanups.push(() => receiver.close());
    const start = Date.parse('2035-06-01T00:00:00.000Z'); // the database's own now() is years behind
    const clock = new ManualClock(start);
    const notified: WebhookDisabledInfo[] = [];
    const hooks = createWebhooks({
      store: postgresStore({ connectionString: schema.url }),
      keys: [await testKey()],
      issuer: 'http://127.0.0.1/',
      allowPrivateNetworks: true,
      clock,
      notifier: { webhookDisabled: (info) => void notified.push(info) },
      delivery: { timeoutMs: 2000, pollIntervalMs: 3600_000 },
      backoff: { jitter: 0 }, // attempts at fixed times: the 14th at 75.6 h
    });
    cleanups.push(() => hooks.close());
    await hooks.start();
    const wh = await hooks.webhooks.create({ name: 'dead', endpoint: `${receiver.url}/dead`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect(receiver.requests).toHaveLength(1); // due at the clock's now, not the server's
    const after1 = await hooks.deliveries.get(ev.deliveryIds[0]!);
    expect(after1).toMatchObject({ attemptCount: 1, status: 'pending', lastAttemptAt: start });
    expect(after1.nextAttemptAt! - start).toBe(5000); // 5 s on the clock

    await clock.advance(71 * 3600_000);
    await hooks.drain();
    expect((await hooks.webhooks.get(wh.id)).status).toBe('enabled');
    await clock.advance(30 * 3600_000);
    await hooks.drain();
    expect(await hooks.webhooks.get(wh.id)).toMatchObject({ status: 'disabled', disabledReason: 'failing', failingSince: start });
    expect(notified).toHaveLength(1);
    const attempts = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempts.length).toBe(receiver.requests.length);
    expect(attempts.every((a) => a.startedAt >= start)).toBe(true);
  });
});
