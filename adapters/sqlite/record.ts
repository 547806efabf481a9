import type { AttemptRecord } from '../../src/model.js';
import { tallyHours } from '../../src/stats.js';
import type { RecordAttemptArgs, RecordResult } from '../../src/store.js';
import { ADD_HOUR_SQLITE, tallyParameters } from '../kysely/hours.js';
import { fromAttempt } from '../kysely/rows.js';
import { holdQueue, hostTransactionEnded, inHostTransaction, type SqliteDatabase, type SqliteStatement, whenUnlocked } from './driver.js';

/**
 * A group of successes recorded as one SQLite transaction of prepared statements, a row at a
 * time, run in one turn of the event loop: what the shared path (`kysely/outcomes.ts`) does in
 * six statements through Kysely (BEGIN, read the deliveries, insert the attempts, mark the
 * deliveries, clear the webhooks' health, COMMIT), each an asynchronous call of the driver, with
 * the marking written as `CASE id WHEN … THEN …` over the whole group. On SQLite a statement
 * costs no round trip, so one statement per row by primary key is the cheaper form: every step
 * is an index lookup, and the read before the write goes (the insert and the update carry its
 * conditions). PostgreSQL's counterpart is `postgres/record.ts`: the same rules as one statement.
 *
 * The rules, per attempt, in the group's order:
 * - the attempt is inserted only if its delivery still exists (one deleted meanwhile, with its
 *   webhook, is dropped) and only once (idempotent by attempt id: a transient retry after a lost
 *   reply inserts nothing);
 * - only for an attempt inserted now: the delivery is delivered if this worker still holds it
 *   (its id and the very lease the attempt was claimed under, run out or not: nobody claimed it
 *   since; pending or held), and its webhook's health is cleared if it was failing.
 * A success never disables anything, so every answer is `{ disabled: null }`.
 *
 * The transaction takes the handle's turn (the queue Kysely's statements and the checkpoint
 * thread wait in) and, on a handle the host shares, waits for the host's own transaction to end
 * rather than run inside it, as the driver does (`hostTransactionEnded`: bounded, on a timer).
 * From there to COMMIT it is synchronous: no code of the host runs while it is open.
 * `BEGIN IMMEDIATE` queues on the file's write lock like the driver's transactions; any error
 * rolls the whole group back and is thrown, for the recorder to try again or split.
 */
export async function recordSuccesses(db: SqliteDatabase, batch: readonly RecordAttemptArgs[]): Promise<RecordResult[]> {
  const results: RecordResult[] = batch.map(() => ({ disabled: null }));
  const release = await holdQueue(db);
  try {
    while (inHostTransaction(db)) await hostTransactionEnded(db);
    const s = statementsOf(db);
    // The whole transaction in one synchronous call: another connection's lock is waited for
    // between tries (whenUnlocked), and nothing else runs while ours is open.
    const recorded = whenUnlocked(db, () => {
      for (let i = 0; i < results.length; i++) results[i] = { disabled: null }; // as before a try the lock refused
      s.begin.run([]);
      try {
        const healed = new Set<string>();
        const counted: AttemptRecord[] = [];
        for (const [i, { attempt, workerId, now, leaseUntil, ordered }] of batch.entries()) {
          const r = fromAttempt(attempt);
          const inserted = s.insertAttempt.run([
            r.id,
            r.delivery_id,
            r.webhook_id,
            r.environment,
            r.started_at,
            r.duration_ms,
            r.status_code,
            r.error_kind,
            r.error_message,
            r.response_excerpt,
            r.delivery_id,
          ]).changes;
          if (inserted === 0) continue;
          counted.push(attempt);
          const marked = s.markDelivered.run([
            r.started_at,
            String(r.status_code),
            now,
            r.delivery_id,
            workerId,
            leaseUntil ?? null,
          ]).changes;
          // Ordered per subject (kysely/ordering.ts): it leaves its subject's queue, and the next
          // in it becomes due, in this transaction.
          if (ordered && marked > 0) {
            const [left] = s.leaveQueue.all([r.delivery_id]) as Array<{ webhook_id: string; subject: string }>;
            if (left && s.promoteHead.run([now, now, left.webhook_id, left.subject]).changes > 0)
              results[i] = { disabled: null, released: true };
          }
          if (!healed.has(r.webhook_id)) {
            healed.add(r.webhook_id);
            s.clearHealth.run([r.webhook_id]);
          }
        }
        // The dashboard's hourly counters: a row statement per webhook and hour (kysely/hours.ts).
        for (const tally of tallyHours(counted)) s.addHour.run(tallyParameters(tally));
        s.commit.run([]);
      } catch (error) {
        if (db.inTransaction) s.rollback.run([]);
        throw error;
      }
    });
    if (recorded instanceof Promise) await recorded;
  } finally {
    release();
  }
  return results;
}

interface Statements {
  begin: SqliteStatement;
  commit: SqliteStatement;
  rollback: SqliteStatement;
  insertAttempt: SqliteStatement;
  markDelivered: SqliteStatement;
  clearHealth: SqliteStatement;
  addHour: SqliteStatement;
  leaveQueue: SqliteStatement;
  promoteHead: SqliteStatement;
}

/** Prepared once per handle, on first use (after the migrations made the tables). */
const prepared = new WeakMap<SqliteDatabase, Statements>();

function statementsOf(db: SqliteDatabase): Statements {
  let s = prepared.get(db);
  if (!s) {
    s = {
      begin: db.prepare('begin immediate'),
      commit: db.prepare('commit'),
      rollback: db.prepare('rollback'),
      // `where exists`: only for a delivery that is still there (also what lets SQLite parse
      // `on conflict` after a SELECT).
      insertAttempt: db.prepare(
        'insert into "iw_attempts" ("id", "delivery_id", "webhook_id", "environment", "started_at", "duration_ms", "status_code", ' +
          '"error_kind", "error_message", "response_excerpt", "success") select ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1 ' +
          'where exists (select 1 from "iw_deliveries" where "id" = ?) on conflict ("id") do nothing',
      ),
      markDelivered: db.prepare(
        `update "iw_deliveries" set "status" = 'delivered', "next_attempt_at" = null, "attempt_count" = "attempt_count" + 1, ` +
          `"locked_by" = null, "locked_until" = null, "last_attempt_at" = ?, "last_result" = ?, "last_error" = null, "updated_at" = ? ` +
          `where "id" = ? and "locked_by" = ? and "locked_until" = coalesce(?, "locked_until") and "status" in ('pending', 'held')`,
      ),
      clearHealth: db.prepare(
        'update "iw_webhooks" set "failing_since" = null, "last_error" = null where "id" = ? ' +
          'and ("failing_since" is not null or "last_error" is not null)',
      ),
      addHour: db.prepare(ADD_HOUR_SQLITE),
      leaveQueue: db.prepare(
        'update "iw_ordered" set "seq" = null where "delivery_id" = ? and "seq" is not null returning "webhook_id", "subject"',
      ),
      // By primary key: the unary `+` keeps the due index (every waiting delivery) out of the plan.
      promoteHead: db.prepare(
        'update "iw_deliveries" set "next_attempt_at" = ?, "updated_at" = ? where "id" = (select "delivery_id" from "iw_ordered" ' +
          `where "webhook_id" = ? and "subject" = ? and "seq" is not null order by "seq" limit 1) and +"status" = 'pending' and +"next_attempt_at" is null`,
      ),
    };
    prepared.set(db, s);
  }
  return s;
}
