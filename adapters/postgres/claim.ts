import { CompiledQuery, type Kysely } from 'kysely';
import type { ClaimArgs } from '../../src/store.js';
import { claimText, dueParameters, leaseParameters, leaseSet, NEXT_DELIVERY, NEXT_NOTICE } from '../kysely/due.js';
import type { ClaimRow, EngineTables } from '../kysely/schema.js';
import { POSTGRES } from '../kysely/texts.js';

/**
 * The claim as one statement: pick the oldest due deliveries nobody else holds (`SKIP LOCKED`:
 * concurrent claimers each get different rows, never wait on each other), lease them, return
 * them. `status` is compared to the literal `'pending'` so the planner can prove the partial
 * index `iw_deliveries_due` applies even to a generic plan; with a million future attempts an
 * idle claim reads one index entry. `now` comes from the engine's Clock, never the database's own.
 * The text is built once per shape (`kysely/texts.ts`). The same statement returns the claimed
 * deliveries' webhooks and events (as JSON arrays on the first row), so a claim is one round
 * trip, not three.
 *
 * ```sql
 * with due as (
 *   select id from iw_deliveries
 *   where status = 'pending' and next_attempt_at <= $now
 *     and (locked_until is null or locked_until <= $now) [and webhook_id not in (...)]
 *   order by next_attempt_at limit $n
 *   for update skip locked)
 * update iw_deliveries set locked_by = $worker, locked_until = $now + $lease,
 *   claimed_due_at = next_attempt_at
 * from due where iw_deliveries.id = due.id
 * returning iw_deliveries.*
 * ```
 * (as the CTE `claimed`; its first row also carries its distinct webhooks and events)
 *
 * The lease leaves `next_attempt_at` and `updated_at` where they are, so the update changes no
 * indexed column and PostgreSQL can make it HOT (`unleased` in due.ts, migration 12).
 *
 * A claim that leaves nothing out runs this as migration 12's function `iw_claim_due_2` (its
 * text frozen there, the update taking `id = any(array(...))`), so a connection plans it once;
 * one that leaves webhooks or environments out (a rarer claim, its plan depending on how many) is
 * built here as text.
 */
export function claimQuery(args: ClaimArgs): CompiledQuery {
  const { now, limit, workerId, leaseMs, excludeWebhookIds = [], excludeEnvironments = [], reclaimBefore } = args;
  // Leaving nothing out (an idle pass, and most claims of a busy engine): the same statement as
  // a function (migration 12), planned once per connection instead of at every call. (Not for a
  // claim that leaves recently expired leases alone, for a while after an outage: the text.)
  if (excludeWebhookIds.length === 0 && excludeEnvironments.length === 0 && (reclaimBefore === undefined || reclaimBefore >= now))
    return CompiledQuery.raw(CLAIM_DUE_CALL, [now, limit, workerId, now + leaseMs]);
  const sql = claimText(
    POSTGRES,
    args,
    (p, due) =>
      `with "due" as (${due}), ` +
      `"claimed" as (update "iw_deliveries" set ${leaseSet(p)} from "due" where "iw_deliveries"."id" = "due"."id" returning "iw_deliveries".*) ` +
      // Each distinct webhook and event once, as JSON arrays on the first row only: at fan-out
      // 10 a claim of 64 rows names ~7 events and ~10 webhooks, and turning each row's own into
      // JSON cost a fifth of the statement. One correlated primary-key lookup per distinct id,
      // never a scan of the events table whatever the planner thinks of its size.
      `select "claimed".*, ` +
      `case when row_number() over () = 1 then (select json_agg((select row_to_json("w".*) from "iw_webhooks" "w" where "w"."id" = "d"."webhook_id")) from (select distinct "webhook_id" from "claimed") "d") end as "webhooks", ` +
      `case when row_number() over () = 1 then (select json_agg((select row_to_json("e".*) from "iw_events" "e" where "e"."id" = "d"."event_id")) from (select distinct "event_id" from "claimed") "d") end as "events", ` +
      // A claim that takes nothing answers with one row of nulls and when the next delivery or
      // notice comes due (the head of each due index, as nextDueAt reads them): an idle pass is
      // one round trip. (Read in the statement's snapshot, before its own update; only used
      // when that update took nothing.)
      `"next"."delivery" as "next_delivery", "next"."notice" as "next_notice" ` +
      `from (select case when not exists (select from "claimed") then ${NEXT_DELIVERY} end as "delivery", ` +
      `case when not exists (select from "claimed") then ${NEXT_NOTICE} end as "notice") "next" left join "claimed" on true`,
  );
  return CompiledQuery.raw(sql, [...dueParameters(args), ...leaseParameters(args)]);
}

/** Migration 12's `iw_claim_due_2`: the claim below for `args` leaving nothing out, its plan made once per connection. */
export const CLAIM_DUE_CALL = 'select * from "iw_claim_due_2"($1, $2, $3, $4)';

/** Runs {@link claimQuery}; rows come back oldest first (UPDATE ... RETURNING has no order of its own). */
export async function claimDue(db: Kysely<EngineTables>, args: ClaimArgs): Promise<ClaimRow[]> {
  const { rows } = await db.executeQuery<ClaimRow>(claimQuery(args));
  return rows.sort((a, b) => Number(a.created_at) - Number(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
