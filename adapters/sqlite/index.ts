import { Kysely } from 'kysely';
import { refuseUnknown } from '../../src/unknown-options.js';
import { loadDriver } from '../driver.js';
import { onlySuccesses } from '../kysely/outcomes.js';
import type { EngineTables } from '../kysely/schema.js';
import type { StoreDialect } from '../kysely/store.js';
import { startCheckpoints } from './checkpoint.js';
import { claimDue } from './claim.js';
import { handleOf, type SqliteDatabase, SqliteEngineDialect } from './driver.js';
import { recordSuccesses } from './record.js';
import { SqliteStore } from './store.js';
import { isTransient } from './transient.js';

export type { SqliteDatabase } from './driver.js';
export { SqliteStore, type SqliteTransaction } from './store.js';

export interface SqliteStoreOptions {
  /** Path of the database file (created if missing). `':memory:'` works for throwaway use. */
  filename?: string;
  /**
   * An open better-sqlite3 database the host owns and may use for its own transactions: we never
   * close it and never change its settings (journal mode, synchronous, busy_timeout unless
   * `busyTimeoutMs` is given); a warning goes to `onError` once when it is not in WAL mode. See
   * docs/sqlite.md for what sharing it costs and how to emit inside its transactions.
   */
  database?: SqliteDatabase;
  /**
   * How long a writer waits for another connection's lock before failing, and on a shared
   * `database` how long a statement of ours waits for the host's transaction to end. Default five
   * seconds. On a database we open, the wait is on a timer (its busy_timeout is 0: SQLite's busy
   * wait would sleep on the host's thread); on one the host passed in, it is set as busy_timeout
   * only when given here (else its own stays; better-sqlite3's default is five seconds).
   */
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
   * dying, after which checkpoints run on the main thread), and, once, a `database` passed in that
   * is not in WAL mode (`error` is then undefined). Default: console.warn.
   */
  onError?: (message: string, error: unknown) => void;
}

/**
 * The embedded default store: a SQLite file through better-sqlite3. With `filename` the store
 * opens the file itself (WAL, synchronous=NORMAL, checkpoints on a thread of their own); with
 * `database` it shares the host's handle and leaves its settings alone. Several host processes
 * may share one file; they queue on SQLite's write lock. docs/sqlite.md compares the setups.
 *
 * @example
 * ```ts
 * const hooks = createWebhooks({ store: sqliteStore({ filename: 'webhooks.db' }), keys });
 * // or on the host's own handle, with events in the host's transactions:
 * const hooks = createWebhooks({ store: sqliteStore({ database }), keys });
 * let emitted;
 * database.transaction(() => {
 *   insertUser.run(user);
 *   emitted = hooks.emit(event, { transaction: database });
 * })();
 * await emitted;
 * ```
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options !== 'object' || options === null) throw new TypeError('sqliteStore: options are required');
  refuseUnknown('sqliteStore', options, ['filename', 'database', 'busyTimeoutMs', 'checkpointIntervalMs', 'onError']);
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
  handleOf(db).waitMs = busy;
  if (database === undefined) {
    db.pragma(`busy_timeout = ${busy}`); // for WAL's switch, which another process opening the file may hold up
    if (filename !== ':memory:') db.pragma('journal_mode = WAL');
    // WAL + NORMAL is durable across process crashes (only an OS crash can drop the last commits).
    db.pragma('synchronous = NORMAL');
    // From here, lock waits on timers, never in SQLite's busy handler on this thread (driver.ts, whenUnlocked).
    db.pragma('busy_timeout = 0');
    handleOf(db).pollsLock = true;
  } else if (options.busyTimeoutMs !== undefined) db.pragma(`busy_timeout = ${busy}`);

  const checkpointMs = options.checkpointIntervalMs ?? 1000;
  if (!Number.isInteger(checkpointMs) || checkpointMs < 0)
    throw new TypeError('sqliteStore: checkpointIntervalMs must be a non-negative integer');
  const onError = options.onError ?? warn;
  let closed = false;
  const report = (message: string, error: unknown) => closed || onError(message, error);
  if (database !== undefined) warnUnlessWal(database, onError);
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
    recordGroup: { takes: onlySuccesses, orders: true, record: (_kysely, batch) => recordSuccesses(db, batch) },
    async migrate(_k, run) {
      // Another process migrating the same file holds its write lock for as long as one
      // migration takes, which can outlast busy_timeout (a migration that rewrites a table of
      // millions of rows takes seconds). Wait for it, up to MIGRATION_WAIT_MS; each try reads
      // the ledger again, so what the other process applied meanwhile is skipped.
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
  return new SqliteStore(kysely, dialect, db, database !== undefined);
}

/** Handles already warned about (one warning per handle, however many stores share it). */
const warned = new WeakSet<SqliteDatabase>();

/**
 * The host's journal mode is the host's decision (it sets the durability of its own writes too),
 * so we only say what it costs, once. An in-memory database has no WAL to turn on: no warning.
 */
function warnUnlessWal(db: SqliteDatabase, onError: (message: string, error: unknown) => void): void {
  const mode = String(db.pragma('journal_mode', { simple: true })).toLowerCase();
  if (mode === 'wal' || mode === 'memory' || warned.has(db)) return;
  warned.add(db);
  try {
    onError(
      `sqliteStore: the database passed in is in journal_mode=${mode}, not WAL, and is left so. Every commit (yours and ` +
        "the engine's) then writes the file twice and syncs it, and readers wait for writers: fewer deliveries and sign-ups " +
        "per second. To use WAL, run database.pragma('journal_mode = WAL') once (the file keeps it); see docs/sqlite.md",
      undefined,
    );
  } catch {
    // A host's logger that throws must not make a working store fail to open.
  }
}

/**
 * How long migrating waits for another process's migrations on the same file (see `migrate`
 * above): ten minutes, beyond any migration of ours on a file of tens of millions of deliveries.
 */
const MIGRATION_WAIT_MS = 600_000;

/** The default `onError`, as postgresStore's: one line on the console. */
function warn(message: string, error: unknown): void {
  if (error === undefined) console.warn(`[identity-webhooks] ${message}`);
  else console.warn(`[identity-webhooks] ${message}:`, error instanceof Error ? error.message : error);
}
