// The PostgreSQL plan of the delivery log's page query (issue 11) with 1,000,000 deliveries.
//
//   npm run build && node bench/delivery-log-plan.mjs [--deliveries=1000000]
//
// Creates its own database (dropped at the end), migrates it with the store, bulk-loads the
// deliveries with one generate_series statement per webhook group, and prints
// EXPLAIN (ANALYZE, BUFFERS) of the page query exactly as the store builds it (adapters/kysely/log.ts,
// compiled), captured through Kysely's log: the first page and a deep page (through the cursor),
// with and without status=failed; then the cases the indexes do not cover (a rare event_type,
// another environment's webhook id). Only iw_deliveries is loaded: a page reads no other table.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { postgresStore } from 'identity-webhooks/postgres';
import { listPage } from '../dist/adapters/kysely/log.js';
import { createDatabase, dropDatabase, postgresAvailable } from './lib/postgres.mjs';

const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const TOTAL = arg('deliveries', 1_000_000);
const PAGE = arg('page-size', 100);
/** The webhook whose log is read: a quarter of all deliveries; 99 others share the rest. */
const TARGET_SHARE = 0.25;
const OTHERS = 99;
const T0 = Date.parse('2026-01-01T00:00:00Z');

if (!(await postgresAvailable())) {
  console.error('no PostgreSQL at BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres)');
  process.exit(1);
}
const name = `iw_bench_plan_${process.pid}`;
const url = await createDatabase(name);
try {
  const store = postgresStore({ connectionString: url, maxConnections: 2 });
  await store.migrate(Date.now());
  await store.close?.();

  const pool = new pg.Pool({ connectionString: url, max: 2 });
  let captured = null;
  const db = new Kysely({ dialect: new PostgresDialect({ pool }), log: (e) => (captured = e.query) });
  const target = 'webhook_0000000000000000target';
  const groups = [{ webhookId: target, environment: 'env-target', rows: Math.round(TOTAL * TARGET_SHARE) }];
  const rest = TOTAL - groups[0].rows;
  for (let w = 0; w < OTHERS; w++)
    groups.push({
      webhookId: `webhook_${String(w).padStart(24, '0')}`,
      environment: `env-${w % 10}`,
      rows: Math.floor(rest / OTHERS) + (w < rest % OTHERS ? 1 : 0),
    });

  const started = performance.now();
  for (const [g, { webhookId, environment, rows }] of groups.entries()) {
    // Row i of the group: created 50 ms after the one before (interleaved across groups), 5 % failed
    // after 15 attempts, 5 % pending (due later), the rest delivered; ids time-sortable like newId's.
    await pool.query(
      `insert into iw_deliveries (id, environment, webhook_id, event_id, status, attempt_count, next_attempt_at,
         locked_by, locked_until, last_attempt_at, last_result, created_at, updated_at, event_type, last_error)
       select 'msg_' || lpad(to_hex(t), 12, '0') || substr(md5($1 || i::text), 1, 20), $2, $1, 'event_' || md5($1 || i::text),
         case i % 20 when 0 then 'failed' when 1 then 'pending' else 'delivered' end,
         case i % 20 when 0 then 15 when 1 then 2 else 1 end,
         case i % 20 when 1 then t + 3600000 end, null, null, t + 1000,
         case i % 20 when 0 then '500' when 1 then 'timeout' else '200' end, t, t + 1000,
         case when i % 1000 = 7 then 'user.authenticated' else (case i % 3 when 0 then 'user.created' when 1 then 'user.updated' else 'user.deleted' end) end,
         case i % 20 when 0 then 'expected HTTP 200, got 500: status 500' when 1 then 'timed out after 15000 ms' end
       from generate_series(0, $3::int - 1) as s(i), lateral (select $4::bigint + (i::bigint * $5 + $6) * 50 as t) as tt`,
      [webhookId, environment, rows, T0, groups.length, g],
    );
  }
  await pool.query('vacuum analyze iw_deliveries');
  const { rows: size } = await pool.query(
    "select count(*)::int as n, pg_size_pretty(pg_total_relation_size('iw_deliveries')) as size from iw_deliveries",
  );
  console.log(
    `loaded ${size[0].n.toLocaleString('en')} deliveries (${size[0].size} with indexes) in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `webhook ${target} has ${groups[0].rows.toLocaleString('en')} of them (${Math.round(groups[0].rows / 20).toLocaleString('en')} failed); pages of ${PAGE}\n`,
  );
  const { rows: indexes } = await pool.query("select indexdef from pg_indexes where tablename = 'iw_deliveries' order by indexname");
  for (const { indexdef } of indexes) console.log(indexdef);

  /** The position `offset` rows into the (filtered) log: where a walk that far would be. */
  const positionAt = async (offset, status) => {
    const { rows } = await pool.query(
      `select created_at, id from iw_deliveries where webhook_id = $1 ${status ? 'and status = $3' : ''}
       order by created_at desc, id desc offset $2 limit 1`,
      status ? [target, offset, status] : [target, offset],
    );
    return { createdAt: Number(rows[0].created_at), id: rows[0].id };
  };
  const cases = [
    ['first page', {}],
    ['deep page (cursor 200,000 rows in)', { after: await positionAt(200_000) }],
    ['first page, status=failed', { status: 'failed' }],
    ['deep page, status=failed (cursor 10,000 failed rows in)', { status: 'failed', after: await positionAt(10_000, 'failed') }],
    // The limits, shown rather than hidden: event_type is a filter on the log index, not a key of it.
    ['first page, event_type=user.created (a third of the log)', { eventType: 'user.created' }],
    ['first page, event_type=user.authenticated (1 row in 1,000)', { eventType: 'user.authenticated' }],
  ];
  // And a webhook id of another environment: nothing to find, but the range is walked.
  cases.push(['another environment asking for this webhook id', { environment: 'env-0' }]);
  for (const [label, { environment = 'env-target', ...filter }] of cases) {
    captured = null;
    const page = await listPage(db, environment, { webhookId: target, limit: PAGE, ...filter });
    const { sql, parameters } = captured;
    const { rows } = await pool.query(`explain (analyze, buffers) ${sql}`, parameters);
    console.log(`\n== ${label}: ${page.deliveries.length} rows, next ${page.next ? 'yes' : 'none'}`);
    console.log(`-- ${sql}`);
    console.log(`-- parameters ${JSON.stringify(parameters)}`);
    for (const r of rows) console.log(r['QUERY PLAN']);
  }
  await db.destroy();
} finally {
  await dropDatabase(name);
}
