import { Kysely, PostgresDialect } from 'kysely';
import { systemClock } from '../../src/clock.js';
import { refuseUnknown } from '../../src/unknown-options.js';
import { loadDriver } from '../driver.js';
import { onlySuccesses } from '../kysely/outcomes.js';
import type { EngineTables } from '../kysely/schema.js';
import { KyselyStore, type StoreDialect } from '../kysely/store.js';
import { claimDue } from './claim.js';
import { oneStatementEmit } from './emit.js';
import { STORED_FUNCTIONS } from './functions/index.js';
import { lockEnvironment, lockMigrations, tryLockRetention } from './locks.js';
import { assertMigrated, migrateUnderLock } from './migrate.js';
import { notifyWake, WakeListener } from './notify.js';
import type { Pool, PoolClient } from './pool.js';
import { recordSuccesses } from './record.js';
import { isTransient } from './transient.js';

export { WAKE_CHANNEL } from './notify.js';

export interface PostgresStoreOptions {
  /** `postgres://user:pass@host:5432/db`; the store opens (and on close ends) its own pool. */
  connectionString?: string;
  /** A `pg` Pool the host owns; we never end it. One of its connections is held for LISTEN (unless `directConnectionString`). */
  pool?: Pool;
  /**
   * Behind a transaction-mode pooler (PgBouncer, Supabase's or Neon's pooled URL): a direct
   * (session) connection string to the same database, used only for the one connection that
   * LISTENs for wake-ups. Everything else goes through `connectionString` (or `pool`). Without
   * it, behind such a pooler, set `notifications: false`.
   */
  directConnectionString?: string;
  /** Size of the pool we open from `connectionString`. Default 10. */
  maxConnections?: number;
  /**
   * LISTEN/NOTIFY wake-ups between processes. Default true. Behind a transaction-mode pooler
   * (PgBouncer), where LISTEN does not work, give `directConnectionString` or turn this off:
   * polling still delivers, one poll later.
   */
  notifications?: boolean;
  /**
   * Run migrations when the engine starts (default). With false the store only checks that the
   * schema is current, for runtime roles without DDL rights: run {@link migratePostgres} ahead of deploy.
   */
  autoMigrate?: boolean;
  /** Background trouble (an idle connection lost, the listener reconnecting). Default: console.warn. */
  onError?: (message: string, error: unknown) => void;
}

/**
 * PostgreSQL store: N host processes (or machines) on one database share the work with no
 * coordinator: claims take `FOR UPDATE SKIP LOCKED` leases, and LISTEN/NOTIFY wakes the others
 * within milliseconds of an emit. Connection loss (PostgreSQL restarting) is survived: the pool
 * replaces dead connections, the listener reconnects, and the scheduler's transient retry covers
 * the gap.
 *
 * @example
 * ```ts
 * import { createWebhooks } from 'identity-webhooks';
 * import { postgresStore } from 'identity-webhooks/postgres';
 *
 * const store = postgresStore({ connectionString: process.env.DATABASE_URL! });
 * const hooks = createWebhooks({ store, keys, issuer });
 * await hooks.start(); // migrates (once, under an advisory lock), then delivers
 * // Transactional outbox with the store's Kysely (or the host's own, on the same database):
 * await store.kysely.transaction().execute((trx) => hooks.emit(event, { transaction: trx }));
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): KyselyStore {
  const o = validate(options);
  const owned = o.pool === undefined;
  // keepAlive and a connect deadline: a database behind a dead network fails fast (and p-retry
  // takes over) instead of hanging a claim for the OS's two-minute TCP timeout.
  const pool: Pool =
    o.pool ??
    new (loadDriver<{ Pool: new (config: object) => Pool }>('pg', 'postgresStore').Pool)({
      connectionString: o.connectionString,
      max: o.maxConnections,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      application_name: 'identity-webhooks',
    });

  let closed = false;
  const report = (message: string, error: unknown) => closed || o.onError(message, error);
  // Without a listener an idle connection killed by a restart would crash the host ('error' event).
  const onPoolError = (error: Error) => report('postgres: an idle connection was lost; the pool replaces it', error);
  // A checked-out connection killed between two queries emits 'error' too; the next query on it
  // fails and p-retry takes over, so nothing needs doing here beyond not crashing.
  const ignore = () => {};
  const guarded = new Set<PoolClient>(); // to take the guard off a host's connections on close
  const onConnect = (client: PoolClient) => {
    client.on('error', ignore);
    if (owned) return;
    guarded.add(client);
    client.once('end', () => guarded.delete(client));
  };
  pool.on('error', onPoolError);
  pool.on('connect', onConnect);

  // A host's pool is lent, not given: Kysely must not end it.
  const lent = { connect: () => pool.connect(), end: async () => {} };
  const kysely = new Kysely<EngineTables>({ dialect: new PostgresDialect({ pool: owned ? pool : lent }) });
  const listeners = new Set<WakeListener>();
  // The listener's own small pool on the direct URL (a pooler's server connection is not ours
  // between transactions, so LISTEN there hears nothing); made at the first subscribe.
  let direct: Pool | undefined;
  const listenPool = (): Pool => {
    if (o.directConnectionString === undefined) return pool;
    if (!direct) {
      direct = new (loadDriver<{ Pool: new (config: object) => Pool }>('pg', 'postgresStore').Pool)({
        connectionString: o.directConnectionString,
        max: 2,
        keepAlive: true,
        connectionTimeoutMillis: 10_000,
        application_name: 'identity-webhooks',
      });
      direct.on('error', onPoolError);
      direct.on('connect', (client) => client.on('error', ignore));
    }
    return direct;
  };

  const dialect: StoreDialect = {
    name: 'postgres',
    rowLocks: true,
    claim: claimDue,
    isTransient,
    lockEnvironment,
    tryLockRetention,
    insertEvent: oneStatementEmit({ notify: o.notifications }),
    recordGroup: { takes: onlySuccesses, record: (db, batch) => recordSuccesses(db, batch, o.notifications), orders: true },
    async migrate(db, run) {
      // Each migration's transaction takes the migrations lock first (`migrationGuard`).
      if (o.autoMigrate) await run();
      else await assertMigrated(db);
    },
    migrationGuard: lockMigrations,
    storedFunctions: STORED_FUNCTIONS,
    ...(o.notifications
      ? {
          notify: notifyWake,
          async subscribe(onWake: () => void, self?: string) {
            const from = listenPool();
            const listener = new WakeListener(() => from.connect(), onWake, report, self);
            listeners.add(listener);
            listener.start();
            return async () => {
              listeners.delete(listener);
              await listener.close();
            };
          },
        }
      : {}),
    async close() {
      // Listeners hold pool connections: give them back before the pool ends.
      await Promise.all([...listeners].map((l) => l.close()));
      listeners.clear();
      await kysely.destroy();
      await direct?.end();
      closed = true;
      // Our own pool keeps its listeners: pool.end() resolves before its sockets are closed, and
      // a connection killed in that window would still raise 'error'. A host's pool gets its
      // listeners back as they were.
      if (!owned) {
        pool.off('error', onPoolError);
        pool.off('connect', onConnect);
        for (const client of guarded) client.off('error', ignore);
        guarded.clear();
      }
    },
  };
  return new KyselyStore(kysely, dialect);
}

/**
 * Applies the schema ahead of deploy (a release step, or for hosts that run with
 * `autoMigrate: false`). Safe to run while older processes are serving. Returns the versions applied.
 *
 * @example
 * ```sh
 * node -e "import('identity-webhooks/postgres').then(m => m.migratePostgres({ connectionString: process.env.DATABASE_URL })).then(v => console.log('applied', v))"
 * ```
 */
export async function migratePostgres(options: { connectionString?: string; pool?: Pool; now?: number }): Promise<number[]> {
  // Works through a transaction-mode pooler too: the lock is taken inside each migration's transaction.
  const { connectionString, pool } = options ?? {};
  const store = postgresStore({ ...(pool ? { pool } : { connectionString }), notifications: false });
  try {
    return await migrateUnderLock(store.kysely, options.now ?? systemClock.now());
  } finally {
    await store.close();
  }
}

function validate(options: PostgresStoreOptions) {
  if (typeof options !== 'object' || options === null) throw new TypeError('postgresStore: options are required');
  refuseUnknown('postgresStore', options, [
    'connectionString',
    'pool',
    'directConnectionString',
    'maxConnections',
    'notifications',
    'autoMigrate',
    'onError',
  ]);
  const { connectionString, pool } = options;
  if ((connectionString === undefined) === (pool === undefined))
    throw new TypeError('postgresStore: pass exactly one of connectionString or pool');
  if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString.length === 0)) {
    throw new TypeError('postgresStore: connectionString must be a non-empty string');
  }
  if (pool !== undefined && (typeof pool?.connect !== 'function' || typeof pool?.on !== 'function'))
    throw new TypeError('postgresStore: pool must be a pg Pool');
  const max = options.maxConnections ?? 10;
  if (!Number.isInteger(max) || max < 2) throw new TypeError('postgresStore: maxConnections must be an integer >= 2');
  if (options.maxConnections !== undefined && pool !== undefined)
    throw new TypeError('postgresStore: maxConnections applies only with connectionString');
  const flag = (v: unknown, name: string) => {
    if (v !== undefined && typeof v !== 'boolean') throw new TypeError(`postgresStore: ${name} must be a boolean`);
    return v !== false;
  };
  const direct = options.directConnectionString;
  if (direct !== undefined && (typeof direct !== 'string' || direct.length === 0))
    throw new TypeError('postgresStore: directConnectionString must be a non-empty string');
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new TypeError('postgresStore: onError must be a function');
  return Object.freeze({
    connectionString,
    pool,
    directConnectionString: direct,
    maxConnections: max,
    notifications: flag(options.notifications, 'notifications'),
    autoMigrate: flag(options.autoMigrate, 'autoMigrate'),
    onError:
      options.onError ??
      ((message: string, error: unknown) =>
        console.warn(`[identity-webhooks] ${message}:`, error instanceof Error ? error.message : error)),
  });
}
