// The PostgreSQL plan of the delivery log's page query (issue 11) with 1,000,000 deliveries.
//
//   npm run build && node bench/studies/delivery-log-plan.mjs [--deliveries=1000000]
//
// Creates its own database (dropped at the end), migrates it with the store, bulk-loads the
// deliveries with one generate_series statement per webhook group, and prints
// EXPLAIN (ANALYZE, BUFFERS) of the page query exactly as the store builds it (adapters/kysely/log.ts,
// compiled), captured through Kysely's log: the first page and a deep page (through the cursor),
// with and without status=failed, and filtered by a common and by a rare event_type (the index of
// migration 5); then the case the indexes do not cover (another environment's webhook id). Only
// iw_deliveries is loaded: a page reads no other table. Run on a build without migration 5, the
// event_type cases show what the log did before it (bench/results/delivery-log/). Last, SQLite's
// EXPLAIN QUERY PLAN of the same pages on a freshly migrated file (the schema's choice; no rows).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { postgresStore } from 'identity-webhooks/postgres';
import { sqliteStore } from 'identity-webhooks/sqlite';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { listPage } from '../../dist/adapters/kysely/log.js';
import { benchArgs, numberArg } from '../lib/args.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from '../lib/postgres.mjs';

const values = benchArgs(import.meta.url, {
  deliveries: { type: 'string' },
  'page-size': { type: 'string' },
});
const TOTAL = numberArg('deliveries', values.deliveries, 1_000_000, { min: 1, integer: true });
const PAGE = numberArg('page-size', values['page-size'], 100, { min: 1, integer: true });
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
  pool.on('error', () => {}); // the database is dropped at the end, with force
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
  const positionAt = async (offset, status, eventType) => {
    const [column, value] = status ? ['status', status] : eventType ? ['event_type', eventType] : [];
    const { rows } = await pool.query(
      `select created_at, id from iw_deliveries where webhook_id = $1 ${column ? `and ${column} = $3` : ''}
       order by created_at desc, id desc offset $2 limit 1`,
      column ? [target, offset, value] : [target, offset],
    );
    return { createdAt: Number(rows[0].created_at), id: rows[0].id };
  };
  // How far in the deep pages start: 200,000 rows, 10,000 failed, 100 of the rare type at the
  // full size (4/5, 4/5 and 2/5 of what the webhook has), less on a smaller load.
  const deepIn = Math.min(200_000, Math.floor(groups[0].rows * 0.8));
  const failedIn = Math.min(10_000, Math.floor(groups[0].rows / 25));
  const rareIn = Math.min(100, Math.floor(groups[0].rows / 2500));
  const cases = [
    ['first page', {}],
    [`deep page (cursor ${deepIn.toLocaleString('en')} rows in)`, { after: await positionAt(deepIn) }],
    ['first page, status=failed', { status: 'failed' }],
    [
      `deep page, status=failed (cursor ${failedIn.toLocaleString('en')} failed rows in)`,
      { status: 'failed', after: await positionAt(failedIn, 'failed') },
    ],
    // The type filter: a key of the index (webhook_id, event_type, created_at, id) since migration 5.
    ['first page, event_type=user.created (a third of the log)', { eventType: 'user.created' }],
    ['first page, event_type=user.authenticated (1 row in 1,000)', { eventType: 'user.authenticated' }],
    [
      `deep page, event_type=user.authenticated (cursor ${rareIn} rows of that type in)`,
      { eventType: 'user.authenticated', after: await positionAt(rareIn, undefined, 'user.authenticated') },
    ],
    // Both filters: one index serves, the other is checked on its range (no failed row has this type).
    ['first page, status=failed and event_type=user.authenticated (no such row)', { status: 'failed', eventType: 'user.authenticated' }],
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

// SQLite: the same page queries, compiled by the store's own code, against the migrated schema.
{
  const dir = mkdtempSync(join(tmpdir(), 'iw-log-plan-'));
  try {
    const file = join(dir, 'webhooks.db');
    const store = sqliteStore({ filename: file });
    await store.migrate(Date.now());
    await store.close();
    const database = new Database(file);
    let captured = null;
    const db = new Kysely({ dialect: new SqliteDialect({ database }), log: (e) => (captured = e.query) });
    const after = { createdAt: T0, id: 'msg_019b85c146f8339af8cf78550d114a7d' };
    console.log('\n== SQLite: EXPLAIN QUERY PLAN of the same pages on a migrated file');
    for (const [label, filter] of [
      ['first page', {}],
      ['deep page', { after }],
      ['status=failed', { status: 'failed' }],
      ['event_type=user.authenticated', { eventType: 'user.authenticated' }],
      ['event_type=user.authenticated, deep page', { eventType: 'user.authenticated', after }],
      ['status=failed and event_type=user.authenticated', { status: 'failed', eventType: 'user.authenticated' }],
    ]) {
      await listPage(db, 'env-target', { webhookId: 'webhook_0000000000000000target', limit: PAGE, ...filter });
      const plan = database.prepare(`explain query plan ${captured.sql}`).all(...captured.parameters);
      console.log(`${label}: ${plan.map((r) => r.detail).join(' | ')}`);
    }
    await db.destroy();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
