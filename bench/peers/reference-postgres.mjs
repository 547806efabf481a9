// The reference on PostgreSQL: the same hand-written pipeline as reference-sqlite.mjs with pg.
// The claim is one statement (`FOR UPDATE SKIP LOCKED`, so several workers could share the
// table; the lease moves next_attempt_at, so a crashed worker's rows come due again) that also
// returns each row's event; a group of outcomes is written by one statement (attempt rows and
// both kinds of delivery update in CTEs: one round trip, one transaction, one WAL flush).
// Durable: PostgreSQL with its defaults (synchronous_commit on).
//
// Config: { deliveries, fanout, inFlight, receiver, pgPrefix }.
import pg from 'pg';
import { EVENT_DATA, EVENT_TYPE } from '../lib/payload.mjs';
import { createDatabase } from '../lib/postgres.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { checkOnce, figures, makeSender, makeSigner, timedWindow } from './common.mjs';
import { runPipeline } from './pipeline.mjs';

const LEASE_MS = 60_000;
const RETRY_MS = 5_000;

const SCHEMA = `
create table events (id text primary key, type text not null, source text not null, data jsonb not null, event_timestamp bigint not null);
create table deliveries (
  id text primary key, event_id text not null, endpoint text not null,
  status text not null default 'pending', attempt_count integer not null default 0,
  next_attempt_at bigint not null, locked_by text, locked_until bigint);
create index deliveries_due on deliveries (next_attempt_at) where status = 'pending';
create table attempts (
  seq bigserial primary key, delivery_id text not null, started_at bigint not null, duration_ms real not null,
  status_code integer, error text, success boolean not null);
`;

const CLAIM = `
with due as (
  select id from deliveries where status = 'pending' and next_attempt_at <= $1
  order by next_attempt_at limit $2 for update skip locked
), claimed as (
  update deliveries d set locked_by = $3, locked_until = $4, next_attempt_at = $4, attempt_count = d.attempt_count + 1
  from due where d.id = due.id
  returning d.id, d.endpoint, d.event_id
)
select c.id, c.endpoint, e.id as event_id, e.type, e.source, e.data, e.event_timestamp
from claimed c join events e on e.id = c.event_id`;

const WRITE = `
with o as (
  select * from unnest($1::text[], $2::bigint[], $3::real[], $4::int[], $5::text[], $6::boolean[])
    as o(delivery_id, started_at, duration_ms, status_code, error, success)
), a as (
  insert into attempts (delivery_id, started_at, duration_ms, status_code, error, success) select * from o
), ok as (
  update deliveries d set status = 'delivered', locked_by = null, locked_until = null
  from o where o.success and d.id = o.delivery_id and d.locked_by = $7
), retry as (
  update deliveries d set next_attempt_at = o.started_at + ${RETRY_MS}, locked_by = null, locked_until = null
  from o where not o.success and d.id = o.delivery_id and d.locked_by = $7
)
select 1`;

export default async function referencePostgres(config) {
  const { deliveries, fanout, inFlight, receiver, pgPrefix } = config;
  const endpoints = Array.from({ length: fanout }, (_, i) => `${receiver.urls[i % receiver.urls.length]}/ok/${i}`);
  const url = await createDatabase(`${pgPrefix}_ref`); // dropped by peers.mjs afterwards
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const sender = makeSender({ connections: inFlight, format: config.format });
  try {
    await pool.query(SCHEMA);
    const worker = `worker-${process.pid}`;
    const sign = await makeSigner({ format: config.format });

    const claim = async (limit) => {
      const now = Date.now();
      const { rows } = await pool.query({ name: 'claim', text: CLAIM, values: [now, limit, worker, now + LEASE_MS] });
      return rows.map((r) => ({
        id: r.id,
        endpoint: r.endpoint,
        event: { id: r.event_id, type: r.type, source: r.source, data: r.data, eventTimestamp: Number(r.event_timestamp) },
      }));
    };
    const write = async (group) => {
      await pool.query({
        name: 'write',
        text: WRITE,
        values: [
          group.map((o) => o.id),
          group.map((o) => o.startedAt),
          group.map((o) => o.durationMs),
          group.map((o) => o.statusCode),
          group.map((o) => o.error),
          group.map((o) => o.success),
          worker,
        ],
      });
    };

    const load = async (events, dueAt) => {
      const prefix = `evt_${Date.now().toString(36)}_`;
      const client = await pool.connect();
      try {
        await client.query('begin');
        await client.query(
          `insert into events (id, type, source, data, event_timestamp)
           select $1 || lpad(x::text, 9, '0'), $2, 'admin', $3::jsonb, $4::bigint + x from generate_series(0, $5::int - 1) as s(x)`,
          [prefix, EVENT_TYPE, JSON.stringify(EVENT_DATA), dueAt, events],
        );
        // Each event's deliveries together, as an emit writes them (ids in event order).
        await client.query(
          `insert into deliveries (id, event_id, endpoint, next_attempt_at)
           select 'msg_' || e.id || '_' || lpad((w.i - 1)::text, 2, '0'), e.id, w.endpoint, e.event_timestamp
           from events e cross join unnest($1::text[]) with ordinality as w(endpoint, i) where e.id like $2 || '%' order by e.id, w.i`,
          [endpoints, prefix],
        );
        await client.query('commit');
      } finally {
        client.release();
      }
      await pool.query('analyze');
    };
    const run = () => runPipeline({ claim, write, sign, send: sender.send, inFlight });
    const count = async (text) => (await pool.query(text)).rows[0];

    await load(Math.max(1, Math.ceil(64 / fanout)), Date.now() - 1000);
    await run();
    const warm = Number((await count("select count(*) as n from deliveries where status = 'delivered'")).n);

    const events = Math.ceil(deliveries / fanout);
    await load(events, Date.now() - events);
    const expected = events * fanout;
    await receiverControl(receiver.urls).reset();
    const { result: stats, seconds, cpu } = await timedWindow('reference-postgres', run);

    const recorded = Number((await count("select count(*) as n from deliveries where status = 'delivered'")).n) - warm;
    const a = await count('select count(*) as n, count(distinct delivery_id) as d from attempts');
    const check = await checkOnce(receiver.urls, { expected, recorded, attempts: Number(a.n) - warm, distinct: Number(a.d) - warm });
    return { ...figures({ deliveries: expected, seconds, cpu, check }), claims: stats.claims, groups: stats.groups };
  } finally {
    await sender.close();
    await pool.end();
  }
}
