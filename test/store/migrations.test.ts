import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import { MIGRATIONS } from '../../adapters/kysely/migrations.js';
import { SqliteEngineDialect, type SqliteDatabase } from '../../adapters/sqlite/driver.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { tempDir } from '../helpers/http.js';

/** A database written by an earlier release upgrades in place, its rows filled in for what came later. */
test('migration 2 (delivery log) fills event_type and last_error on deliveries written before it', async () => {
  const dir = tempDir();
  try {
    const file = dir.file('old.db');
    // The schema as release 1 left it, with a delivery that failed once.
    const db = new Database(file) as unknown as SqliteDatabase;
    const old = new Kysely<any>({ dialect: new SqliteEngineDialect(db, true) });
    await MIGRATIONS[0]!.up(old, 'sqlite');
    await old.schema
      .createTable('iw_migrations')
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text')
      .addColumn('applied_at', 'bigint')
      .execute();
    await old.insertInto('iw_migrations').values({ version: 1, name: 'initial', applied_at: 1 }).execute();
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
