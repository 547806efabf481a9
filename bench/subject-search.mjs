// What was sent about a user, on a big environment: `hooks.events.search` (GET /api/v1/events?subject=)
// over DELIVERIES deliveries (default 10 million): one event to each of FANOUT webhooks (default
// 10) of one environment of 20, so 1 million events, about USERS users (default 100,000, about
// ten events each, with their emails) and 1,000 organizations, over 30 days, on a SQLite file and
// on the local PostgreSQL. The rows are written directly in bulk (the database generates them, the
// indexes made after), not by emitting: this measures the search, not writing. Times over RUNS
// searches each (p50, p99): by a user's id, by their email in another case, by an organization's
// code, a second page, and a subject no event has.
// Run: npm run build && node bench/subject-search.mjs [--deliveries=10000000] [--runs=300] [--only=sqlite|postgres]

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { postgresStore } from 'identity-webhooks/postgres';
import { sqliteStore } from 'identity-webhooks/sqlite';
import pg from 'pg';
import { benchArgs } from './lib/args.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from './lib/postgres.mjs';
import { percentile } from './lib/stats.mjs';

const args = benchArgs(import.meta.url, {
  deliveries: { type: 'string', default: '10000000' },
  runs: { type: 'string', default: '300' },
  users: { type: 'string', default: '100000' },
  fanout: { type: 'string', default: '10' },
  only: { type: 'string' },
});
const N = Number(args.deliveries);
const RUNS = Number(args.runs);
const USERS = Number(args.users);
const FANOUT = Number(args.fanout);
const EVENTS = Math.ceil(N / FANOUT);
const ORGS = 1000;
const WEBHOOKS = 20;
const ENV = 'bench';
const DAY = 86_400_000;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const now = Date.now();
const start = now - 30 * DAY;
const step = (30 * DAY) / EVENTS;

console.log(
  `subject-search: ${N.toLocaleString('en')} deliveries, ${EVENTS.toLocaleString('en')} events to ${FANOUT} of ${WEBHOOKS} webhooks, ${USERS.toLocaleString('en')} users, ${ORGS} organizations; ${RUNS} searches each; load ${load()}`,
);

// Event i (1..EVENTS): every 10th is about an organization (organization.updated, subject org_<i / 10 % ORGS>),
// the others about user kp_<i % USERS> (user.updated, with the user's email). Its deliveries go to
// webhooks (i + k) % WEBHOOKS for k < FANOUT. Written as SQL over a series column `i` (and `k`).
const isOrg = (i) => `(${i} % 10 = 0)`;

async function measure(kind, store) {
  const logger = { warn: () => {}, error: (m) => console.error(m) };
  const hooks = createWebhooks({ store, keys: [await generateSigningKey()], issuer: 'https://auth.example.com', logger });
  let n = 0;
  // a different subject per call, so the cache holds no answer ready: user 7, 107, 207, …
  const userOf = () => `kp_${(7 + 100 * n++) % USERS}`;
  const cases = [
    ['by user id', () => hooks.events.search({ environment: ENV, subject: userOf() })],
    ['by email, other case', () => hooks.events.search({ environment: ENV, subject: `User.${(11 + 100 * n++) % USERS}@Example.COM` })],
    ['by organization code', () => hooks.events.search({ environment: ENV, subject: `org_${(3 + n++) % ORGS}` })],
    [
      'second page of an organization',
      async () => {
        const first = await hooks.events.search({ environment: ENV, subject: `org_${(5 + n++) % ORGS}`, limit: 20 });
        return hooks.events.search({ environment: ENV, subject: `org_${(5 + n - 1) % ORGS}`, limit: 20, cursor: first.nextCursor });
      },
    ],
    ['a subject no event has', () => hooks.events.search({ environment: ENV, subject: `kp_nobody_${n++}` })],
  ];
  for (const subject of ['kp_7', 'User.7@example.com', 'org_3']) {
    const sample = await hooks.events.search({ environment: ENV, subject });
    console.log(
      `${kind}: ${subject}: ${sample.events.length} events on the first page (${sample.nextCursor ? 'more follow' : 'the last'}), ${sample.events.reduce((s, e) => s + e.deliveries.length, 0)} deliveries`,
    );
  }
  const results = [];
  for (const [label, fn] of cases) {
    await fn(); // warm
    const ms = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await fn();
      ms.push(performance.now() - t);
    }
    results.push({ label, p50: percentile(ms, 50), p99: percentile(ms, 99) });
  }
  await hooks.close();
  await store.close();
  for (const r of results) console.log(`  ${kind.padEnd(8)} ${r.label.padEnd(34)} p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms`);
  console.log(`${kind}: load ${load()}`);
  return results;
}

const DELIVERY_COLUMNS =
  '"id", "environment", "webhook_id", "event_id", "status", "attempt_count", "next_attempt_at", "last_attempt_at", "last_result", "created_at", "updated_at", "event_type"';
const EVENT_COLUMNS = '"id", "environment", "type", "source", "data", "event_timestamp", "created_at", "subject", "email"';

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'iw-subject-search-'));
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
      .prepare(
        "select name, sql from sqlite_master where type = 'index' and tbl_name in ('iw_deliveries', 'iw_events') and sql is not null",
      )
      .all();
    for (const { name } of indexes) db.exec(`drop index "${name}"`);
    const hook = db.prepare(
      'insert into iw_webhooks (id, environment, name, description, endpoint, event_types, status, created_at, updated_at) values (?, ?, ?, null, ?, ?, ?, ?, ?)',
    );
    for (let w = 0; w < WEBHOOKS; w++)
      hook.run(
        `webhook_${w}`,
        ENV,
        `Hook ${w}`,
        `https://example.com/${w}`,
        '["user.updated","organization.updated"]',
        'enabled',
        start,
        start,
      );
    const at = `cast(${start} + i * ${step} as integer)`;
    const events = db.prepare(
      `with recursive s(i) as (select cast(? as integer) union all select i + 1 from s where i < ?)
       insert into iw_events (${EVENT_COLUMNS})
       select 'event_' || printf('%032d', i), '${ENV}',
         case when ${isOrg('i')} then 'organization.updated' else 'user.updated' end, 'api',
         case when ${isOrg('i')} then '{"organization":{"code":"org_' || ((i / 10) % ${ORGS}) || '"}}'
           else '{"user":{"id":"kp_' || (i % ${USERS}) || '","email":"User.' || (i % ${USERS}) || '@example.com"}}' end,
         ${at}, ${at},
         case when ${isOrg('i')} then 'org_' || ((i / 10) % ${ORGS}) else 'kp_' || (i % ${USERS}) end,
         case when ${isOrg('i')} then null else 'user.' || (i % ${USERS}) || '@example.com' end
       from s`,
    );
    const deliveries = db.prepare(
      `with recursive s(i) as (select cast(? as integer) union all select i + 1 from s where i < ?), f(k) as (select 0 union all select k + 1 from f where k < ${FANOUT - 1})
       insert into iw_deliveries (${DELIVERY_COLUMNS})
       select 'msg_' || printf('%030d', i) || printf('%02d', k), '${ENV}', 'webhook_' || ((i + k) % ${WEBHOOKS}), 'event_' || printf('%032d', i),
         case when (i + k) % 97 = 0 then 'failed' else 'delivered' end, 1, null, ${at}, '200', ${at}, ${at},
         case when ${isOrg('i')} then 'organization.updated' else 'user.updated' end
       from s, f`,
    );
    const CHUNK = 100_000;
    for (let from = 1; from <= EVENTS; from += CHUNK) {
      const to = Math.min(EVENTS, from + CHUNK - 1);
      db.transaction(() => {
        events.run(from, to);
        deliveries.run(from, to);
      })();
    }
    const loaded = performance.now();
    for (const { sql } of indexes) db.exec(sql);
    db.exec('analyze');
    db.close();
    console.log(
      `sqlite: built in ${((performance.now() - t0) / 1000).toFixed(0)} s (rows ${((loaded - t0) / 1000).toFixed(0)} s); load ${load()}`,
    );
    return await measure('sqlite', sqliteStore({ filename: file }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres() {
  const name = `iw_subject_search_${process.pid}`;
  const url = await createDatabase(name);
  try {
    const store = postgresStore({ connectionString: url });
    await store.migrate(now);
    await store.close();
    const t0 = performance.now();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query("set maintenance_work_mem = '256MB'");
    const { rows: indexes } = await client.query(
      "select indexname, indexdef from pg_indexes where tablename in ('iw_deliveries', 'iw_events') and indexname not in (select conname from pg_constraint)",
    );
    for (const { indexname } of indexes) await client.query(`drop index if exists "${indexname}"`);
    await client.query(
      `insert into iw_webhooks (id, environment, name, description, endpoint, event_types, status, created_at, updated_at)
       select 'webhook_' || w, $1, 'Hook ' || w, null, 'https://example.com/' || w, '["user.updated","organization.updated"]', 'enabled', $2::bigint, $2::bigint
       from generate_series(0, ${WEBHOOKS - 1}) w`,
      [ENV, start],
    );
    const at = `(${start} + i * ${step})::bigint`;
    const CHUNK = 200_000;
    for (let from = 1; from <= EVENTS; from += CHUNK) {
      const range = [from, Math.min(EVENTS, from + CHUNK - 1)];
      await client.query(
        `insert into iw_events (${EVENT_COLUMNS})
         select 'event_' || lpad(i::text, 32, '0'), '${ENV}',
           case when ${isOrg('i')} then 'organization.updated' else 'user.updated' end, 'api',
           case when ${isOrg('i')} then '{"organization":{"code":"org_' || ((i / 10) % ${ORGS}) || '"}}'
             else '{"user":{"id":"kp_' || (i % ${USERS}) || '","email":"User.' || (i % ${USERS}) || '@example.com"}}' end,
           ${at}, ${at},
           case when ${isOrg('i')} then 'org_' || ((i / 10) % ${ORGS}) else 'kp_' || (i % ${USERS}) end,
           case when ${isOrg('i')} then null else 'user.' || (i % ${USERS}) || '@example.com' end
         from generate_series($1::bigint, $2::bigint) i`,
        range,
      );
      await client.query(
        `insert into iw_deliveries (${DELIVERY_COLUMNS})
         select 'msg_' || lpad(i::text, 30, '0') || lpad(k::text, 2, '0'), '${ENV}', 'webhook_' || ((i + k) % ${WEBHOOKS}), 'event_' || lpad(i::text, 32, '0'),
           case when (i + k) % 97 = 0 then 'failed' else 'delivered' end, 1, null, ${at}, '200', ${at}, ${at},
           case when ${isOrg('i')} then 'organization.updated' else 'user.updated' end
         from generate_series($1::bigint, $2::bigint) i, generate_series(0, ${FANOUT - 1}) k`,
        range,
      );
    }
    const loaded = performance.now();
    for (const { indexdef } of indexes) await client.query(indexdef.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '));
    await client.query('vacuum analyze');
    await client.query('checkpoint').catch((e) => console.log(`postgres: no checkpoint before the searches (${e.message})`));
    await client.end();
    console.log(
      `postgres: built in ${((performance.now() - t0) / 1000).toFixed(0)} s (rows ${((loaded - t0) / 1000).toFixed(0)} s); load ${load()}`,
    );
    return await measure('postgres', postgresStore({ connectionString: url }));
  } finally {
    await dropDatabase(name);
  }
}

if (args.only !== 'postgres') await sqlite();
if (args.only !== 'sqlite') {
  if (await postgresAvailable()) await postgres();
  else console.log('postgres: not available, skipped');
}
console.log(`load at end ${load()}`);
