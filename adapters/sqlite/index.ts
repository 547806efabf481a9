import { Kysely } from 'kysely';
import { loadDriver } from '../driver.js';
import { onlySuccesses } from '../kysely/outcomes.js';
import type { EngineTables } from '../kysely/schema.js';
import { KyselyStore, type StoreDialect } from '../kysely/store.js';
import { startCheckpoints } from './checkpoint.js';
import { claimDue } from './claim.js';
import { type SqliteDatabase, SqliteEngineDialect } from './driver.js';
import { recordSuccesses } from './record.js';
import { isTransient } from './transient.js';

export type { SqliteDatabase } from './driver.js';

export interface SqliteStoreOptions {
  /** Path of the database file (created if missing). `':memory:'` works for throwaway use. */
  filename?: string;
  /** An open better-sqlite3 database the host owns; we never close it. */
  database?: SqliteDatabase;
  /** How long a writer waits for another process's lock before failing, in milliseconds. Default 5 s. */
  busyTimeoutMs?: number;
  /**
   * On a database the store opens itself, WAL checkpoints run this often on a thread of their own
   * (a worker with its own connection to the file) instead of inside whichever commit crosses
   * SQLite's 1000-page mark: a checkpoint copies pages and syncs the file, milliseconds that would
   * otherwise stall the event loop or land in a random emit or claim. 0 keeps SQLite's automatic
   * checkpoints. Default one second. A database the host passes in is left as it is.
   */
  checkpointIntervalMs?: number;
  /**
   * Background trouble that no call of yours sees (the checkpoint thread failing to start or
   * dying, after which checkpoints run on the main thread). Default: console.warn.
   */
  onError?: (message: string, error: unknown) => void;
}

/**
 * The embedded default store: a SQLite file through better-sqlite3 (WAL mode). Several host
 * processes may share one file; they queue on SQLite's write lock.
 *
 * @example
 * ```ts
 * const hooks = createWebhooks({ store: sqliteStore({ filename: 'webhooks.db' }), keys });
 * ```
 */
export function sqliteStore(options: SqliteStoreOptions): KyselyStore {
  if (typeof options !== 'object' || options === null) throw new TypeError('sqliteStore: options are required');
  const { filename, database } = options;
  if ((filename === undefined) === (database === undefined)) throw new TypeError('sqliteStore: pass exactly one of filename or database');
  if (filename !== undefined && (typeof filename !== 'string' || filename.length === 0))
    throw new TypeError('sqliteStore: filename must be a non-empty string');
  if (database !== undefined && typeof database.prepare !== 'function')
    throw new TypeError('sqliteStore: database must be a better-sqlite3 Database');
  const busy = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busy) || busy < 0) throw new TypeError('sqliteStore: busyTimeoutMs must be a non-negative integer');
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new TypeError('sqliteStore: onError must be a function');

  const db: SqliteDatabase =
    database ?? new (loadDriver<new (filename: string) => SqliteDatabase>('better-sqlite3', 'sqliteStore'))(filename!);
  db.pragma(`busy_timeout = ${busy}`);
  if (filename !== ':memory:') db.pragma('journal_mode = WAL');
  // WAL + NORMAL is durable across process crashes (only an OS crash can drop the last commits).
  db.pragma('synchronous = NORMAL');

  const checkpointMs = options.checkpointIntervalMs ?? 1000;
  if (!Number.isInteger(checkpointMs) || checkpointMs < 0)
    throw new TypeError('sqliteStore: checkpointIntervalMs must be a non-negative integer');
  const onError = options.onError ?? warn;
  let closed = false;
  const report = (message: string, error: unknown) => closed || onError(message, error);
  const checkpoints =
    database === undefined && filename !== ':memory:' && checkpointMs > 0
      ? startCheckpoints(db, filename!, checkpointMs, busy, report)
      : null;

  const kysely = new Kysely<EngineTables>({ dialect: new SqliteEngineDialect(db, database === undefined) });
  const dialect: StoreDialect = {
    name: 'sqlite',
    rowLocks: false,
    claim: claimDue,
    isTransient,
    async lockEnvironment() {
      // BEGIN IMMEDIATE already holds the database's single write lock.
    },
    recordGroup: { takes: onlySuccesses, record: (_kysely, batch) => recordSuccesses(db, batch) },
    async migrate(_k, run) {
      // Another process migrating the same file holds its write lock for as long as one
      // migration takes, which can outlast busy_timeout (migration 14 rewrites iw_deliveries: 5 s
      // for a million deliveries). Wait for it, up to MIGRATION_WAIT_MS; each try reads the
      // ledger again, so what the other process applied meanwhile is skipped.
      const giveUpAt = performance.now() + MIGRATION_WAIT_MS;
      for (;;) {
        try {
          await run();
          return;
        } catch (error) {
          if (!isTransient(error) || performance.now() > giveUpAt) throw error;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    async close() {
      closed = true;
      await checkpoints?.stop();
      await kysely.destroy();
    },
  };
  return new KyselyStore(kysely, dialect);
}

/**
 * How long migrating waits for another process's migrations on the same file (see `migrate`
 * above): ten minutes, beyond any migration of ours on a file of tens of millions of deliveries.
 */
const MIGRATION_WAIT_MS = 600_000;

/** The default `onError`, as postgresStore's: one line on the console. */
function warn(message: string, error: unknown): void {
  console.warn(`[identity-webhooks] ${message}:`, error instanceof Error ? error.message : error);
}
