// The list's stats, first calls of one process: 1,000 webhooks with a counter row for every hour
// of 30 days (what the list reads at any number of deliveries), the day's settled hours packed;
// each call on a new engine, after a one-row log page (its migration check not counted). Prints
// each call's wall / CPU ms in order: the first is this process's first run of the stats path.
// KIND=sqlite (default postgres), CALLS=8, PROF=file.cpuprofile (a CPU profile of the first call
// only; read it with bench/studies/profile-summary.mjs), WARMPOOL=1 (4 connections opened first).
// Run: npm run build && node bench/studies/list-first-call.mjs

import { mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { postgresStore } from 'identity-webhooks/postgres';
import { sqliteStore } from 'identity-webhooks/sqlite';
import pg from 'pg';
import { benchArgs } from '../lib/args.mjs';
import { createDatabase, dropDatabase } from '../lib/postgres.mjs';

// Its settings are environment variables (above); no arguments.
benchArgs(import.meta.url, {});

const KIND = process.env.KIND ?? 'postgres';
const HOUR = 3_600_000,
  W = 1000,
  ENV = 'bench';
const now = Date.now();
const end = now - (now % HOUR) + HOUR;
const start = end - 30 * 24 * HOUR;
const TYPES = JSON.stringify(['user.created']);
let store, name;
if (KIND === 'postgres') {
  name = `iw_cold_${process.pid}`;
  const url = await createDatabase(name);
  const s0 = postgresStore({ connectionString: url });
  await s0.migrate(now);
  await s0.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(
    `insert into iw_webhooks (id, environment, name, description, endpoint, event_types, status, created_at, updated_at)
    select 'webhook_' || lpad(i::text, 6, '0'), $1, 'Hook ' || i, null, 'https://example.com/' || i, $2, 'enabled', $3::bigint + i, $3::bigint + i from generate_series(0, ${W - 1}) i`,
    [ENV, TYPES, start],
  );
  await c.query(
    `insert into iw_webhook_hours (webhook_id, hour, environment, succeeded, failed, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9)
    select 'webhook_' || lpad(w::text, 6, '0'), h, $1, 14, 1, 0, 7, 3, 1, 1, 0, 0, 0, 0, 0 from generate_series(0, ${W - 1}) w, generate_series($2::bigint, $3::bigint, ${HOUR}) h`,
    [ENV, start, end - HOUR],
  );
  await c.query('vacuum analyze');
  await c.end();
  store = postgresStore({ connectionString: url });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'iw-cold-'));
  const file = join(dir, 'b.db');
  const s0 = sqliteStore({ filename: file });
  await s0.migrate(now);
  await s0.close();
  const db = new Database(file);
  const ih = db.prepare(
    'insert into iw_webhooks (id, environment, name, description, endpoint, event_types, status, created_at, updated_at) values (?, ?, ?, null, ?, ?, ?, ?, ?)',
  );
  const hh = db.prepare(
    `insert into iw_webhook_hours (webhook_id, hour, environment, succeeded, failed, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) values (?, ?, '${ENV}', 14, 1, 0, 7, 3, 1, 1, 0, 0, 0, 0, 0)`,
  );
  db.transaction(() => {
    for (let i = 0; i < W; i++) {
      const id = `webhook_${String(i).padStart(6, '0')}`;
      ih.run(id, ENV, `Hook ${i}`, `https://example.com/${i}`, TYPES, 'enabled', start + i, start + i);
      for (let h = start; h < end; h += HOUR) hh.run(id, h);
    }
  })();
  db.exec('analyze');
  db.close();
  store = sqliteStore({ filename: file });
}
const logger = { warn: () => {}, error: (m) => console.error(m) };
const hourNow = now - (now % HOUR);
for (let h = hourNow - 23 * HOUR; h < hourNow - HOUR; h += HOUR) await store.packHours({ since: h, until: h + HOUR });
if (process.env.WARMPOOL) {
  const w = createWebhooks({ store, keys: [await generateSigningKey()], issuer: 'https://auth.example.com', logger });
  await Promise.all([1, 2, 3, 4].map(() => w.deliveries.list({ environment: ENV, webhookId: 'webhook_000042', limit: 1 })));
}
const session = process.env.PROF ? new Session() : null;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
}
const out = [];
for (let i = 0; i < Number(process.env.CALLS ?? 8); i++) {
  const fresh = createWebhooks({ store, keys: [await generateSigningKey()], issuer: 'https://auth.example.com', logger });
  await fresh.deliveries.list({ environment: ENV, webhookId: 'webhook_000042', limit: 1 });
  if (session && i === 0) await session.post('Profiler.start');
  const c = process.cpuUsage();
  const t = performance.now();
  const r = await fresh.webhooks.stats({ environment: ENV });
  const ms = performance.now() - t;
  const u = process.cpuUsage(c);
  if (session && i === 0) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.PROF, JSON.stringify(profile));
  }
  out.push(`${ms.toFixed(1)}/${((u.user + u.system) / 1000).toFixed(1)}`);
  if (r.length !== W) throw new Error('bad');
}
console.log(KIND, 'first calls ms/cpu:', out.join(' '));
await store.close();
if (name) await dropDatabase(name);
