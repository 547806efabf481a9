// The PostgreSQL plan of every retention step over 1,000,000 old finished deliveries.
//
//   npm run build && node bench/studies/retention-plan.mjs        (ROWS=1000000 by default)
//
// Loads 500,000 events 31-60 days old with two finished deliveries each (one in five with an
// attempt row, one in fifty failed), plus 25,000 recent events with theirs, into a fresh database
// on the local server (BENCH_PG_URL). So that every step has real rows to find (and rows it must
// pass over): ROWS/50 deliveries held for a webhook disabled 45 days ago (the `expired` step) and
// ROWS/200 held for one disabled 10 days ago (kept); ROWS/50 notices sent 31-60 days ago (the
// `notices` step), ROWS/500 sent recently, and old failed and pending ones (kept). Then it runs
// the statements of one purge round exactly as the store sends them (captured from Kysely's log
// while `purgeStep` runs) under EXPLAIN (ANALYZE, BUFFERS), each inside a transaction that is
// rolled back. Prints the plans and, per step, the rows changed, the buffers touched and the time.

import { postgresStore } from 'identity-webhooks/postgres';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PURGE_STEPS, purgeStep } from '../../dist/adapters/kysely/retention.js';
import { PURGE_BATCH } from '../../dist/src/retention.js';
import { benchArgs } from '../lib/args.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from '../lib/postgres.mjs';

// Its settings are environment variables (above); no arguments.
benchArgs(import.meta.url, {});

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const DAY = 24 * 3600_000;
const NOW = Date.parse('2026-06-01T00:00:00Z');
const CUTOFF = NOW - 30 * DAY;
class Rollback extends Error {}

if (!(await postgresAvailable())) {
  console.error('no PostgreSQL at BENCH_PG_URL / 127.0.0.1:5432');
  process.exit(1);
}
const name = `iw_retention_plan_${process.pid}`;
const url = await createDatabase(name);
try {
  const store = postgresStore({ connectionString: url });
  await store.migrate(NOW);
  await store.close();

  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => {}); // the database is dropped at the end, with force
  const captured = [];
  const db = new Kysely({ dialect: new PostgresDialect({ pool }), log: (e) => e.level === 'query' && captured.push(e.query) });

  const t0 = performance.now();
  await load(db, ROWS);
  await sql`vacuum analyze`.execute(db);
  const loaded = await counts(db);
  console.log(`loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(loaded)}\n`);

  console.log(`purge round: cutoff = now - 30 days, limit ${PURGE_BATCH}\n`);
  for (const step of PURGE_STEPS) {
    // The step's own statements, as the store runs them (rolled back: the next step sees the same backlog).
    captured.length = 0;
    let changed = 0;
    await db
      .transaction()
      .execute(async (trx) => {
        changed = await purgeStep(trx, step, { cutoff: CUTOFF, now: NOW, limit: PURGE_BATCH });
        throw new Rollback();
      })
      .catch((e) => {
        if (!(e instanceof Rollback)) throw e;
      });
    const statements = captured.filter((q) => !/^(begin|commit|rollback)/i.test(q.sql));
    console.log(`=== step ${step}: ${changed} rows, ${statements.length} statement(s)`);
    let buffers = 0;
    let ms = 0;
    await db
      .transaction()
      .execute(async (trx) => {
        for (const q of statements) {
          const { rows } = await trx.executeQuery({
            sql: `explain (analyze, buffers, format text) ${q.sql}`,
            parameters: q.parameters,
            query: q.query,
            queryId: q.queryId,
          });
          const text = rows.map((r) => r['QUERY PLAN']);
          console.log(`-- ${short(q.sql)}`);
          console.log(text.map((l) => `   ${l.length > 200 ? `${l.slice(0, 200)}…` : l}`).join('\n'));
          buffers += totalBuffers(text);
          ms += Number(/Execution Time: ([\d.]+)/.exec(text.join('\n'))?.[1] ?? 0);
        }
        throw new Rollback();
      })
      .catch((e) => {
        if (!(e instanceof Rollback)) throw e;
      });
    console.log(`   => step ${step}: buffers (hit+read) at the top nodes ${buffers}, ${ms.toFixed(1)} ms\n`);
  }
  await db.destroy();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await dropDatabase(name);
}

function short(text) {
  return text.replace(/\s+/g, ' ').slice(0, 160);
}

/** Shared hit + read of the plan's top node (its totals include its children's). */
function totalBuffers(lines) {
  const top = lines.findIndex((l) => /Buffers:/.test(l));
  if (top < 0) return 0;
  const m = /shared(?: hit=(\d+))?(?: read=(\d+))?/.exec(lines[top]);
  return Number(m?.[1] ?? 0) + Number(m?.[2] ?? 0);
}

async function counts(db) {
  const one = async (t) => Number((await sql`select count(*)::bigint as n from ${sql.table(t)}`.execute(db)).rows[0].n);
  const held = Number((await sql`select count(*)::bigint as n from iw_deliveries where status = 'held'`.execute(db)).rows[0].n);
  const sent = Number((await sql`select count(*)::bigint as n from iw_notices where status = 'sent'`.execute(db)).rows[0].n);
  return {
    events: await one('iw_events'),
    deliveries: await one('iw_deliveries'),
    held,
    attempts: await one('iw_attempts'),
    notices: await one('iw_notices'),
    sentNotices: sent,
  };
}

/**
 * Set-based load: `rows / 2` old events (created 31-60 days before NOW), two deliveries each,
 * finished shortly after; 1 in 5 deliveries has an attempt row; 1 in 50 failed. Then 5 % as many
 * recent events (last 30 days) with their deliveries, which must survive. Then held deliveries and
 * notices (see the top of the file).
 */
async function load(db, rows) {
  // a, b: enabled; c: disabled 45 days ago (its held deliveries expire); d: disabled 10 days ago (kept).
  const disabledAt = { c: NOW - 45 * DAY, d: NOW - 10 * DAY };
  await db
    .insertInto('iw_webhooks')
    .values(
      ['a', 'b', 'c', 'd'].map((w) => ({
        id: `webhook_${w}`,
        environment: 'default',
        name: w,
        description: null,
        endpoint: `https://example.com/${w}`,
        event_types: '["user.created"]',
        status: disabledAt[w] ? 'disabled' : 'enabled',
        disabled_reason: disabledAt[w] ? 'failing' : null,
        disabled_at: disabledAt[w] ?? null,
        failing_since: disabledAt[w] ? disabledAt[w] - 3 * DAY : null,
        last_error: disabledAt[w] ? 'expected HTTP 200, got 500' : null,
        created_at: NOW - 90 * DAY,
        updated_at: disabledAt[w] ?? NOW - 90 * DAY,
      })),
    )
    .execute();
  const batches = [
    { events: Math.floor(rows / 2), from: NOW - 60 * DAY, span: 29 * DAY, tag: 'o' },
    { events: Math.floor(rows / 40), from: NOW - 29 * DAY, span: 29 * DAY, tag: 'r' },
  ];
  const data = JSON.stringify({ user: { id: 'kp_0123456789abcdef', email: 'ada@example.com' } });
  for (const b of batches) {
    const at = sql`(${sql.lit(b.from)}::bigint + (x::bigint * ${sql.lit(b.span)}::bigint) / ${sql.lit(b.events)})`;
    await sql`insert into iw_events (id, environment, type, source, data, event_timestamp, created_at)
      select 'event_' || ${b.tag} || lpad(x::text, 9, '0'), 'default', 'user.created', 'admin', ${data}, ${at}, ${at}
      from generate_series(0, ${sql.lit(b.events - 1)}) as s(x)`.execute(db);
    for (const w of ['a', 'b']) {
      await sql`insert into iw_deliveries (id, environment, webhook_id, event_id, event_type, status, attempt_count, next_attempt_at, locked_by, locked_until, last_attempt_at, last_result, last_error, created_at, updated_at)
        select 'msg_' || ${w} || substr(e.id, 7), 'default', ${`webhook_${w}`}, e.id, 'user.created',
          case when hashtext(e.id || ${w}) % 50 = 0 then 'failed' else 'delivered' end, 1, null, null, null,
          e.created_at + 40, '200', null, e.created_at, e.created_at + 40 + abs(hashtext(e.id || ${w})) % 60000
        from iw_events e where e.id like ${`event_${b.tag}%`}`.execute(db);
    }
    await sql`insert into iw_attempts (id, delivery_id, webhook_id, environment, started_at, duration_ms, status_code, error_kind, error_message, response_excerpt, success)
      select 'attempt_' || substr(d.id, 5), d.id, d.webhook_id, 'default', d.created_at + 40, 12, 200, null, null, 'ok', 1
      from iw_deliveries d where d.event_id like ${`event_${b.tag}%`} and abs(hashtext(d.id)) % 5 = 0`.execute(db);
  }
  // Held deliveries (each with its own event), as a disable leaves them: created during the three
  // days of failures before it, last touched when it moved them to held.
  for (const [w, n] of [
    ['c', Math.floor(rows / 50)],
    ['d', Math.floor(rows / 200)],
  ]) {
    const from = disabledAt[w] - 3 * DAY;
    const at = sql`(${sql.lit(from)}::bigint + (x::bigint * ${sql.lit(3 * DAY)}::bigint) / ${sql.lit(n)})`;
    await sql`insert into iw_events (id, environment, type, source, data, event_timestamp, created_at)
      select 'event_h' || ${w} || lpad(x::text, 9, '0'), 'default', 'user.created', 'admin', ${data}, ${at}, ${at}
      from generate_series(0, ${sql.lit(n - 1)}) as s(x)`.execute(db);
    await sql`insert into iw_deliveries (id, environment, webhook_id, event_id, event_type, status, attempt_count, next_attempt_at, locked_by, locked_until, last_attempt_at, last_result, last_error, created_at, updated_at)
      select 'msg_h' || substr(e.id, 8), 'default', ${`webhook_${w}`}, e.id, 'user.created', 'held', 3, null, null, null,
        e.created_at + 40, '500', 'expected HTTP 200, got 500', e.created_at, ${sql.lit(disabledAt[w])}::bigint
      from iw_events e where e.id like ${`event_h${w}%`}`.execute(db);
  }
  // Notices: sent ones old (31-60 days) and recent (last 29 days); old failed and pending ones, which stay.
  const notices = [
    { n: Math.floor(rows / 50), from: NOW - 60 * DAY, span: 29 * DAY, status: 'sent', tag: 'o' },
    { n: Math.floor(rows / 500), from: NOW - 29 * DAY, span: 29 * DAY, status: 'sent', tag: 'r' },
    { n: Math.floor(rows / 1000), from: NOW - 60 * DAY, span: 29 * DAY, status: 'failed', tag: 'f' },
    { n: Math.floor(rows / 10000), from: NOW - 60 * DAY, span: 29 * DAY, status: 'pending', tag: 'p' },
  ];
  for (const b of notices) {
    const at = sql`(${sql.lit(b.from)}::bigint + (x::bigint * ${sql.lit(b.span)}::bigint) / ${sql.lit(b.n)})`;
    await sql`insert into iw_notices (id, environment, kind, webhook_id, payload, status, attempt_count, next_attempt_at, locked_by, locked_until, last_error, sent_at, created_at, updated_at)
      select 'notice_' || ${b.tag} || lpad(x::text, 9, '0'), 'env_' || (x % 1000)::text, 'webhook_disabled', 'webhook_n' || x::text,
        ${JSON.stringify({ failingSince: 0, disabledAt: 0, lastError: 'expected HTTP 200, got 500' })},
        ${sql.lit(b.status)}, case ${sql.lit(b.status)} when 'pending' then 3 else 1 end,
        case ${sql.lit(b.status)} when 'pending' then ${sql.lit(NOW + 3600_000)}::bigint end, null, null,
        case ${sql.lit(b.status)} when 'sent' then null else 'mail relay refused' end,
        case ${sql.lit(b.status)} when 'sent' then ${at} + 60000 end, ${at}, ${at} + 60000
      from generate_series(0, ${sql.lit(b.n - 1)}) as s(x)`.execute(db);
  }
}
