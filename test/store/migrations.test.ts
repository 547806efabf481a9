import Database from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BASELINE, functionHash, MIGRATIONS, type Migration, runMigrations } from '../../adapters/kysely/migrations.js';
import type { EngineTables } from '../../adapters/kysely/schema.js';
import { STORED_FUNCTIONS } from '../../adapters/postgres/functions/index.js';
import { migratePostgres, postgresStore } from '../../adapters/postgres/index.js';
import { lockMigrations } from '../../adapters/postgres/locks.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { tempDir } from '../helpers/http.js';
import { adminQuery, createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
import { webhook } from './conformance.js';

/**
 * One baseline schema, then migrations: a new database gets the baseline in one transaction;
 * later migrations (26 on) upgrade a database in place, once, however many processes start at
 * once; a pre-release database is refused with what to do; PostgreSQL's stored functions are
 * applied again when their text changes.
 */
const T0 = Date.parse('2026-12-07T00:00:00.000Z');

/** A later migration, as a release after the first would add one: a column and its index, filled in for the rows before it. */
const LATER: Migration = {
  version: BASELINE.version + 1,
  name: 'webhook labels',
  async up(db) {
    await db.schema.alterTable('iw_webhooks').addColumn('label', 'text').execute();
    await db.updateTable('iw_webhooks').set({ label: sql`name` }).execute();
    await db.schema.createIndex('iw_webhooks_label').on('iw_webhooks').column('label').execute();
  },
};

const versionsOf = async (db: Kysely<any>) =>
  (await db.selectFrom('iw_migrations').select('version').orderBy('version').execute()).map((r) => Number(r.version));

describe('SQLite', () => {
  test('a new file gets the baseline in one transaction; migrating again changes nothing', async () => {
    const dir = tempDir();
    try {
      const store = sqliteStore({ filename: dir.file('new.db') });
      await store.migrate(T0);
      expect(await versionsOf(store.kysely)).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
      const tables = await sql<{
        name: string;
      }>`select name from sqlite_master where type = 'table' and name like 'iw_%' order by name`.execute(store.kysely);
      expect(tables.rows.map((r) => r.name)).toEqual([
        'iw_attempts',
        'iw_dashboard_grants',
        'iw_deliveries',
        'iw_events',
        'iw_hour_packs',
        'iw_migrations',
        'iw_notices',
        'iw_ordered',
        'iw_paced',
        'iw_webhook_hours',
        'iw_webhooks',
      ]);
      await store.migrate(T0 + 1);
      expect(await versionsOf(store.kysely)).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
      await store.close();
    } finally {
      dir.cleanup();
    }
  });

  test('a later migration upgrades a file at the baseline in place, its rows kept and filled in', async () => {
    const dir = tempDir();
    try {
      const store = sqliteStore({ filename: dir.file('upgrade.db') });
      await store.migrate(T0);
      const hook = webhook('env_a', { name: 'CRM' });
      await store.createWebhook(hook, { maxWebhooks: null });
      const db = store.kysely as unknown as Kysely<EngineTables>;
      expect(await runMigrations(db, 'sqlite', T0 + 1, { migrations: [LATER] })).toEqual([LATER.version]);
      expect(await runMigrations(db, 'sqlite', T0 + 2, { migrations: [LATER] })).toEqual([]);
      expect(await versionsOf(store.kysely)).toEqual([BASELINE.version, LATER.version]);
      const row = await store.kysely
        .selectFrom('iw_webhooks' as never)
        .selectAll()
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ id: hook.id, name: 'CRM', label: 'CRM' });
      // The store goes on working on the upgraded table.
      expect(await store.getWebhook('env_a', hook.id)).toMatchObject({ id: hook.id, name: 'CRM' });
      await store.close();
    } finally {
      dir.cleanup();
    }
  });

  test('a pre-release file (a ledger before the baseline) is refused with what to do, and nothing is written', async () => {
    const dir = tempDir();
    try {
      const file = dir.file('old.db');
      const old = new Database(file);
      old.exec('create table iw_migrations (version integer primary key, name text not null, applied_at bigint not null)');
      old.exec("insert into iw_migrations values (1, 'initial', 1), (2, 'delivery log', 1)");
      old.close();
      const store = sqliteStore({ filename: file });
      await expect(store.migrate(T0)).rejects.toThrow(
        /pre-release build \(migrations 1, 2\).*Drop its iw_\* tables, or use a new database/,
      );
      const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(store.kysely);
      expect(tables.rows.map((r) => r.name)).toEqual(['iw_migrations']);
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
      expect(await versionsOf(store.kysely)).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
      await store.close();
      other.close();
    } finally {
      dir.cleanup();
    }
  });
});

describe('PostgreSQL', () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await useTestPostgres('migrations');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  async function schema() {
    const s = await createSchema(server.url, 'mig');
    const stores: Array<ReturnType<typeof postgresStore>> = [];
    const open = (autoMigrate = true) => {
      const store = postgresStore({ connectionString: s.url, autoMigrate, notifications: false, maxConnections: 2 });
      stores.push(store);
      return store;
    };
    return {
      url: s.url,
      open,
      async close() {
        for (const store of stores) await store.close();
        await s.drop();
      },
    };
  }

  test('several processes upgrading one database at once: the baseline, then a later migration, each applied once, under the lock', async () => {
    const s = await schema();
    try {
      const stores = Array.from({ length: 4 }, () => s.open());
      await Promise.all(stores.map((store) => store.migrate(T0)));
      const { rows } = await adminQuery(s.url, 'select version from iw_migrations order by version');
      expect(rows.map((r) => r.version)).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
      const hook = webhook('env_a', { name: 'CRM' });
      await stores[0]!.createWebhook(hook, { maxWebhooks: null });
      const applied = await Promise.all(
        stores.map((store) =>
          runMigrations(store.kysely as unknown as Kysely<EngineTables>, 'postgres', T0 + 1, {
            guard: lockMigrations,
            functions: STORED_FUNCTIONS,
            migrations: [LATER],
          }),
        ),
      );
      expect(applied.flat()).toEqual([LATER.version]);
      expect((await adminQuery(s.url, 'select id, label from iw_webhooks')).rows).toEqual([{ id: hook.id, label: 'CRM' }]);
      expect(await stores[1]!.getWebhook('env_a', hook.id)).toMatchObject({ name: 'CRM' });
    } finally {
      await s.close();
    }
  });

  test('a stored function whose text changed is applied again (and autoMigrate: false says so until it is)', async () => {
    const s = await schema();
    try {
      expect(await migratePostgres({ connectionString: s.url })).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
      const recorded = await adminQuery(s.url, 'select name, hash from iw_functions order by name');
      expect(recorded.rows).toEqual(
        STORED_FUNCTIONS.map((f) => ({ name: f.name, hash: functionHash(f) })).sort((a, b) => a.name.localeCompare(b.name)),
      );
      // As after an upgrade whose tally's text differs from the one in the database.
      await adminQuery(s.url, "update iw_functions set hash = 'an earlier text' where name = 'iw_tally'");
      await adminQuery(s.url, 'drop function iw_tally');
      const strict = s.open(false);
      await expect(strict.migrate(T0)).rejects.toThrow(/autoMigrate is false; run migratePostgres.*\(missing: function iw_tally\)/);
      // The next start applies it (nothing else), and the check passes.
      expect(await migratePostgres({ connectionString: s.url })).toEqual([]);
      const tally = STORED_FUNCTIONS.find((f) => f.name === 'iw_tally')!;
      expect((await adminQuery(s.url, "select hash from iw_functions where name = 'iw_tally'")).rows).toEqual([
        { hash: functionHash(tally) },
      ]);
      expect((await adminQuery(s.url, "select count(*)::int as n from pg_proc where proname = 'iw_tally'")).rows).toEqual([{ n: 1 }]);
      await strict.migrate(T0 + 1);
    } finally {
      await s.close();
    }
  });

  test('a pre-release database is refused with what to do, and nothing is written', async () => {
    const s = await schema();
    try {
      await adminQuery(s.url, 'create table iw_migrations (version integer primary key, name text not null, applied_at bigint not null)');
      await adminQuery(s.url, "insert into iw_migrations values (1, 'initial', 1), (24, 'packs', 1)");
      await expect(migratePostgres({ connectionString: s.url })).rejects.toThrow(/pre-release build \(migrations 1, 24\)/);
      const { rows } = await adminQuery(
        s.url,
        "select count(*)::int as n from pg_tables where schemaname = current_schema() and tablename like 'iw_%'",
      );
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await s.close();
    }
  });
});
