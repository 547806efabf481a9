import type { StoredFunction } from '../../kysely/migrations.js';

/**
 * `iw_promote`, called by the statement that records an ordered webhook's successes
 * (`adapters/postgres/record.ts`) with the queues its delivered rows left (`p_w`, `p_s`: webhook
 * and subject, one pair per delivery that left): the queues' advisory locks in key order (as
 * `iw_emit_3` takes them), then, in a statement of its own, the first of each queue, if it waits,
 * becomes due `p_now`. When one did and `p_tag` is given, the wake-up goes out with `p_tag` as its
 * payload (the recording worker's id: its own listener skips it). True when one did. Also the
 * second half of `iw_dequeue` (`dequeue.ts`), which passes no tag.
 */
export const PROMOTE: StoredFunction = {
  name: 'iw_promote',
  text: `create or replace function iw_promote(p_w text[], p_s text[], p_now bigint, p_tag text)
returns boolean
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $promote$
declare
  k integer;
  n bigint;
begin
  if p_w is null or cardinality(p_w) = 0 then
    return false;
  end if;
  for k in select distinct hashtext("t"."w" || chr(10) || "t"."s") from unnest(p_w, p_s) as "t"("w", "s") order by 1
  loop
    perform pg_advisory_xact_lock(1769406468, k);
  end loop;
  -- In a statement of its own, which sees what the previous holders committed. By primary key
  -- (id = any(array(...))): joined to the heads instead, a generic plan may read every waiting
  -- row of the due index (next_attempt_at is null), a cost that grows with the queues.
  update "iw_deliveries" set "next_attempt_at" = p_now, "updated_at" = p_now
  where "id" = any(array(
    select (select "o"."delivery_id" from "iw_ordered" "o" where "o"."webhook_id" = "q"."w" and "o"."subject" = "q"."s"
      and "o"."seq" is not null order by "o"."seq" limit 1)
    from (select distinct "t"."w", "t"."s" from unnest(p_w, p_s) as "t"("w", "s")) "q"))
    and "status" = 'pending' and "next_attempt_at" is null;
  get diagnostics n = row_count;
  if n > 0 and p_tag is not null then
    perform pg_notify('identity_webhooks_wake', p_tag);
  end if;
  return n > 0;
end
$promote$
`,
};
