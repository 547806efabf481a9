import type { StoredFunction } from '../../kysely/migrations.js';

/**
 * `iw_tally`: the hourly counters' additions for a statement's attempts (one element of each array
 * per attempt), summed as `tallyHours` (src/stats.ts) sums them (grouped per webhook and hour, in
 * that order, so concurrent writers lock the rows alike). A function so that PostgreSQL plans
 * this insert once per connection inside the statement that records a group of successes.
 */
export const TALLY: StoredFunction = {
  name: 'iw_tally',
  text: `create or replace function iw_tally(p_environment text[], p_webhook_id text[], p_started_at bigint[], p_duration_ms int[], p_success boolean[])
returns integer
language plpgsql volatile
set plan_cache_mode = force_generic_plan
as $tally$
declare
  n integer;
begin
  if p_webhook_id is null then
    return 0;
  end if;
  insert into "iw_webhook_hours" ("environment", "webhook_id", "hour", "succeeded", "failed", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9")
  select "e", "w", "h", count(*) filter (where "s"), count(*) filter (where not "s"), count(*) filter (where "b" = 0), count(*) filter (where "b" = 1), count(*) filter (where "b" = 2), count(*) filter (where "b" = 3), count(*) filter (where "b" = 4), count(*) filter (where "b" = 5), count(*) filter (where "b" = 6), count(*) filter (where "b" = 7), count(*) filter (where "b" = 8), count(*) filter (where "b" = 9)
  from (select "r"."e", "r"."w", "r"."t" - ("r"."t" % 3600000) as "h", "r"."s",
      width_bucket("r"."ms", '{25,50,100,250,500,1000,2500,5000,10000}'::int[]) as "b"
    from unnest(p_environment, p_webhook_id, p_started_at, p_duration_ms, p_success) as "r"("e", "w", "t", "ms", "s")) "a"
  group by 1, 2, 3 order by 2, 3
  on conflict ("webhook_id", "hour") do update set "succeeded" = "iw_webhook_hours"."succeeded" + excluded."succeeded", "failed" = "iw_webhook_hours"."failed" + excluded."failed", "d0" = "iw_webhook_hours"."d0" + excluded."d0", "d1" = "iw_webhook_hours"."d1" + excluded."d1", "d2" = "iw_webhook_hours"."d2" + excluded."d2", "d3" = "iw_webhook_hours"."d3" + excluded."d3", "d4" = "iw_webhook_hours"."d4" + excluded."d4", "d5" = "iw_webhook_hours"."d5" + excluded."d5", "d6" = "iw_webhook_hours"."d6" + excluded."d6", "d7" = "iw_webhook_hours"."d7" + excluded."d7", "d8" = "iw_webhook_hours"."d8" + excluded."d8", "d9" = "iw_webhook_hours"."d9" + excluded."d9";
  get diagnostics n = row_count;
  return n;
end
$tally$
`,
};
