import type { StoredFunction } from '../../kysely/migrations.js';

/**
 * `iw_dequeue` (`adapters/kysely/ordering.ts` calls it, in the transaction that recorded the
 * outcomes): the deliveries of `p_ids` that ended (delivered or failed) leave their subjects'
 * queues; then, in key order, the queues' advisory locks (as `iw_emit_3` takes them); then, in a
 * statement that sees what the previous holders committed, the first of each of those queues, if
 * it waits, becomes due `p_now`. True when one did. One round trip where there were three.
 */
export const DEQUEUE: StoredFunction = {
  name: 'iw_dequeue',
  text: `create or replace function iw_dequeue(p_ids text[], p_now bigint)
returns boolean
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $dequeue$
declare
  v_w text[];
  v_s text[];
  k integer;
  n bigint;
begin
  -- Both by primary key: written as a correlated exists, the plan read every finished delivery.
  with "left" as (
    update "iw_ordered" "o" set "seq" = null
    where "o"."delivery_id" = any(array(
        select "d"."id" from "iw_deliveries" "d" where "d"."id" = any(p_ids) and "d"."status" in ('delivered', 'failed')))
      and "o"."seq" is not null
    returning "o"."webhook_id", "o"."subject")
  select array_agg("webhook_id"), array_agg("subject") into v_w, v_s from "left";
  if v_w is null then
    return false;
  end if;
  for k in select distinct hashtext("t"."w" || chr(10) || "t"."s") from unnest(v_w, v_s) as "t"("w", "s") order by 1
  loop
    perform pg_advisory_xact_lock(1769406468, k);
  end loop;
  -- By primary key (id = any(array(...))): joined to the heads instead, a generic plan may read
  -- every waiting row of the due index (next_attempt_at is null), a cost that grows with the queues.
  update "iw_deliveries" set "next_attempt_at" = p_now, "updated_at" = p_now
  where "id" = any(array(
    select (select "o"."delivery_id" from "iw_ordered" "o" where "o"."webhook_id" = "q"."w" and "o"."subject" = "q"."s"
      and "o"."seq" is not null order by "o"."seq" limit 1)
    from (select distinct "t"."w", "t"."s" from unnest(v_w, v_s) as "t"("w", "s")) "q"))
    and "status" = 'pending' and "next_attempt_at" is null;
  get diagnostics n = row_count;
  return n > 0;
end
$dequeue$
`,
};
