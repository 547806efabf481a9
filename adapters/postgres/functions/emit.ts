import type { StoredFunction } from '../../kysely/migrations.js';

/**
 * `iw_emit_3`: emit as one statement (`adapters/postgres/emit.ts` calls it): the event, a delivery
 * per enabled webhook of the environment subscribed to the type, and the wake-up hint, in a
 * PL/pgSQL function so each connection parses and plans it once
 * ([decision 019](../../../docs/decisions/019-postgres-stored-functions.md)).
 *
 * - `p_ids`: the engine's delivery ids, taken by rank; with more subscribed webhooks than ids it
 *   writes nothing at all (not even the event) and says how many it needed.
 * - The event is inserted `on conflict (id) do nothing`: a transient retry after a lost reply
 *   writes nothing, and `inserted` says so. Its row keeps its subject and email (the search by
 *   subject, decision 038).
 * - Ordered delivery per subject (decision 032): for each subscribed per-subject webhook it first
 *   takes the transaction-level advisory lock of (webhook, subject) in key order (class
 *   0x69770004, as `adapters/kysely/ordering.ts` takes it); a delivery whose subject still has one
 *   pending or held is written pending but not due and takes the next place.
 * - `woke` reads `made`, so the hint goes out only when deliveries were written, and only with
 *   `p_notify`, on the channel `WAKE_CHANNEL` (`adapters/postgres/notify.ts`) written out here.
 * - Rows come back in `p_ids` order; an event nobody subscribes to still answers with its counts.
 * - Sequential scans are off for the function alone, as in the claim.
 */
export const EMIT: StoredFunction = {
  name: 'iw_emit_3',
  text: `create or replace function iw_emit_3(p_id text, p_environment text, p_type text, p_source text, p_data text,
  p_event_timestamp bigint, p_created_at bigint, p_traceparent text, p_ids text[], p_notify boolean, p_subject text, p_email text)
returns table (id text, hook text, inserted bigint, needed bigint, woke bigint, due bigint)
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $emit$
#variable_conflict use_column
declare
  k integer;
begin
  if p_subject is not null then
    for k in
      select distinct hashtext("w"."id" || chr(10) || p_subject) from "iw_webhooks" "w"
      where "w"."environment" = p_environment and "w"."status" = 'enabled' and "w"."ordering" = 'per-subject'
        and "w"."event_types"::jsonb ? p_type
      order by 1
    loop
      perform pg_advisory_xact_lock(1769406468, k);
    end loop;
  end if;
  return query
  with "hooks" as (
    select "w"."id", (p_subject is not null and "w"."ordering" = 'per-subject') as "ordered",
      row_number() over (order by "w"."created_at", "w"."id") as "n" from "iw_webhooks" "w"
    where "w"."environment" = p_environment and "w"."status" = 'enabled' and "w"."event_types"::jsonb ? p_type
  ), "ev" as (
    insert into "iw_events" ("id", "environment", "type", "source", "data", "event_timestamp", "created_at", "traceparent", "subject", "email")
    select p_id, p_environment, p_type, p_source, p_data, p_event_timestamp, p_created_at, p_traceparent, p_subject, p_email
    where (select count(*) from "hooks") <= cardinality(p_ids)
    on conflict ("id") do nothing
    returning 1
  ), "queue" as (
    select "h"."id", (select max("o"."seq") from "iw_ordered" "o"
      where "o"."webhook_id" = "h"."id" and "o"."subject" = p_subject and "o"."seq" is not null) as "last"
    from "hooks" "h" where "h"."ordered"
  ), "made" as (
    insert into "iw_deliveries" ("id", "environment", "webhook_id", "event_id", "status", "attempt_count", "next_attempt_at",
      "event_type", "created_at", "updated_at")
    select p_ids["h"."n"], p_environment, "h"."id", p_id, 'pending', 0,
      case when "q"."last" is null then p_created_at end, p_type, p_created_at, p_created_at
    from "hooks" "h" left join "queue" "q" on "q"."id" = "h"."id" where exists (select from "ev")
    returning "iw_deliveries"."id", "iw_deliveries"."webhook_id", "iw_deliveries"."next_attempt_at"
  ), "placed" as (
    insert into "iw_ordered" ("delivery_id", "webhook_id", "subject", "seq")
    select "m"."id", "m"."webhook_id", p_subject, coalesce("q"."last", 0) + 1
    from "made" "m" join "queue" "q" on "q"."id" = "m"."webhook_id"
    returning 1
  ), "woke" as (
    select pg_notify('identity_webhooks_wake', '') from "made" where p_notify and "made"."next_attempt_at" is not null limit 1
  )
  select "made"."id", "made"."webhook_id", "s"."inserted", "s"."needed", "s"."woke", "made"."next_attempt_at"
  from (select (select count(*) from "ev") as "inserted", (select count(*) from "hooks") as "needed",
      (select count(*) from "woke") as "woke") "s"
    left join "made" on true
  order by array_position(p_ids, "made"."id");
end
$emit$
`,
};
