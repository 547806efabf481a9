// The dashboard's reads on a big environment: DELIVERIES deliveries (default 10 million) over
// 1,000 webhooks in one environment, spread over 30 days, and their hourly counters (a row per
// webhook and hour), on a SQLite file and on the local PostgreSQL. Times, over RUNS calls each
// (p50, p99): the list's stats (`hooks.webhooks.stats`; its first call in a process apart), a webhook's 30-day chart
// (`hooks.webhooks.overview(id, { range: '30d' })`) and a filtered log page (status, event type,
// the last 7 days, 20 rows). The rows are written directly in bulk (the database generates them;
// the indexes of the deliveries are dropped first and made again after, which is faster than
// keeping them while loading), not by emitting: this measures reading, not writing. On a build
// with the settled hours' packs (migration 24), the window's settled hours are packed first.
// Run: npm run build && node bench/dashboard-cost.mjs [--deliveries=10000000] [--runs=200] [--only=sqlite|postgres]

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { postgresStore } from 'identity-webhooks/postgres';
import { sqliteStore } from 'identity-webhooks/sqlite';
import pg from 'pg';
import { benchArgs, numberArg } from './lib/args.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from './lib/postgres.mjs';
import { percentile } from './lib/stats.mjs';

const values = benchArgs(import.meta.url, {
  deliveries: { type: 'string' },
  runs: { type: 'string' },
  only: { type: 'string' },
});
const N = numberArg('deliveries', values.deliveries, 10_000_000, { min: 1, integer: true });
const RUNS = numberArg('runs', values.runs, 200, { min: 1, integer: true });
const only = values.only ?? null;
const WEBHOOKS = 1000;
const HOUR = 3_600_000;
const DAYS = 30;
const ENV = 'bench';
const TYPES = ['user.created', 'user.updated', 'user.deleted', 'organization.created', 'role.created'];
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const now = Date.now();
const end = now - (now % HOUR) + HOUR;
const start = end - DAYS * 24 * HOUR;
const webhookId = (i) => `webhook_${String(i).padStart(6, '0')}`;

console.log(`dashboard-cost: ${N.toLocaleString('en')} deliveries over ${WEBHOOKS} webhooks, ${RUNS} calls each; load ${load()}`);

/** The SQL of one generated delivery `i` (1..N), as text over a series column `i`, per dialect. */
const DELIVERY_COLUMNS =
  '"id", "environment", "webhook_id", "event_id", "status", "attempt_count", "next_attempt_at", "locked_by", "locked_until", ' +
  '"last_attempt_at", "last_result", "created_at", "updated_at", "event_type", "last_error", "claimed_due_at"';

/**
 * Wall time per call (p50, p99), and this process's CPU time per call (p50): on a shared machine
 * the wall time's tail is mostly the time spent waiting for a core, the CPU time is not.
 */
async function timeCalls(label, fn) {
  await fn(); // warm
  const ms = [];
  const cpu = [];
  for (let i = 0; i < RUNS; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
  }
  return { label, p50: percentile(ms, 50), p99: percentile(ms, 99), cpu: percentile(cpu, 50) };
}

async function measure(kind, store) {
  const logger = { warn: () => {}, error: (m) => console.error(m) };
  const hooks = createWebhooks({ store, keys: [await generateSigningKey()], issuer: 'https://auth.example.com', logger });
  const target = webhookId(42);
  // The settled hours of the list's window packed as the packing chore would (src/hour-packs.ts,
  // one statement per hour), on a build that has them; timed, it is the chore's cost.
  if (store.packHours) {
    const hourNow = now - (now % HOUR);
    const packMs = [];
    for (let h = hourNow - 23 * HOUR; h < hourNow - HOUR; h += HOUR) {
      const t = performance.now();
      await store.packHours({ since: h, until: h + HOUR });
      packMs.push(performance.now() - t);
    }
    console.log(
      `${kind}: ${packMs.length} hours packed, per hour p50 ${percentile(packMs, 50).toFixed(1)} ms, max ${Math.max(...packMs).toFixed(1)} ms; load ${load()}`,
    );
  }
  // Every list call reads the whole day (src/activity.ts); a process's first runs the stats path
  // before V8 has compiled it: measured apart, each on a new engine (not closed: that would close
  // the store), after a one-row log page, so an engine's first store call (its migration check) is
  // not counted.
  const cold = [];
  const coldCpu = [];
  for (let i = 0; i < Math.min(RUNS, 30); i++) {
    const fresh = createWebhooks({ store, keys: [await generateSigningKey()], issuer: 'https://auth.example.com', logger });
    await fresh.deliveries.list({ environment: ENV, webhookId: target, limit: 1 });
    const c = process.cpuUsage();
    const t = performance.now();
    await fresh.webhooks.stats({ environment: ENV });
    cold.push(performance.now() - t);
    const used = process.cpuUsage(c);
    coldCpu.push((used.user + used.system) / 1000);
  }
  const results = [
    { label: 'list stats, first call of a process', p50: percentile(cold, 50), p99: percentile(cold, 99), cpu: percentile(coldCpu, 50) },
    await timeCalls('list stats (1,000 webhooks, 24 h)', () => hooks.webhooks.stats({ environment: ENV })),
    await timeCalls("a webhook's 30-day chart", () => hooks.webhooks.overview(target, { environment: ENV, range: '30d' })),
    await timeCalls('filtered log page (failed, one type, 7 days, 20 rows)', () =>
      hooks.deliveries.list({
        environment: ENV,
        webhookId: target,
        status: 'failed',
        eventType: 'user.created',
        since: end - 7 * 24 * HOUR,
        until: end,
        limit: 20,
      }),
    ),
    await timeCalls('log page by date only (7 days, 20 rows)', () =>
      hooks.deliveries.list({ environment: ENV, webhookId: target, since: end - 7 * 24 * HOUR, limit: 20 }),
    ),
  ];
  const page = await hooks.deliveries.list({
    environment: ENV,
    webhookId: target,
    status: 'failed',
    eventType: 'user.created',
    since: end - 7 * 24 * HOUR,
    until: end,
    limit: 20,
  });
  await hooks.close();
  await store.close();
  console.log(`${kind}: (filtered page had ${page.deliveries.length} rows)`);
  for (const r of results)
    console.log(
      `  ${kind.padEnd(8)} ${r.label.padEnd(56)} p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  (CPU here p50 ${r.cpu.toFixed(1)} ms)`,
    );
  return results;
}

/** Hourly counter rows: every webhook, every hour of the 30 days; the sums N spread evenly. */
const perHour = Math.max(1, Math.round(N / WEBHOOKS / (DAYS * 24)));

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'iw-dashboard-cost-'));
  try {
    const file = join(dir, 'bench.db');
    const store = sqliteStore({ filename: file });
    await store.migrate(now);
    await store.close();
    const t0 = performance.now();
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const indexes = db
      .prepare("select sql from sqlite_master where type = 'index' and tbl_name = 'iw_deliveries' and sql is not null")
      .all()
      .map((r) => r.sql);
    for (const { name } of db
      .prepare("select name from sqlite_master where type = 'index' and tbl_name = 'iw_deliveries' and sql is not null")
      .all())
      db.exec(`drop index "${name}"`);
    const insertHook = db.prepare(
      'insert into iw_webhooks (id, environment, name, description, endpoint, event_types, status, created_at, updated_at) values (?, ?, ?, null, ?, ?, ?, ?, ?)',
    );
    db.transaction(() => {
      for (let i = 0; i < WEBHOOKS; i++)
        insertHook.run(webhookId(i), ENV, `Hook ${i}`, `https://example.com/${i}`, JSON.stringify(TYPES), 'enabled', start + i, start + i);
    })();
    const types = `case (i / 1000) % 5 ${TYPES.map((t, k) => `when ${k} then '${t}'`).join(' ')} end`;
    const status = `case when (i / 5000) % 25 = 3 then 'failed' else 'delivered' end`;
    const created = `${start} + (i * ${(end - start) / N})`;
    const insertRange = db.prepare(
      `with recursive s(i) as (select ? union all select i + 1 from s where i < ?)
       insert into iw_deliveries (${DELIVERY_COLUMNS})
       select 'msg_' || printf('%012d', i), '${ENV}', 'webhook_' || printf('%06d', i % ${WEBHOOKS}), 'event_' || printf('%012d', i),
         ${status}, 1, null, null, null, cast(${created} as integer), '200', cast(${created} as integer), cast(${created} as integer),
         ${types}, null, null
       from s`,
    );
    const CHUNK = 500_000;
    for (let from = 1; from <= N; from += CHUNK) db.transaction(() => insertRange.run(from, Math.min(N, from + CHUNK - 1)))();
    const loaded = performance.now();
    for (const sql of indexes) db.exec(sql);
    const indexed = performance.now();
    const hours = db.prepare(
      `insert into iw_webhook_hours (webhook_id, hour, environment, succeeded, failed, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9)
       values (?, ?, '${ENV}', ?, ?, 0, ?, ?, ?, ?, 0, 0, 0, 0, 0)`,
    );
    db.transaction(() => {
      for (let w = 0; w < WEBHOOKS; w++)
        for (let h = start; h < end; h += HOUR) hours.run(webhookId(w), h, perHour, 1, perHour >> 1, perHour >> 2, perHour >> 3, 1);
    })();
    db.exec('analyze');
    db.close();
    console.log(
      `sqlite: built in ${((performance.now() - t0) / 1000).toFixed(0)} s (rows ${((loaded - t0) / 1000).toFixed(0)} s, indexes ${((indexed - loaded) / 1000).toFixed(0)} s); load ${load()}`,
    );
    return await measure('sqlite', sqliteStore({ filename: file }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres() {
  const name = `iw_dashboard_cost_${process.pid}`;
  const url = await createDatabase(name);
  try {
    const store = postgresStore({ connectionString: url });
    await store.migrate(now);
    await store.close();
    const t0 = performance.now();
    // Other processes on this shared server may end every backend (tests that simulate a restart):
    // each step is retried on a new connection.
    let connection = null;
    const client = {
      async query(text, params) {
        for (let attempt = 0; ; attempt++) {
          try {
            if (!connection) {
              connection = new pg.Client({ connectionString: url });
              connection.on('error', () => {});
              await connection.connect();
              await connection.query("set maintenance_work_mem = '256MB'");
            }
            return await connection.query(text, params);
          } catch (error) {
            connection?.end().catch(() => {});
            connection = null;
            if (attempt >= 5 || !['57P01', '57P02', '57P03', 'ECONNRESET'].includes(error.code)) throw error;
            console.log(`postgres: ${error.code} during the build, step again`);
          }
        }
      },
      end: () => connection?.end(),
    };
    const { rows: indexes } = await client.query(
      "select indexname, indexdef from pg_indexes where tablename = 'iw_deliveries' and indexname not in (select conname from pg_constraint)",
    );
    for (const { indexname } of indexes) await client.query(`drop index if exists "${indexname}"`);
    await client.query(
      `insert into iw_webhooks (id, environment, name, description, endpoint, event_types, status, created_at, updated_at)
       select 'webhook_' || lpad(i::text, 6, '0'), $1, 'Hook ' || i, null, 'https://example.com/' || i, $2, 'enabled', $3::bigint + i, $3::bigint + i
       from generate_series(0, ${WEBHOOKS - 1}) i`,
      [ENV, JSON.stringify(TYPES), start],
    );
    const types = `(array[${TYPES.map((t) => `'${t}'`).join(', ')}])[(i / 1000) % 5 + 1]`;
    const created = `(${start} + (i * ${(end - start) / N}))::bigint`;
    const CHUNK = 1_000_000;
    for (let from = 1; from <= N; from += CHUNK)
      await client.query(
        `insert into iw_deliveries (${DELIVERY_COLUMNS})
         select 'msg_' || lpad(i::text, 12, '0'), '${ENV}', 'webhook_' || lpad((i % ${WEBHOOKS})::text, 6, '0'), 'event_' || lpad(i::text, 12, '0'),
           case when (i / 5000) % 25 = 3 then 'failed' else 'delivered' end, 1, null, null, null, ${created}, '200', ${created}, ${created},
           ${types}, null, null
         from generate_series($1::bigint, $2::bigint) i on conflict do nothing`,
        [from, Math.min(N, from + CHUNK - 1)],
      );
    const loaded = performance.now();
    for (const { indexdef } of indexes) await client.query(indexdef.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '));
    const indexed = performance.now();
    await client.query(
      `insert into iw_webhook_hours (webhook_id, hour, environment, succeeded, failed, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9)
       select 'webhook_' || lpad(w::text, 6, '0'), h, $1, $2, 1, 0, $3, $4, $5, 1, 0, 0, 0, 0, 0
       from generate_series(0, ${WEBHOOKS - 1}) w, generate_series($6::bigint, $7::bigint, ${HOUR}) h`,
      [ENV, perHour, perHour >> 1, perHour >> 2, perHour >> 3, start, end - HOUR],
    );
    await client.query('vacuum analyze');
    // The load's dirty pages written out now, not by the checkpointer while the reads are timed
    // (rows that arrive over 30 days are written out as they come). Needs a superuser or
    // pg_checkpoint; without, the reads are timed as they are.
    await client.query('checkpoint').catch((e) => console.log(`postgres: no checkpoint before the reads (${e.message})`));
    await client.end();
    console.log(
      `postgres: built in ${((performance.now() - t0) / 1000).toFixed(0)} s (rows ${((loaded - t0) / 1000).toFixed(0)} s, indexes ${((indexed - loaded) / 1000).toFixed(0)} s); load ${load()}`,
    );
    return await measure('postgres', postgresStore({ connectionString: url }));
  } finally {
    await dropDatabase(name);
  }
}

if (only !== 'postgres') await sqlite();
if (only !== 'sqlite') {
  if (await postgresAvailable()) await postgres();
  else console.log('postgres: not available, skipped');
}
console.log(`load at end ${load()}`);
