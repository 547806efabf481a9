import type { StoredFunction } from '../../kysely/migrations.js';

/**
 * `iw_dequeue` (`adapters/kysely/ordering.ts` calls it, in the transaction that recorded the
 * outcomes): the deliveries of `p_ids` that ended (delivered or failed) leave their subjects'
 * queues; then `iw_promote` (`promote.ts`, no wake-up) takes those queues' advisory locks and makes
 * the first of each, if it waits, due `p_now`. True when one did. One round trip where there were
 * three.
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
begin
  -- Both by primary key: written as a correlated exists, the plan read every finished delivery.
  with "left" as (
    update "iw_ordered" "o" set "seq" = null
    where "o"."delivery_id" = any(array(
        select "d"."id" from "iw_deliveries" "d" where "d"."id" = any(p_ids) and "d"."status" in ('delivered', 'failed')))
      and "o"."seq" is not null
    returning "o"."webhook_id", "o"."subject")
  select array_agg("webhook_id"), array_agg("subject") into v_w, v_s from "left";
  -- The queues' locks, then the first of each queue due: iw_promote's work (none left: false),
  -- without a wake-up.
  return iw_promote(v_w, v_s, p_now, null);
end
$dequeue$
`,
};
