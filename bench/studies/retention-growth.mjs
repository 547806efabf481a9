// 90 simulated days on a real SQLite file with retention: does the file stop growing?
//
//   npm run build && node bench/studies/retention-growth.mjs
//
// A real engine (identity-webhooks over the built dist) on a SQLite file and a ManualClock; a
// receiver on 127.0.0.1 with two healthy endpoints, one that fails each delivery's first attempt
// (retried 5 s later) and one that always fails (disabled at ~75 h; its held deliveries expire
// after 30 days and are purged 30 days later). EVENTS_PER_HOUR events (default 2) every simulated
// hour for DAYS days (default 90), retention 30 days. Prints, every 5 days: the file (main + WAL),
// SQLite's page count and free pages, and the rows of each table (notices included).

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhooks, generateSigningKey, ManualClock } from 'identity-webhooks';
import { sqliteStore } from 'identity-webhooks/sqlite';
import { benchArgs } from '../lib/args.mjs';
import { EVENT_DATA } from '../lib/engine.mjs';

// Its settings are environment variables (above); no arguments.
benchArgs(import.meta.url, {});

const DAYS = Number(process.env.DAYS ?? 90);
const EVENTS_PER_HOUR = Number(process.env.EVENTS_PER_HOUR ?? 2);
const HOUR = 3600_000;

const seen = new Set();
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['webhook-id']);
    let status = 200;
    if (req.url === '/dead') status = 500;
    else if (req.url === '/flaky' && !seen.has(id)) {
      seen.add(id); // fails the first attempt of each delivery
      status = 503;
    } else if (req.url === '/flaky') seen.delete(id);
    res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${receiver.address().port}`;

const dir = mkdtempSync(join(tmpdir(), 'iw-growth-'));
const filename = join(dir, 'webhooks.db');
const store = sqliteStore({ filename });
// WAL_LIMIT_MB=n sets SQLite's journal_size_limit on the store's connection: a WAL that grew
// during a burst is truncated back to n MB at its next reset (SQLite's default keeps it at its
// high-water mark for good).
if (process.env.WAL_LIMIT_MB) {
  const bytes = Number(process.env.WAL_LIMIT_MB) * 1048576;
  await store.kysely.executeQuery({ sql: `pragma journal_size_limit = ${bytes}`, parameters: [], query: undefined, queryId: undefined });
}
const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
let errors = 0;
const hooks = createWebhooks({
  store,
  keys: [await generateSigningKey()],
  issuer: 'https://id.example.com',
  clock,
  allowPrivateNetworks: true,
  retention: { days: 30 },
  delivery: { pollIntervalMs: HOUR, timeoutMs: 5000 },
  // The default schedule without jitter: retries due together are attempted in one pass.
  backoff: { jitter: 0 },
  notifier: { webhookDisabled: () => {} },
  logger: { warn: () => {}, error: (m) => (errors++ < 3 ? console.error(m) : undefined) },
});
await hooks.start();
for (const [name, path] of [
  ['CRM', '/ok'],
  ['Billing', '/ok'],
  ['Analytics', '/flaky'],
  ['Legacy', '/dead'],
])
  await hooks.webhooks.create({ name, endpoint: `${base}${path}`, eventTypes: ['user.created'] });

const data = EVENT_DATA;

const size = (f) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};
const count = async (table) =>
  Number(
    (
      await store.kysely
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const pragma = async (name) =>
  Object.values(
    (
      await store.kysely
        .executeQuery({ sql: `pragma ${name}`, parameters: [], query: undefined, queryId: undefined })
        .catch(() => ({ rows: [{}] }))
    ).rows[0] ?? {},
  )[0];
const mb = (n) => (n / 1048576).toFixed(2);

const rows = [];
const sample = async (day) => {
  const main = size(filename);
  const wal = size(`${filename}-wal`);
  const row = {
    day,
    main,
    wal,
    pages: Number(await pragma('page_count')),
    free: Number(await pragma('freelist_count')),
    events: await count('iw_events'),
    deliveries: await count('iw_deliveries'),
    attempts: await count('iw_attempts'),
    notices: await count('iw_notices'),
  };
  rows.push(row);
  console.log(
    `| ${String(day).padStart(3)} | ${mb(main).padStart(6)} | ${mb(wal).padStart(5)} | ${mb(main + wal).padStart(6)} | ${String(row.pages).padStart(6)} | ${String(row.free).padStart(5)} | ${String(row.events).padStart(6)} | ${String(row.deliveries).padStart(6)} | ${String(row.attempts).padStart(6)} | ${String(row.notices).padStart(3)} |`,
  );
};

const t0 = performance.now();
console.log(
  `${EVENTS_PER_HOUR} events/hour x ${DAYS} days, 4 webhooks (2 healthy, 1 fails each first attempt, 1 dead), retention 30 days${process.env.WAL_LIMIT_MB ? `, journal_size_limit ${process.env.WAL_LIMIT_MB} MB` : ''}`,
);
console.log('| day | main MB | WAL MB | total MB | pages | free pages | events | deliveries | attempts | notices |');
console.log('|----:|-------:|------:|-------:|------:|------:|------:|------:|------:|----:|');
await sample(0);
for (let hour = 1; hour <= DAYS * 24; hour++) {
  // The hour's events in one host transaction, then one wake-up: one pass delivers them all.
  await store.kysely.transaction().execute(async (trx) => {
    for (let i = 0; i < EVENTS_PER_HOUR; i++) await hooks.emit({ type: 'user.created', source: 'user', data }, { transaction: trx });
  });
  hooks.wake();
  await hooks.drain();
  await clock.advance(HOUR);
  await hooks.drain();
  if (hour % 24 === 0 && ((hour / 24) % 5 === 0 || hour / 24 === 1)) await sample(hour / 24);
}
const wall = (performance.now() - t0) / 1000;
await hooks.close();
receiver.close();
const after30 = rows.filter((r) => r.day >= 35);
const max = Math.max(...after30.map((r) => r.main));
const min = Math.min(...after30.map((r) => r.main));
console.log(
  `\n${(wall).toFixed(1)} s wall; main file from day 35 on: ${mb(min)}-${mb(max)} MB (${(((max - min) / min) * 100).toFixed(1)} % spread); errors logged: ${errors}`,
);
rmSync(dir, { recursive: true, force: true });
