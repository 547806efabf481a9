import { loadDriver } from '../driver.js';
import { Kysely } from 'kysely';
import { KyselyStore, type SqlFlavor } from '../kysely/store.js';
import type { EngineTables } from '../kysely/schema.js';
import { claimDue } from './claim.js';
import { isTransient } from './transient.js';
import { SqliteEngineDialect, type SqliteDatabase } from './driver.js';

export type { SqliteDatabase } from './driver.js';

export interface SqliteStoreOptions {
  /** Path of the database file (created if missing). `':memory:'` works for throwaway use. */
  filename?: string;
  /** An open better-sqlite3 database the host owns; we never close it. */
  database?: SqliteDatabase;
  /** How long a writer waits for another process's lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * On a database the store opens itself, WAL checkpoints run from a timer this often instead
   * of inside whichever commit crosses SQLite's 1000-page mark (a checkpoint syncs the file:
   * milliseconds that would otherwise land in a random emit or claim). 0 keeps SQLite's
   * automatic checkpoints. Default 1000 ms. A database the host passes in is left as it is.
   */
  checkpointIntervalMs?: number;
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

  const db: SqliteDatabase =
    database ?? new (loadDriver<new (filename: string) => SqliteDatabase>('better-sqlite3', 'sqliteStore'))(filename!);
  db.pragma(`busy_timeout = ${busy}`);
  if (filename !== ':memory:') db.pragma('journal_mode = WAL');
  // WAL + NORMAL is durable across process crashes (only an OS crash can drop the last commits).
  db.pragma('synchronous = NORMAL');

  const checkpointMs = options.checkpointIntervalMs ?? 1000;
  if (!Number.isInteger(checkpointMs) || checkpointMs < 0)
    throw new TypeError('sqliteStore: checkpointIntervalMs must be a non-negative integer');
  const checkpoints =
    database === undefined && filename !== ':memory:' && checkpointMs > 0 ? backgroundCheckpoints(db, checkpointMs) : null;

  const kysely = new Kysely<EngineTables>({ dialect: new SqliteEngineDialect(db, database === undefined) });
  const flavor: SqlFlavor = {
    dialect: 'sqlite',
    rowLocks: false,
    claim: claimDue,
    isTransient,
    async lockEnvironment() {
      // BEGIN IMMEDIATE already holds the database's single write lock.
    },
    async migrate(_k, run) {
      await run();
    },
    async close() {
      if (checkpoints) clearInterval(checkpoints);
      await kysely.destroy();
    },
  };
  return new KyselyStore(kysely, flavor);
}

/**
 * PASSIVE checkpoints never wait for readers or writers, so the timer cannot stall on another
 * process; a round that finds our own transaction open (between two awaited statements) skips.
 */
function backgroundCheckpoints(db: SqliteDatabase, everyMs: number): NodeJS.Timeout {
  db.pragma('wal_autocheckpoint = 0');
  // After a checkpoint resets the WAL, SQLite truncates the file to this size: without it the WAL
  // keeps its largest size ever (seen: 50 MB beside a 6 MB database after 90 simulated days).
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  const checkpoint = (triesLeft: number) => {
    if (!db.open) return;
    // Our own transaction is open between two awaited statements: look again in a moment rather
    // than wait a whole interval (under steady load a tick can keep landing inside one).
    if (db.inTransaction) {
      if (triesLeft > 0) setTimeout(() => checkpoint(triesLeft - 1), 2).unref();
      return;
    }
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or locked: the next round tries again; the WAL only grows meanwhile.
    }
  };
  const timer = setInterval(() => checkpoint(20), everyMs);
  timer.unref();
  return timer;
}

/** Bytes the WAL file is truncated to after a checkpoint resets it. */
const WAL_SIZE_LIMIT = 16 * 1024 * 1024;
