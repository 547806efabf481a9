import { WebhooksError } from '../../src/errors.js';
import type { DeliveryRecord, EventRecord } from '../../src/model.js';
import type { InsertEventOptions } from '../../src/store.js';
import { insertEventOnceText, insertRowsText, pendingDelivery, subscribes, targetsText } from '../kysely/emit.js';
import { isOrdered } from '../kysely/ordering.js';
import { eventInsertParams, fromDelivery, toDelivery } from '../kysely/rows.js';
import type { DeliveryRow } from '../kysely/schema.js';
import type { SqliteDatabase, SqliteStatement } from './driver.js';

/**
 * `insertEvent` on SQLite as synchronous statements on one handle: the event, and a pending
 * delivery per enabled webhook of its environment subscribed to its type, all or nothing. The
 * shared path (`KyselyStore.insertEvent`) does the same through Kysely, a statement per await;
 * here nothing is awaited, which is what lets it run:
 *
 * - inside a host's synchronous `database.transaction(() => …)`, when the host passes that
 *   handle as `transaction` (the statements run before `emit` returns its promise, so before
 *   the host's transaction commits). Inside a transaction the writes go in a savepoint: a
 *   failure takes back only ours, leaves the host's transaction as it was, and rejects;
 * - on the store's own turn otherwise, in a `BEGIN IMMEDIATE` transaction that no other code
 *   can see half done.
 *
 * Idempotent by event id, as the shared path: an event already stored writes nothing and
 * answers with its deliveries.
 */
export function writeEvent(db: SqliteDatabase, event: EventRecord, options: InsertEventOptions<unknown>): DeliveryRecord[] {
  const s = statementsOf(db);
  const nested = db.inTransaction;
  (nested ? s.savepoint : s.begin).run([]);
  try {
    const deliveries = write(s, event, options);
    (nested ? s.release : s.commit).run([]);
    return deliveries;
  } catch (error) {
    if (db.inTransaction) {
      if (nested) {
        s.rollbackTo.run([]);
        s.release.run([]);
      } else s.rollback.run([]);
    }
    throw error;
  }
}

function write(s: Statements, event: EventRecord, options: InsertEventOptions<unknown>): DeliveryRecord[] {
  const inserted = s.insertEvent.run(eventInsertParams(event, options)).changes;
  if (inserted === 0) return (s.deliveriesOf.all([event.id]) as DeliveryRow[]).map(toDelivery);
  const deliveries: DeliveryRecord[] = [];
  const subject = options.subject ?? null;
  for (const hook of s.targets.all([event.environment, 'enabled']) as Array<{ id: string; event_types: string; ordering: string | null }>) {
    if (!subscribes(hook, event.type)) continue;
    const delivery = pendingDelivery(event, hook.id, options.newDeliveryId());
    // Ordered per subject (adapters/kysely/ordering.ts): the next place in the subject's queue;
    // behind another delivery, not due. This transaction holds the file's write lock.
    if (subject !== null && isOrdered(hook)) {
      const [{ last }] = s.queueLast.all([hook.id, subject]) as [{ last: number | null }];
      if (last !== null) delivery.nextAttemptAt = null;
      s.place.run([delivery.id, hook.id, subject, (last ?? 0) + 1]);
    }
    const row = fromDelivery(delivery);
    s.insertDelivery.run(DELIVERY_COLUMNS.map((c) => row[c]));
    deliveries.push(delivery);
  }
  return deliveries;
}

/**
 * The emit's refusal when it cannot be served on a shared handle: see `SqliteStore.insertEvent`.
 * A `WebhooksError` with code `ERR_TRANSACTION_REQUIRED` and field `transaction`.
 */
export function transactionRequired(message: string): WebhooksError {
  return new WebhooksError('ERR_TRANSACTION_REQUIRED', message, { field: 'transaction' });
}

/** The columns of a delivery row, in the order of the insert's placeholders. */
const DELIVERY_COLUMNS = Object.keys(fromDelivery(pendingDelivery({ id: '', createdAt: 0 } as EventRecord, '', ''))) as Array<
  keyof DeliveryRow
>;

interface Statements {
  begin: SqliteStatement;
  commit: SqliteStatement;
  rollback: SqliteStatement;
  savepoint: SqliteStatement;
  release: SqliteStatement;
  rollbackTo: SqliteStatement;
  insertEvent: SqliteStatement;
  deliveriesOf: SqliteStatement;
  targets: SqliteStatement;
  insertDelivery: SqliteStatement;
  queueLast: SqliteStatement;
  place: SqliteStatement;
}

/** Prepared once per handle, on first use (after the migrations made the tables). */
const prepared = new WeakMap<SqliteDatabase, Statements>();

/** better-sqlite3's placeholder, for the Kysely store's statement texts. */
const mark = () => '?';

function statementsOf(db: SqliteDatabase): Statements {
  let s = prepared.get(db);
  if (!s) {
    s = {
      begin: db.prepare('begin immediate'),
      commit: db.prepare('commit'),
      rollback: db.prepare('rollback'),
      savepoint: db.prepare('savepoint "iw_emit"'),
      release: db.prepare('release "iw_emit"'),
      rollbackTo: db.prepare('rollback to "iw_emit"'),
      insertEvent: db.prepare(insertEventOnceText(mark)),
      deliveriesOf: db.prepare('select * from "iw_deliveries" where "event_id" = ? order by "id"'),
      targets: db.prepare(targetsText(mark, 0)),
      insertDelivery: db.prepare(insertRowsText('iw_deliveries', DELIVERY_COLUMNS, 1, mark)),
      queueLast: db.prepare('select max("seq") as "last" from "iw_ordered" where "webhook_id" = ? and "subject" = ? and "seq" is not null'),
      place: db.prepare('insert into "iw_ordered" ("delivery_id", "webhook_id", "subject", "seq") values (?, ?, ?, ?)'),
    };
    prepared.set(db, s);
  }
  return s;
}
