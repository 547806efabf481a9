import { kyselyAdapter } from '@better-auth/kysely-adapter';
import { authFlowTestSuite, joinsTestSuite, normalTestSuite, testAdapter, transactionsTestSuite } from '@better-auth/test-utils/adapter';
import { getMigrations } from 'better-auth/db/migration';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type WatchedAdapter, watchAdapter } from '../../src/better-auth/adapter.js';
import { sharedStore, transactionTracker } from '../../src/better-auth/database.js';
import { createEmitter, watched } from '../../src/better-auth/events.js';
import { createWebhooks } from '../../src/index.js';
import { testKey } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';
import { useTestPostgres } from '../helpers/postgres.js';

/**
 * better-auth's own adapter conformance suites (@better-auth/test-utils: basic, transactions,
 * auth flow, joins) run against the adapter the plugin hands better-auth, wired as the plugin
 * wires it: better-auth's Kysely adapter on the engine store's tracked Kysely, its writes watched
 * and emitted by a running engine in their transactions. Once on SQLite, once on PostgreSQL.
 */
const DIALECT = (process.env.IW_ADAPTER_SUITE_DIALECT ?? 'both') as 'sqlite' | 'postgres' | 'both';

async function suite(dialect: 'sqlite' | 'postgres') {
  let database: Database.Database | pg.Pool;
  let close: () => Promise<void>;
  if (dialect === 'sqlite') {
    const dir = tempDir('iw-bauth-suite-');
    const db = new Database(dir.file('auth.db'));
    db.pragma('journal_mode = WAL');
    database = db;
    close = async () => {
      db.close();
      dir.cleanup();
    };
  } else {
    const server = await useTestPostgres('bauth_suites');
    const pool = new pg.Pool({ connectionString: server.url, max: 10 });
    pool.on('error', () => {});
    database = pool;
    close = async () => {
      await pool.end().catch(() => {});
      await server.close();
    };
  }
  const { store } = sharedStore(database);
  const tracker = transactionTracker(store.kysely);
  const hooks = createWebhooks({
    store,
    keys: [await testKey()],
    issuer: 'https://auth.example.com/api/auth/webhooks',
    logger: { warn: () => {}, error: (message, meta) => console.error(message, meta) },
  });
  await hooks.start();
  await hooks.webhooks.create({
    name: 'all',
    endpoint: 'https://receiver.example.com/hooks',
    eventTypes: ['user.created', 'user.updated', 'user.deleted', 'user.authenticated', 'organization.created'],
  });
  const emitter = createEmitter({
    hooks,
    environment: () => 'default',
    overrides: {},
    organizations: false,
    logger: { warn: () => {}, error: (message, meta) => console.error(message, meta) },
    currentTransaction: tracker.current,
    cause: () => ({ path: undefined, fromRequest: false, sessionUser: null }),
  });
  const { execute } = await testAdapter({
    adapter: () => (options) => {
      const adapter = kyselyAdapter(tracker.kysely as never, { type: dialect, transaction: true })(options);
      return watchAdapter(adapter as unknown as WatchedAdapter, { watches: watched, onWrite: (write) => emitter.onWrite(write) }) as never;
    },
    prefixTests: `identity-webhooks plugin (${dialect})`,
    async runMigrations(options) {
      // Each suite brings its own schema (extra fields, renamed ones): better-auth's tables are
      // made again from it, the engine's (iw_*) stay.
      await dropAuthTables(dialect, database);
      const { runMigrations } = await getMigrations({ ...options, database } as never);
      await runMigrations();
    },
    tests: [normalTestSuite(), transactionsTestSuite(), authFlowTestSuite(), joinsTestSuite()],
    async onFinish() {
      emitter.close();
      await hooks.close();
      await close();
    },
  });
  execute();
}

/** Drops every table but the engine's. */
async function dropAuthTables(dialect: 'sqlite' | 'postgres', database: Database.Database | pg.Pool) {
  if (dialect === 'sqlite') {
    const db = database as Database.Database;
    const tables = db
      .prepare(
        "select name from sqlite_master where type = 'table' and name not like 'iw\\_%' escape '\\' and name not like 'sqlite\\_%' escape '\\'",
      )
      .all() as Array<{ name: string }>;
    db.pragma('foreign_keys = OFF');
    for (const { name } of tables) db.exec(`drop table "${name}"`);
    db.pragma('foreign_keys = ON');
    return;
  }
  const pool = database as pg.Pool;
  const { rows } = await pool.query("select tablename from pg_tables where schemaname = current_schema() and tablename not like 'iw\\_%'");
  for (const { tablename } of rows) await pool.query(`drop table if exists "${tablename}" cascade`);
}

if (DIALECT !== 'postgres') await suite('sqlite');
if (DIALECT !== 'sqlite') await suite('postgres');
