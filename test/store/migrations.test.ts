import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { expect, test } from 'vitest';
import { MIGRATIONS } from '../../adapters/kysely/migrations.js';
import type { KyselyStore } from '../../adapters/kysely/store.js';
import { postgresStore } from '../../adapters/postgres/index.js';
import { type SqliteDatabase, SqliteEngineDialect } from '../../adapters/sqlite/driver.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { tempDir } from '../helpers/http.js';
import { useTestPostgres } from '../helpers/postgres.js';

/** A file as migrations 1 to `upTo` left it, ledger included: what an earlier release wrote. */
async function migratedTo(file: string, upTo: number): Promise<Kysely<any>> {
  const db = new Database(file) as unknown as SqliteDatabase;
  const old = new Kysely<any>({ dialect: new SqliteEngineDialect(db, true) });
  await old.schema
    .createTable('iw_migrations')
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('applied_at', 'bigint')
    .execute();
  for (const m of MIGRATIONS.filter((m) => m.version <= upTo)) {
    await m.up(old, 'sqlite');
    await old.insertInto('iw_migrations').values({ version: m.version, name: m.name, applied_at: 1 }).execute();
  }
  return old;
}

/** A database written by an earlier release upgrades in place, its rows filled in for what came later. */
test('migration 2 (delivery log) fills event_type and last_error on deliveries written before it', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('old.db');
    // The schema as release 1 left it, with a delivery that failed once.
    const old = await migratedTo(file, 1);
    await old
      .insertInto('iw_events')
      .values({ id: 'event_1', environment: 'default', type: 'role.created', source: 'api', data: '{}', event_timestamp: 1, created_at: 1 })
      .execute();
    await old
      .insertInto('iw_deliveries')
      .values({
        id: 'msg_1',
        environment: 'default',
        webhook_id: 'webhook_1',
        event_id: 'event_1',
        status: 'pending',
        attempt_count: 1,
        next_attempt_at: 5,
        last_attempt_at: 2,
        last_result: '500',
        created_at: 1,
        updated_at: 2,
      })
      .execute();
    await old
      .insertInto('iw_attempts')
      .values({
        id: 'attempt_1',
        delivery_id: 'msg_1',
        webhook_id: 'webhook_1',
        environment: 'default',
        started_at: 2,
        duration_ms: 3,
        status_code: 500,
        error_kind: 'status',
        error_message: 'HTTP 500',
        success: 0,
      })
      .execute();
    await old.destroy();

    const store = sqliteStore({ filename: file });
    await store.migrate(10);
    expect(await store.getDelivery('default', 'msg_1')).toMatchObject({
      eventType: 'role.created',
      lastError: 'HTTP 500',
      status: 'pending',
    });
    const versions = (await store.kysely.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version));
    expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
    await store.close();
  } finally {
    dir.cleanup();
  }
});

test('migration 14 turns the deliveries unique key round on SQLite, keeping every row, column and other index, and the host’s views and triggers', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('v13.db');
    // A database as migrations 1 to 13 left it, with deliveries in every state and column.
    const old = await migratedTo(file, 13);
    const indexesOf = async (k: Kysely<any>) =>
      (
        await k
          .selectFrom('sqlite_master')
          .select(['name', 'sql'])
          .where('type', '=', 'index')
          .where('tbl_name', '=', 'iw_deliveries')
          .orderBy('name')
          .execute()
      ).filter((r) => r.sql !== null);
    const before = await indexesOf(old);
    const statuses = ['pending', 'held', 'delivered', 'failed'] as const;
    for (let i = 0; i < 40; i++)
      await old
        .insertInto('iw_deliveries')
        .values({
          id: `msg_${String(i).padStart(3, '0')}`,
          environment: `env_${i % 3}`,
          webhook_id: `webhook_${i % 4}`,
          event_id: `event_${Math.floor(i / 4)}`,
          status: statuses[i % 4],
          attempt_count: i % 5,
          next_attempt_at: i % 4 === 0 ? 1000 + i : null,
          locked_by: i % 8 === 0 ? 'worker' : null,
          locked_until: i % 8 === 0 ? 2000 + i : null,
          last_attempt_at: i % 5 ? 900 + i : null,
          last_result: i % 5 ? String(200 + i) : null,
          created_at: 100 + i,
          updated_at: 200 + i,
          event_type: `user.t${i % 3}`,
          last_error: i % 4 === 3 ? `error ${i}` : null,
          claimed_due_at: i % 8 === 0 ? 1000 + i : null,
        })
        .execute();
    const rows = await old.selectFrom('iw_deliveries').selectAll().orderBy('id').execute();
    // The host's own view and trigger on the table: they outlive the rebuild, and still work.
    await sql`create view host_report as select webhook_id, count(*) as n from iw_deliveries group by webhook_id`.execute(old);
    await sql`create table host_audit (delivery_id text)`.execute(old);
    await sql`create trigger host_audit_insert after insert on iw_deliveries begin insert into host_audit values (new.id); end`.execute(
      old,
    );
    const report = (await sql`select * from host_report order by webhook_id`.execute(old)).rows;
    await old.destroy();

    const store = sqliteStore({ filename: file });
    await store.migrate(10);
    const k = store.kysely as unknown as Kysely<any>;
    expect(await k.selectFrom('iw_deliveries').selectAll().orderBy('id').execute()).toEqual(rows);
    // The same secondary indexes, defined the same, but the one on event_id: the key covers it.
    expect(await indexesOf(k)).toEqual(before.filter((r) => r.name !== 'iw_deliveries_event'));
    expect(before.map((r) => r.name)).toContain('iw_deliveries_event');
    const table = await k.selectFrom('sqlite_master').select('sql').where('name', '=', 'iw_deliveries').executeTakeFirstOrThrow();
    expect(table.sql).toMatch(/unique \("event_id", "webhook_id"\)/);
    // Still one delivery per (webhook, event); lookups by event read the key.
    const again = { ...rows[0], id: 'msg_again' };
    await expect(k.insertInto('iw_deliveries').values(again).execute()).rejects.toThrow(
      /UNIQUE constraint failed: iw_deliveries\.event_id, iw_deliveries\.webhook_id/,
    );
    expect((await sql`select * from host_report order by webhook_id`.execute(k)).rows).toEqual(report);
    await k
      .insertInto('iw_deliveries')
      .values({ ...rows[0], id: 'msg_new', event_id: 'event_new' })
      .execute();
    expect((await sql`select delivery_id from host_audit`.execute(k)).rows).toEqual([{ delivery_id: 'msg_new' }]);
    // The connection's setting, which the rebuild turned on for its rename, is as it was.
    expect((await sql`pragma legacy_alter_table`.execute(k)).rows).toEqual([{ legacy_alter_table: 0 }]);
    const plan = await k.executeQuery<{ detail: string }>(
      CompiledQuery.raw('explain query plan select id from iw_deliveries where event_id = ?', ['event_1']),
    );
    expect(plan.rows.map((r) => r.detail).join(' | ')).toMatch(
      /SEARCH iw_deliveries USING INDEX sqlite_autoindex_iw_deliveries_\d \(event_id=\?\)/,
    );
    expect((await k.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version))).toEqual(
      MIGRATIONS.map((m) => m.version),
    );
    await store.close();
  } finally {
    dir.cleanup();
  }
});

test('migrating waits while another connection holds the file’s write lock past busy_timeout (another process migrating)', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('locked.db');
    // The other process, as far as SQLite can tell: a connection of its own, inside a write
    // transaction that lasts far longer than this store's busy timeout.
    const other = new Database(file);
    other.pragma('journal_mode = WAL');
    other.exec('create table host_table (x)');
    other.exec('begin immediate');
    other.exec('insert into host_table values (1)');
    let committed = false;
    const commit = new Promise<void>((resolve) =>
      setTimeout(() => {
        other.exec('commit');
        committed = true;
        resolve();
      }, 400),
    );
    const store = sqliteStore({ filename: file, busyTimeoutMs: 20 });
    await store.migrate(0);
    // Done only after the other connection let go, not failed with SQLITE_BUSY 20 ms in.
    expect(committed).toBe(true);
    await commit;
    const versions = (await store.kysely.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version));
    expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
    await store.close();
    other.close();
  } finally {
    dir.cleanup();
  }
});

/**
 * Migration 17 (endpoint options) on a file the current release wrote (migrations 1 to 14): its
 * webhooks read with no options and keep delivering, and the options can be set on them.
 */
test('migration 17 (endpoint options) upgrades a file of the current release: webhooks without options, then with', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('release.db');
    const old = await migratedTo(file, 14);
    await old
      .insertInto('iw_webhooks')
      .values({
        id: 'webhook_1',
        environment: 'default',
        name: 'CRM',
        description: null,
        endpoint: 'https://example.com/in',
        event_types: '["user.created"]',
        status: 'enabled',
        created_at: 1,
        updated_at: 1,
      })
      .execute();
    await old
      .insertInto('iw_events')
      .values({ id: 'event_1', environment: 'default', type: 'user.created', source: 'api', data: '{}', event_timestamp: 1, created_at: 1 })
      .execute();
    await old
      .insertInto('iw_deliveries')
      .values({
        id: 'msg_1',
        environment: 'default',
        webhook_id: 'webhook_1',
        event_id: 'event_1',
        status: 'pending',
        attempt_count: 0,
        next_attempt_at: 1,
        event_type: 'user.created',
        created_at: 1,
        updated_at: 1,
      })
      .execute();
    await old.destroy();

    const store = sqliteStore({ filename: file });
    try {
      await store.migrate(10);
      expect(await store.getWebhook('default', 'webhook_1')).toMatchObject({ headers: {}, timeoutMs: null, rateLimit: null });
      const [claimed] = await store.claimDue({ now: 10, limit: 10, workerId: 'w', leaseMs: 1000 });
      expect(claimed!.delivery.id).toBe('msg_1');
      const patched = await store.updateWebhook(
        'default',
        'webhook_1',
        { headers: { 'X-A': 'b' }, timeoutMs: 5000, rateLimit: { perSecond: 3 } },
        20,
      );
      expect(patched).toMatchObject({ headers: { 'X-A': 'b' }, timeoutMs: 5000, rateLimit: { perSecond: 3 } });
      const ledger = await store.kysely.selectFrom('iw_migrations').select('version').where('version', '=', 17).execute();
      expect(ledger).toHaveLength(1);
    } finally {
      await store.close();
    }
  } finally {
    dir.cleanup();
  }
});

test('migration 20 (dashboard links) adds its table to a database an earlier release wrote, rows kept', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('before-links.db');
    const old = await migratedTo(file, 19);
    await old
      .insertInto('iw_events')
      .values({ id: 'event_1', environment: 'default', type: 'role.created', source: 'api', data: '{}', event_timestamp: 1, created_at: 1 })
      .execute();
    await old.destroy();
    const store = sqliteStore({ filename: file });
    await store.migrate(10);
    expect(await store.getEvent('default', 'event_1')).toMatchObject({ type: 'role.created' });
    const link = {
      id: 'h1',
      kind: 'link',
      environment: 'default',
      capability: 'manage',
      next: null,
      expiresAt: 100,
      usedAt: null,
      createdAt: 10,
    } as const;
    await store.insertDashboardGrant(link, 10);
    expect(await store.redeemDashboardLink('h1', { id: 'h2', expiresAt: 200 }, 11)).toMatchObject({
      kind: 'session',
      environment: 'default',
    });
    const versions = (await store.kysely.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version));
    expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
    await store.close();
  } finally {
    dir.cleanup();
  }
});

/**
 * Migration 19 (the dashboard's hourly counters) on a database of the release before it, on both
 * dialects: the table comes empty (attempts recorded before it are not counted: the stats start at
 * the upgrade), and the next outcomes are counted.
 */
async function countsAfterUpgrade(store: ReturnType<typeof sqliteStore> | ReturnType<typeof postgresStore>, webhookId: string) {
  await store.migrate(10);
  const versions = (await store.kysely.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version));
  expect(versions.sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
  const hour = 3_600_000;
  expect(await store.readHours('default', { since: 0, until: 10 * hour })).toEqual([]);
  const [delivery] = await store.insertEvent(
    { id: 'event_2', environment: 'default', type: 'user.created', source: 'api', data: {}, eventTimestamp: 5, createdAt: 5 },
    { newDeliveryId: () => 'msg_2' },
  );
  expect(delivery?.webhookId).toBe(webhookId);
  await store.claimDue({ now: 6, limit: 1, workerId: 'w', leaseMs: 1000 });
  await store.recordAttempts([
    {
      attempt: {
        id: 'attempt_2',
        deliveryId: 'msg_2',
        webhookId,
        environment: 'default',
        startedAt: 7,
        durationMs: 40,
        statusCode: 200,
        errorKind: null,
        errorMessage: null,
        responseExcerpt: null,
        success: true,
      },
      workerId: 'w',
      now: 8,
      nextAttemptAt: null,
      disableAfterMs: hour,
    },
  ]);
  expect(await store.readHours('default', { since: 0, until: hour })).toEqual([
    { webhookId, hour: 0, succeeded: 1, failed: 0, durations: [0, 1, 0, 0, 0, 0, 0, 0, 0, 0] },
  ]);
}

const WEBHOOK_ROW = {
  id: 'webhook_1',
  environment: 'default',
  name: 'CRM',
  endpoint: 'https://example.com/hooks',
  event_types: '["user.created"]',
  status: 'enabled',
  created_at: 1,
  updated_at: 1,
};

test('migration 19 adds the hourly counters to a SQLite file of the release before, and outcomes are counted from then on', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('before-19.db');
    const old = await migratedTo(file, 18);
    await old.insertInto('iw_webhooks').values(WEBHOOK_ROW).execute();
    await old.destroy();
    const store = sqliteStore({ filename: file });
    try {
      await countsAfterUpgrade(store, 'webhook_1');
    } finally {
      await store.close();
    }
  } finally {
    dir.cleanup();
  }
});

test('migration 19 adds the hourly counters to a PostgreSQL database of the release before, and outcomes are counted from then on', async () => {
  const server = await useTestPostgres('migration19');
  try {
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    const old = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    await old.schema
      .createTable('iw_migrations')
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute();
    for (const m of MIGRATIONS.filter((m) => m.version < 19)) {
      await m.up(old, 'postgres');
      await old.insertInto('iw_migrations').values({ version: m.version, name: m.name, applied_at: 1 }).execute();
    }
    await old.insertInto('iw_webhooks').values(WEBHOOK_ROW).execute();
    await old.destroy();
    const store = postgresStore({ connectionString: server.url, maxConnections: 2 });
    try {
      await countsAfterUpgrade(store, 'webhook_1');
    } finally {
      await store.close();
    }
  } finally {
    await server.close();
  }
});

/**
 * Migration 18 (signing formats and endpoint auth) on a database as 17 left it, on both dialects:
 * the webhook written before reads as a JWT webhook without secrets, is claimed with its new
 * columns, and takes sealed secrets after.
 */
async function upgradeTo18(db: Kysely<any>, dialect: 'sqlite' | 'postgres', store: KyselyStore) {
  await db.schema
    .createTable('iw_migrations')
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('applied_at', 'bigint')
    .execute();
  for (const m of MIGRATIONS.filter((m) => m.version < 18)) {
    await m.up(db, dialect);
    await db.insertInto('iw_migrations').values({ version: m.version, name: m.name, applied_at: 1 }).execute();
  }
  await db
    .insertInto('iw_webhooks')
    .values({
      id: 'webhook_1',
      environment: 'default',
      name: 'old',
      description: null,
      endpoint: 'https://example.com/h',
      event_types: '["user.created"]',
      status: 'enabled',
      created_at: 1,
      updated_at: 1,
    })
    .execute();
  await db
    .insertInto('iw_events')
    .values({ id: 'event_1', environment: 'default', type: 'user.created', source: 'api', data: '{}', event_timestamp: 1, created_at: 1 })
    .execute();
  await db
    .insertInto('iw_deliveries')
    .values({
      id: 'msg_1',
      environment: 'default',
      webhook_id: 'webhook_1',
      event_id: 'event_1',
      status: 'pending',
      attempt_count: 0,
      next_attempt_at: 1,
      event_type: 'user.created',
      created_at: 1,
      updated_at: 1,
    })
    .execute();
  await db.destroy();

  await store.migrate(10);
  expect(await store.getWebhook('default', 'webhook_1')).toMatchObject({ format: 'jwt', signing: null, auth: null });
  const claimed = await store.claimDue({ now: 10, limit: 10, workerId: 'w', leaseMs: 1000 });
  expect(claimed[0]?.webhook).toMatchObject({ id: 'webhook_1', format: 'jwt', signing: null, auth: null });
  expect(await store.listWebhooksWithSecrets(null, 10)).toEqual([]);
  const signing = { secret: 'sealed:v1:x', previous: null, previousUntil: null, publicKey: null, privateKey: null };
  await store.updateWebhook('default', 'webhook_1', { format: 'standard-webhooks', signing }, 20);
  expect(await store.getWebhook('default', 'webhook_1')).toMatchObject({ format: 'standard-webhooks', signing });
  expect((await store.listWebhooksWithSecrets(null, 10)).map((w) => w.id)).toEqual(['webhook_1']);
  const versions = (await store.kysely.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version));
  expect(versions).toContain(18);
  await store.close();
}

test('migration 18 (signing formats and endpoint auth) upgrades a SQLite file in place', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('v17.db');
    const db = new Kysely<any>({ dialect: new SqliteEngineDialect(new Database(file) as unknown as SqliteDatabase, true) });
    await upgradeTo18(db, 'sqlite', sqliteStore({ filename: file }));
  } finally {
    dir.cleanup();
  }
});

test('migration 18 (signing formats and endpoint auth) upgrades a PostgreSQL database in place', async () => {
  const server = await useTestPostgres('migration18');
  try {
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    await upgradeTo18(db, 'postgres', postgresStore({ connectionString: server.url, maxConnections: 2 }));
  } finally {
    await server.close();
  }
}, 60_000);

/**
 * Migration 21 (ordered delivery per subject) on a database as 20 left it, on both dialects: the
 * webhook and the delivery written before it read as they were (`ordering: 'none'`, the delivery
 * due and claimed as before); set to per-subject, the webhook's next events of one user queue,
 * and a success releases the next.
 */
async function orderedAfterUpgrade(store: ReturnType<typeof sqliteStore> | ReturnType<typeof postgresStore>) {
  await store.migrate(10);
  const versions = (await store.kysely.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version));
  expect(versions.sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
  expect(await store.getWebhook('default', 'webhook_1')).toMatchObject({ ordering: 'none' });
  const old = await store.claimDue({ now: 20, limit: 10, workerId: 'w', leaseMs: 1000 });
  expect(old.map((c) => c.delivery.id)).toEqual(['msg_old']);
  expect(old[0]!.webhook.ordering).toBe('none');
  expect(await store.updateWebhook('default', 'webhook_1', { ordering: 'per-subject' }, 21)).toMatchObject({ ordering: 'per-subject' });
  const user = (id: string, at: number) =>
    store.insertEvent(
      {
        id,
        environment: 'default',
        type: 'user.created',
        source: 'api',
        data: { user: { id: 'kp_1' } },
        eventTimestamp: at,
        createdAt: at,
      },
      { newDeliveryId: () => `msg_${id}`, subject: 'kp_1' },
    );
  expect((await user('e1', 30))[0]).toMatchObject({ nextAttemptAt: 30 });
  expect((await user('e2', 31))[0]).toMatchObject({ nextAttemptAt: null });
  const [first, ...rest] = await store.claimDue({ now: 40, limit: 10, workerId: 'w', leaseMs: 1000 });
  expect(rest).toEqual([]);
  expect(first!.delivery.id).toBe('msg_e1');
  const [result] = await store.recordAttempts([
    {
      attempt: {
        id: 'attempt_e1',
        deliveryId: 'msg_e1',
        webhookId: 'webhook_1',
        environment: 'default',
        startedAt: 41,
        durationMs: 4,
        statusCode: 200,
        errorKind: null,
        errorMessage: null,
        responseExcerpt: null,
        success: true,
      },
      workerId: 'w',
      now: 42,
      nextAttemptAt: null,
      disableAfterMs: 3_600_000,
      leaseUntil: first!.lease.until,
      ordered: true,
    },
  ]);
  expect(result?.released).toBe(true);
  expect((await store.claimDue({ now: 42, limit: 10, workerId: 'w', leaseMs: 1000 })).map((c) => c.delivery.id)).toEqual(['msg_e2']);
}

const OLD_DELIVERY = {
  id: 'msg_old',
  environment: 'default',
  webhook_id: 'webhook_1',
  event_id: 'event_old',
  status: 'pending',
  attempt_count: 0,
  next_attempt_at: 10,
  event_type: 'user.created',
  created_at: 10,
  updated_at: 10,
};
const OLD_EVENT = {
  id: 'event_old',
  environment: 'default',
  type: 'user.created',
  source: 'api',
  data: '{}',
  event_timestamp: 10,
  created_at: 10,
};

test('migration 21 (ordered delivery per subject) upgrades a SQLite file of the release before', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('before-21.db');
    const old = await migratedTo(file, 20);
    await old.insertInto('iw_webhooks').values(WEBHOOK_ROW).execute();
    await old.insertInto('iw_events').values(OLD_EVENT).execute();
    await old.insertInto('iw_deliveries').values(OLD_DELIVERY).execute();
    await old.destroy();
    const store = sqliteStore({ filename: file });
    try {
      await orderedAfterUpgrade(store);
    } finally {
      await store.close();
    }
  } finally {
    dir.cleanup();
  }
});

test('migration 21 (ordered delivery per subject) upgrades a PostgreSQL database of the release before', async () => {
  const server = await useTestPostgres('migration21');
  try {
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    const old = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    await old.schema
      .createTable('iw_migrations')
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute();
    for (const m of MIGRATIONS.filter((m) => m.version < 21)) {
      await m.up(old, 'postgres');
      await old.insertInto('iw_migrations').values({ version: m.version, name: m.name, applied_at: 1 }).execute();
    }
    await old.insertInto('iw_webhooks').values(WEBHOOK_ROW).execute();
    await old.insertInto('iw_events').values(OLD_EVENT).execute();
    await old.insertInto('iw_deliveries').values(OLD_DELIVERY).execute();
    await old.destroy();
    const store = postgresStore({ connectionString: server.url, maxConnections: 2 });
    try {
      await orderedAfterUpgrade(store);
    } finally {
      await store.close();
    }
  } finally {
    await server.close();
  }
});
