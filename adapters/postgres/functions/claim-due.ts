import type { StoredFunction } from '../../kysely/migrations.js';

/**
 * `iw_claim_due_2`: the claim that leaves nothing out (`adapters/postgres/claim.ts` calls it), as
 * a PL/pgSQL function ([decision 019](../../../docs/decisions/019-postgres-stored-functions.md)).
 * A statement sent as text is planned at every call; a function's own `SET plan_cache_mode` holds
 * only while it runs, so each connection plans this query once, without changing anything of a
 * host's session or needing a named statement a pooler could lose.
 *
 * - The lease is written in place (decision 003): the due rows are those whose lease, if any, has
 *   run out; the update sets the lease and `claimed_due_at` and nothing indexed, so PostgreSQL
 *   can make it HOT; the next due time of an empty claim skips leased rows.
 * - A generic plan does not know `p_limit`, so the update takes its rows by `id = any(array(...))`
 *   (an index lookup per id); joined to the `due` CTE, the generic plan hash-joined a sequential
 *   scan of the whole table.
 * - A plan made while the table was empty is kept until an ANALYZE; every step has its index, so
 *   sequential scans and sorts are off for the function alone.
 * - The columns are listed, not `*`: a test checks that it returns every column of the table, so
 *   a change to the table changes this text too (and the store applies it again).
 */
export const CLAIM_DUE: StoredFunction = {
  name: 'iw_claim_due_2',
  text: `create or replace function iw_claim_due_2(p_now bigint, p_limit integer, p_worker text, p_until bigint)
returns table (
  id text, environment text, webhook_id text, event_id text, status text, attempt_count integer,
  next_attempt_at bigint, locked_by text, locked_until bigint, last_attempt_at bigint, last_result text,
  created_at bigint, updated_at bigint, event_type text, last_error text, claimed_due_at bigint,
  webhooks json, events json, next_delivery bigint, next_notice bigint)
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_sort = off
as $claim$
#variable_conflict use_column
begin
  return query
  with "due" as (
    select "id" from "iw_deliveries" where "status" = 'pending' and "next_attempt_at" <= p_now
      and ("locked_until" is null or "locked_until" <= p_now)
    order by "next_attempt_at" limit p_limit for update skip locked),
  "claimed" as (
    update "iw_deliveries" set "locked_by" = p_worker, "locked_until" = p_until,
      "claimed_due_at" = "iw_deliveries"."next_attempt_at"
    where "iw_deliveries"."id" = any(array(select "due"."id" from "due"))
    returning "iw_deliveries"."id", "iw_deliveries"."environment", "iw_deliveries"."webhook_id",
      "iw_deliveries"."event_id", "iw_deliveries"."status", "iw_deliveries"."attempt_count",
      "iw_deliveries"."next_attempt_at", "iw_deliveries"."locked_by", "iw_deliveries"."locked_until",
      "iw_deliveries"."last_attempt_at", "iw_deliveries"."last_result", "iw_deliveries"."created_at",
      "iw_deliveries"."updated_at", "iw_deliveries"."event_type", "iw_deliveries"."last_error",
      "iw_deliveries"."claimed_due_at")
  select "c"."id", "c"."environment", "c"."webhook_id", "c"."event_id", "c"."status", "c"."attempt_count",
    "c"."next_attempt_at", "c"."locked_by", "c"."locked_until", "c"."last_attempt_at", "c"."last_result",
    "c"."created_at", "c"."updated_at", "c"."event_type", "c"."last_error", "c"."claimed_due_at",
    case when row_number() over () = 1 then (select json_agg((select row_to_json("w".*) from "iw_webhooks" "w" where "w"."id" = "d"."webhook_id")) from (select distinct "claimed"."webhook_id" from "claimed") "d") end,
    case when row_number() over () = 1 then (select json_agg((select row_to_json("e".*) from "iw_events" "e" where "e"."id" = "d"."event_id")) from (select distinct "claimed"."event_id" from "claimed") "d") end,
    "next"."delivery", "next"."notice"
  from (select
      case when not exists (select from "claimed") then (select "n"."next_attempt_at" from "iw_deliveries" "n" where "n"."status" = 'pending' and "n"."locked_by" is null order by "n"."next_attempt_at" limit 1) end as "delivery",
      case when not exists (select from "claimed") then (select "o"."next_attempt_at" from "iw_notices" "o" where "o"."status" = 'pending' order by "o"."next_attempt_at" limit 1) end as "notice") "next"
    left join "claimed" "c" on true;
end
$claim$
`,
};
