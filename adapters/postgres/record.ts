import { CompiledQuery, type Kysely } from 'kysely';
import type { RecordAttemptArgs, RecordResult } from '../../src/store.js';
import { fromAttempt } from '../kysely/rows.js';
import type { EngineTables } from '../kysely/schema.js';

/**
 * A group of successes recorded as ONE statement, atomic on its own (no BEGIN/COMMIT): one round
 * trip where the shared path (`kysely/outcomes.ts`) takes six (BEGIN, read and lock the
 * deliveries, insert the attempts, mark the deliveries, clear the webhooks' health, COMMIT). With
 * the outcome group committed by one writer at a time, those round trips bounded PostgreSQL
 * throughput at fan-out 10.
 *
 * The same rules as the shared path, in SQL:
 * - `locked`: the deliveries, row-locked in id order (as the shared path), and only those that
 *   still exist: an attempt for a delivery deleted meanwhile is dropped;
 * - `ins`: the attempts, idempotent by attempt id (a transient retry after a lost reply inserts
 *   nothing);
 * - `marked`: a delivery this worker still holds (its id and the very lease the attempt was
 *   claimed under, run out or not: nobody claimed it since; pending or held) is delivered, only
 *   for an attempt inserted now;
 * - `healed`: a webhook that was failing is healthy again, for an attempt inserted now;
 * - `counted`: the dashboard's hourly counters (`kysely/hours.ts`), for the attempts inserted now,
 *   added by migration 23's `iw_tally` (planned once per connection; sent in the text, the tally
 *   was planned again with every group). A plain `select` in a CTE runs only if the query reads
 *   it: the last select does.
 * - `left` (only when the group holds an ordered webhook's successes): see {@link recordSuccesses}.
 * A success never disables anything, so every answer is `{ disabled: null }`. One difference
 * from the shared path: `healed` reads a webhook's health as of the statement's start, so a
 * failure of the same webhook that another process commits while this statement waits for its
 * row locks stays recorded (the shared path, a statement later, would clear it). Which of the two
 * wins was a race either way. The arrays make the text the same for every group size.
 *
 * It is sent as text, so PostgreSQL parses and plans it for every group (node-postgres sends
 * unnamed statements). As a function planned once per connection, like `iw_emit`, it took a tenth
 * less a group of 32 on a slow machine, and the peers bench saw no difference at
 * fan-out 1 or 10: the recorder is not what bounds them, so it stays a text
 * (docs/decisions/019-postgres-stored-functions.md).
 */
const recordText = (ordered: boolean) => `with v as (
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::int[], $7::int[], $8::text[], $9::text[], $10::text[], $13::bigint[])
    as v(id, delivery_id, webhook_id, environment, started_at, duration_ms, status_code, error_kind, error_message, response_excerpt, lease_until)
), locked as (
  select d.id from iw_deliveries d where d.id = any($2::text[]) order by d.id for update
), ins as (
  insert into iw_attempts (id, delivery_id, webhook_id, environment, started_at, duration_ms, status_code, error_kind, error_message, response_excerpt, success)
  select v.id, v.delivery_id, v.webhook_id, v.environment, v.started_at, v.duration_ms, v.status_code, v.error_kind, v.error_message, v.response_excerpt, 1
  from v join locked on locked.id = v.delivery_id
  on conflict (id) do nothing
  returning id, delivery_id, webhook_id, started_at, status_code
), marked as (
  update iw_deliveries d set status = 'delivered', next_attempt_at = null, attempt_count = d.attempt_count + 1,
    locked_by = null, locked_until = null, last_attempt_at = ins.started_at, last_result = ins.status_code::text,
    last_error = null, updated_at = $11::bigint
  from ins join v on v.id = ins.id
  where d.id = ins.delivery_id and d.locked_by = $12::text and d.locked_until = coalesce(v.lease_until, d.locked_until)
    and d.status in ('pending', 'held')
  returning d.id
), healed as (
  update iw_webhooks w set failing_since = null, last_error = null
  where w.id in (select webhook_id from ins) and (w.failing_since is not null or w.last_error is not null)
  returning w.id
), counted as (
  select iw_tally(array_agg(v.environment), array_agg(v.webhook_id), array_agg(v.started_at), array_agg(v.duration_ms), array_agg(true)) as n
  from ins join v on v.id = ins.id
)${
  ordered
    ? `, "left" as (
  update iw_ordered o set seq = null where o.delivery_id in (select id from marked) and o.seq is not null
  returning o.webhook_id, o.subject
)
select iw_promote((select array_agg(webhook_id) from "left"), (select array_agg(subject) from "left"), $11::bigint, $14::text) as released,
  (select n from counted) as counted`
    : `
select (select count(*) from ins) as inserted, (select count(*) from marked) as marked, (select count(*) from healed) as healed,
  (select n from counted) as counted`
}`;

const RECORD_SUCCESSES = recordText(false);
const RECORD_ORDERED_SUCCESSES = recordText(true);

/**
 * Records a group of successes. With an ordered webhook's among them (`RecordAttemptArgs.ordered`)
 * the same statement also moves their subjects' queues (decision 032): `left`, the delivered rows
 * leave their queues (only those this worker marked: an attempt that was not its to record leaves
 * its delivery where it was); then migration 23's `iw_promote`, called once those rows are
 * written (its arguments are their aggregate), takes the queues' locks and makes each next place
 * due, in statements of its own that see what the locks' previous holders committed. One round
 * trip, atomic on its own, where a transaction of the record, `iw_dequeue` and the wake-up took
 * five. The wake-up (`notify`, when the store sends them) carries the worker's id, so that its
 * own listener does not wake its loop into a claim it makes anyway (see `notify.ts`).
 */
export async function recordSuccesses(
  db: Kysely<EngineTables>,
  batch: readonly RecordAttemptArgs[],
  notify = false,
): Promise<RecordResult[]> {
  const rows = batch.map((b) => fromAttempt(b.attempt));
  const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((r) => r[key]);
  const ordered = batch.some((b) => b.ordered);
  const parameters = [
    column('id'),
    column('delivery_id'),
    column('webhook_id'),
    column('environment'),
    column('started_at'),
    column('duration_ms'),
    column('status_code'),
    column('error_kind'),
    column('error_message'),
    column('response_excerpt'),
    batch[0]!.now,
    batch[0]!.workerId,
    batch.map((b) => b.leaseUntil ?? null),
  ];
  if (!ordered) {
    await db.executeQuery(CompiledQuery.raw(RECORD_SUCCESSES, parameters));
    return batch.map(() => ({ disabled: null }));
  }
  const { rows: answer } = await db.executeQuery<{ released: boolean }>(
    CompiledQuery.raw(RECORD_ORDERED_SUCCESSES, [...parameters, notify ? batch[0]!.workerId : null]),
  );
  const released = answer[0]?.released === true;
  return batch.map((b) => (released && b.ordered ? { disabled: null, released: true } : { disabled: null }));
}
