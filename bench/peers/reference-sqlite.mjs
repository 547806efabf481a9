// The reference: a durable webhook pipeline written by hand on raw better-sqlite3, the way a
// careful user would, with none of the engine's code. WAL with synchronous=NORMAL (as the
// engine's adapter: durable across a process crash; an OS crash can drop the last commits), one
// `UPDATE … RETURNING` claim of a batch of due rows with a lease (a crashed worker's rows come
// due again), one RS256 signature per event per claim (jose), undici keep-alive, outcomes
// group-committed. Retries are durable (next_attempt_at); none happen here, every answer is 200.
//
// Config: { deliveries, fanout, inFlight, receiver, dir }. Fan-out F: deliveries / F events,
// each to F endpoints (one receiver port each); fan-out 1: ONE endpoint.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { EVENT_DATA, EVENT_TYPE } from '../lib/payload.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { tempDir } from '../lib/tmp.mjs';
import { checkOnce, figures, makeSender, makeSigner, timedWindow } from './common.mjs';
import { runPipeline } from './pipeline.mjs';

const LEASE_MS = 60_000;
const RETRY_MS = 5_000;

const SCHEMA = `
create table events (id text primary key, type text not null, source text not null, data text not null, event_timestamp integer not null);
create table deliveries (
  id text primary key, event_id text not null, endpoint text not null,
  status text not null default 'pending', attempt_count integer not null default 0,
  next_attempt_at integer not null, locked_by text, locked_until integer);
create index deliveries_due on deliveries (next_attempt_at) where status = 'pending';
create table attempts (
  seq integer primary key, delivery_id text not null, started_at integer not null, duration_ms real not null,
  status_code integer, error text, success integer not null);
`;

export default async function referenceSqlite(config) {
  const { deliveries, fanout, inFlight, receiver } = config;
  const endpoints = Array.from({ length: fanout }, (_, i) => `${receiver.urls[i % receiver.urls.length]}/ok/${i}`);
  const dir = tempDir('peers-ref');
  const db = new Database(join(dir.path, 'ref.db'));
  const sender = makeSender({ connections: inFlight, format: config.format });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(SCHEMA);
    const worker = `worker-${process.pid}`;
    const sign = await makeSigner({ format: config.format });

    const claimStmt =
      db.prepare(`update deliveries set locked_by = ?, locked_until = ?, next_attempt_at = ?, attempt_count = attempt_count + 1
      where id in (select id from deliveries where status = 'pending' and next_attempt_at <= ? order by next_attempt_at limit ?)
      returning id, event_id, endpoint`);
    const eventsStmt = db.prepare(
      'select id, type, source, data, event_timestamp from events where id in (select value from json_each(?))',
    );
    const claim = (limit) => {
      const now = Date.now();
      const rows = claimStmt.all(worker, now + LEASE_MS, now + LEASE_MS, now, limit);
      if (rows.length === 0) return rows;
      const events = new Map();
      for (const e of eventsStmt.all(JSON.stringify([...new Set(rows.map((r) => r.event_id))])))
        events.set(e.id, { id: e.id, type: e.type, source: e.source, data: JSON.parse(e.data), eventTimestamp: e.event_timestamp });
      return rows.map((r) => ({ id: r.id, endpoint: r.endpoint, event: events.get(r.event_id) }));
    };

    const insertAttempt = db.prepare(
      'insert into attempts (delivery_id, started_at, duration_ms, status_code, error, success) values (?, ?, ?, ?, ?, ?)',
    );
    const markDelivered = db.prepare(
      "update deliveries set status = 'delivered', locked_by = null, locked_until = null where id = ? and locked_by = ?",
    );
    const markRetry = db.prepare(
      'update deliveries set next_attempt_at = ?, locked_by = null, locked_until = null where id = ? and locked_by = ?',
    );
    const write = db.transaction((group) => {
      for (const o of group) {
        insertAttempt.run(o.id, o.startedAt, o.durationMs, o.statusCode, o.error, o.success ? 1 : 0);
        if (o.success) markDelivered.run(o.id, worker);
        else markRetry.run(o.startedAt + RETRY_MS, o.id, worker);
      }
    });

    const load = (events, dueAt) => {
      const prefix = `evt_${Date.now().toString(36)}_`;
      db.transaction(() => {
        db.prepare(`with recursive s(x) as (select 0 union all select x + 1 from s where x + 1 < ?)
          insert into events (id, type, source, data, event_timestamp) select ? || printf('%09d', x), ?, 'admin', ?, ? + x from s`).run(
          events,
          prefix,
          EVENT_TYPE,
          JSON.stringify(EVENT_DATA),
          dueAt,
        );
        // Each event's deliveries together, as an emit writes them (ids in event order).
        db.prepare(`insert into deliveries (id, event_id, endpoint, next_attempt_at)
          select 'msg_' || e.id || '_' || printf('%02d', w.key), e.id, w.value, e.event_timestamp
          from events e cross join json_each(?) w where e.id like ? || '%' order by e.id, w.key`).run(JSON.stringify(endpoints), prefix);
      })();
    };
    const run = () => runPipeline({ claim, write, sign, send: sender.send, inFlight });

    // Warm-up through the same path: connections open, statements prepared, JIT warm.
    load(Math.max(1, Math.ceil(64 / fanout)), Date.now() - 1000);
    await run();
    const warm = db.prepare("select count(*) as n from deliveries where status = 'delivered'").get().n;

    const events = Math.ceil(deliveries / fanout);
    load(events, Date.now() - events);
    const expected = events * fanout;
    await receiverControl(receiver.urls).reset();
    const { result: stats, seconds, cpu } = await timedWindow('reference-sqlite', run);

    const recorded = db.prepare("select count(*) as n from deliveries where status = 'delivered'").get().n - warm;
    const a = db.prepare('select count(*) as n, count(distinct delivery_id) as d from attempts').get();
    const check = await checkOnce(receiver.urls, { expected, recorded, attempts: a.n - warm, distinct: a.d - warm });
    return { ...figures({ deliveries: expected, seconds, cpu, check }), claims: stats.claims, groups: stats.groups };
  } finally {
    await sender.close();
    db.close();
    dir.cleanup();
  }
}
