import type { Kysely } from 'kysely';
import type { DeliveryRecord, EventRecord } from '../../src/model.js';
import type { InsertEventOptions, Store } from '../../src/store.js';
import type { EngineTables } from '../kysely/schema.js';
import { type HostTransaction, KyselyStore, type StoreDialect } from '../kysely/store.js';
import { handleOf, holdQueueAWhile, hostTransactionEnded, inHostTransaction, type SqliteDatabase, whenUnlocked } from './driver.js';
import { transactionRequired, writeEvent } from './emit.js';

/**
 * What `emit(event, { transaction })` can join on SQLite: the host's Kysely transaction (or
 * Kysely instance) on the same database, or the better-sqlite3 `Database` itself while the host
 * is inside a transaction on it (`database.transaction(() => …)`, or between its own `BEGIN` and
 * `COMMIT`).
 */
export type SqliteTransaction = HostTransaction | SqliteDatabase;

/**
 * The Kysely store with SQLite's `insertEvent`: synchronous statements on one handle
 * (`emit.ts`), which is what lets a host emit inside its own better-sqlite3 transaction, and
 * what refuses at once an emit that could only wait for itself.
 */
export class SqliteStore extends KyselyStore implements Store<SqliteTransaction> {
  constructor(
    kysely: Kysely<EngineTables>,
    dialect: StoreDialect,
    /** The handle, the store's own or the host's. */
    private readonly database: SqliteDatabase,
    /** True when the host passed the handle in (and may run its own transactions on it). */
    private readonly shared: boolean,
  ) {
    super(kysely, dialect);
  }

  /**
   * - `transaction` a Kysely transaction: the shared path, on it; the host's Kysely instance: the
   *   same, in a transaction of that Kysely (so an emit from outside the host's transactions
   *   queues behind them on the host's own connection queue instead of being refused).
   * - `transaction` a better-sqlite3 handle: now, synchronously, in the host's transaction on it
   *   (refused when none is open: the rows would commit on their own, which is not what the
   *   host asked for; typically an emit that ran after a synchronous transaction had returned).
   * - no `transaction`: on the store's own turn, after any transaction of the host's on a shared
   *   handle. But when the host's transaction is open at the call, the emit is refused at once
   *   (`ERR_TRANSACTION_REQUIRED`): one connection has one transaction, so if this emit is
   *   inside the host's, waiting would wait for a COMMIT that is waiting for the emit. The same
   *   mistake inside `store.kysely.transaction()` cannot be told from an emit queued behind it
   *   (both wait for the store's queue): it fails after `busyTimeoutMs`.
   */
  override async insertEvent(event: EventRecord, options: InsertEventOptions<SqliteTransaction>): Promise<DeliveryRecord[]> {
    const transaction = options.transaction;
    if (options.webhookIds !== undefined || (transaction !== undefined && !isDatabase(transaction))) {
      // The host's Kysely itself, not a transaction of it: in a transaction of its own, all or
      // nothing, queued behind the host's other transactions on its connection.
      if (isKyselyInstance(transaction)) {
        return transaction.transaction().execute((trx) => super.insertEvent(event, { ...options, transaction: trx }));
      }
      return super.insertEvent(event, options as InsertEventOptions<HostTransaction>);
    }
    if (transaction !== undefined) {
      if (!transaction.inTransaction) {
        throw transactionRequired(
          'emit: options.transaction is a better-sqlite3 database that is not inside a transaction; call emit inside ' +
            'database.transaction(() => …) before it returns, or between your BEGIN and COMMIT (or leave transaction out)',
        );
      }
      return writeEvent(transaction, event, options);
    }
    if (this.shared && inHostTransaction(this.database)) {
      throw transactionRequired(
        'emit: the shared SQLite database is inside a transaction of yours, and one connection has one transaction. If this ' +
          'emit belongs to it, pass it as { transaction } (your Kysely transaction, or the better-sqlite3 database inside ' +
          'database.transaction()); if not, emit after it ends, or pass your Kysely instance as { transaction } to queue behind it',
      );
    }
    const release = await holdQueueAWhile(this.database);
    if (!release) {
      const waited = `emit: the store's connection stayed busy for more than ${handleOf(this.database).waitMs} ms (busyTimeoutMs)`;
      // Ours never stay open across other code: an open one is the host's, through store.kysely.
      if (this.database.inTransaction) {
        throw transactionRequired(
          `${waited}, inside a transaction of yours through store.kysely. If this emit belongs to it, pass it as ` +
            '{ transaction: trx }: without it the emit waits for that transaction, which waits for the emit',
        );
      }
      throw Object.assign(new Error(`database is locked: ${waited}`), { code: 'SQLITE_BUSY' });
    }
    try {
      // The host may have begun since the call (an emit made outside its transaction): wait,
      // then write with nothing awaited between the last look and the statements.
      while (inHostTransaction(this.database)) await hostTransactionEnded(this.database);
      const written = whenUnlocked(this.database, () => writeEvent(this.database, event, options));
      return written instanceof Promise ? await written : written;
    } finally {
      release();
    }
  }
}

function isKyselyInstance(value: SqliteTransaction | undefined): value is Kysely<any> {
  const k = value as Partial<Kysely<any>> | undefined;
  return typeof k?.transaction === 'function' && typeof k.selectFrom === 'function' && k.isTransaction === false;
}

function isDatabase(value: SqliteTransaction): value is SqliteDatabase {
  return (
    typeof (value as Partial<SqliteDatabase>).prepare === 'function' && typeof (value as Partial<Kysely<any>>).selectFrom !== 'function'
  );
}
