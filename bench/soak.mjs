// Soak: a steady emit load on PostgreSQL for `--minutes` (default 30) with 3 host processes
// (bench/soak-worker.mjs over the built package), one of them killed (SIGKILL) and restarted
// every `--kill-every` minutes (w1 and w2 in turn; w0 lives the whole run, for a clean RSS
// series), and the database restarted `--db-restarts` times (pg_ctl stop -m fast, down for
// `--outage-seconds`, start). The database is a throwaway cluster of the soak's own (initdb on a
// free port in a temp dir, removed at the end): the machine's server is never touched.
// `--pgbouncer` puts a PgBouncer (transaction mode) in front of it for every statement but the
// wake-ups. Not a test, not in `npm run bench`: `npm run build` first (and not again while it
// runs: a restarted worker loads dist/), then
//
//   node bench/soak.mjs --minutes=5 --kill-every=2 [--rate=20] [--outage-seconds=3] [--pgbouncer] [--out=FILE]
//
// It reports emitted, delivered, lost (must be 0), duplicates (and how many exchanges were in
// flight, i.e. leased, at each kill and restart: only those may arrive twice), RSS of each
// process per minute and its spread after the first 5 minutes (target within 10 %), and the
// workers' event-loop lateness p99 per minute (target under 20 ms). Figures go to bench/journal/.
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { postgresStore } from 'identity-webhooks/postgres';
import pg from 'pg';
import { benchArgs, numberArg } from './lib/args.mjs';
import { startThrowawayCluster } from './lib/cluster.mjs';
import { EVENT_DATA, EVENT_TYPE } from './lib/payload.mjs';
import { startPgBouncer } from './lib/pgbouncer.mjs';

const values = benchArgs(import.meta.url, {
  minutes: { type: 'string' },
  'kill-every': { type: 'string' },
  'db-restarts': { type: 'string' },
  'outage-seconds': { type: 'string' },
  rate: { type: 'string' },
  'receiver-delay-ms': { type: 'string' },
  'stats-seconds': { type: 'string' },
  pgbouncer: { type: 'boolean' },
  out: { type: 'string' },
});
const MINUTES = numberArg('minutes', values.minutes, 30, { min: 0.1, max: 24 * 60 });
const KILL_EVERY_MIN = numberArg('kill-every', values['kill-every'], 3, { min: 0.1 });
const DB_RESTARTS = numberArg('db-restarts', values['db-restarts'], 2, { min: 0, integer: true });
const OUTAGE_S = numberArg('outage-seconds', values['outage-seconds'], 3, { min: 0 });
const RATE = numberArg('rate', values.rate, 20, { min: 1 }); // events/s, each to 2 webhooks
const RECEIVER_DELAY_MS = numberArg('receiver-delay-ms', values['receiver-delay-ms'], 20, { min: 0 }); // exchanges stay in flight a while
const STATS_MS = numberArg('stats-seconds', values['stats-seconds'], 60, { min: 1 }) * 1000;
const VIA_PGBOUNCER = values.pgbouncer ?? false;
const OUT = values.out;
const DELIVERY = { leaseMs: 10_000, timeoutMs: 5_000 };

const log = (...a) => console.log(`[soak ${clock()}]`, ...a);
const t0 = performance.now();
const clock = () => {
  const s = (performance.now() - t0) / 1000;
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const minute = () => Math.floor((performance.now() - t0) / 60_000);

// ---- a throwaway cluster (bench/lib/cluster.mjs) ----------------------------------------------
const cluster = await startThrowawayCluster({ prefix: 'iw-soak' });
// Whatever happens (a failure, Ctrl-C), the cluster is stopped and its directory removed.
process.on('exit', () => cluster.remove());
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
const { port, dir, url: directUrl } = cluster;
const bouncer = VIA_PGBOUNCER ? await startPgBouncer(directUrl) : null;
process.on('exit', () => bouncer && !bouncer.closed && process.kill(bouncer.pid));
const storeUrl = bouncer ? bouncer.pooled(directUrl) : directUrl;
log(
  `cluster at 127.0.0.1:${port} (${dir})${bouncer ? `, PgBouncer ${bouncer.version} at ${bouncer.port}` : ''}; ${MINUTES} min, ${RATE} events/s x 2 webhooks, ` +
    `a kill every ${KILL_EVERY_MIN} min, ${DB_RESTARTS} database restarts of ${OUTAGE_S} s; ${cpus().length} cores, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
);

// ---- the receiver (the ledger) ------------------------------------------------------------
const counts = new Map(); // webhook-id -> arrivals
const byWorker = new Map();
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
    const w = String(req.headers['x-worker']).split('.')[0];
    byWorker.set(w, (byWorker.get(w) ?? 0) + 1);
    setTimeout(() => res.writeHead(200).end('ok'), RECEIVER_DELAY_MS);
  });
});
receiver.keepAliveTimeout = 5_000;
await new Promise((r) => receiver.listen(0, '127.0.0.1', 511, r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

// ---- the workers --------------------------------------------------------------------------
const key = await generateSigningKey();
const here = fileURLToPath(new URL('.', import.meta.url));
const samples = []; // { worker, incarnation, minute, rssMB, heapMB, loopP99Ms, loopMaxMs }
const incarnations = new Map(); // slot -> n
const workers = new Map(); // slot -> { id, child, startedMinute }

function spawnWorker(slot, control = false) {
  const n = (incarnations.get(slot) ?? 0) + 1;
  incarnations.set(slot, n);
  const id = `${slot}.${n}`;
  const child = fork(join(here, 'soak-worker.mjs'), [], {
    env: {
      ...process.env,
      SOAK_URL: storeUrl,
      ...(bouncer ? { SOAK_DIRECT_URL: directUrl } : {}),
      WORKER_ID: id,
      SOAK_KEY: JSON.stringify(key),
      SOAK_DELIVERY: JSON.stringify(DELIVERY),
      SOAK_STATS_MS: String(STATS_MS),
      ...(control ? { SOAK_CONTROL: '1' } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const w = { id, slot, child, startedAt: performance.now(), exited: false };
  child.on('exit', () => (w.exited = true));
  child.on('message', (m) => {
    if (m?.type === 'stats')
      samples.push({ worker: id, minute: minute(), lifeMinute: Math.round((performance.now() - w.startedAt) / 60_000), ...m });
  });
  workers.set(slot, w);
  return new Promise((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`${id} not ready within 60 s`)), 60_000);
    child.on('message', (m) => m?.type === 'ready' && (clearTimeout(timer), ready(w)));
    child.once('exit', (code) => (clearTimeout(timer), fail(new Error(`${id} exited (${code}) before ready`))));
  });
}

await Promise.all(['w0', 'w1', 'w2'].map((slot) => spawnWorker(slot)));
await spawnWorker('idle', true);
const admin = new pg.Pool({ connectionString: directUrl, max: 2 });
admin.on('error', () => {});
const emitterStore = postgresStore({
  connectionString: storeUrl,
  ...(bouncer ? { directConnectionString: directUrl } : {}),
  maxConnections: 8,
  onError: () => {},
});
const emitter = createWebhooks({ store: emitterStore, keys: [key], issuer: 'http://127.0.0.1/', allowPrivateNetworks: true });
for (const name of ['a', 'b']) await emitter.webhooks.create({ name, endpoint: `${receiverUrl}/${name}`, eventTypes: [EVENT_TYPE] });

// ---- the steady load ----------------------------------------------------------------------
const emitted = new Set();
let events = 0;
let emitFailures = 0;
const emitErrors = [];
let outstanding = 0;
let behind = 0;
let sent = 0;
let emitting = true;
const loadStart = performance.now();
const MAX_OUTSTANDING = 500;
const loadTimer = setInterval(() => {
  if (!emitting) return;
  // By the clock, not by ticks: a late timer (a busy machine) catches up instead of lowering the rate.
  for (const due = Math.floor(((performance.now() - loadStart) / 1000) * RATE); sent < due; sent++) {
    if (outstanding >= MAX_OUTSTANDING) {
      behind++;
      continue;
    }
    outstanding++;
    emitter
      .emit({ type: EVENT_TYPE, source: 'admin', data: EVENT_DATA })
      .then(
        (r) => {
          events++;
          for (const id of r.deliveryIds) emitted.add(id);
        },
        (error) => {
          if (emitFailures++ < 3) emitErrors.push(`${clock()} ${error.code ?? ''} ${error.message}`.slice(0, 300));
        },
      )
      .finally(() => void outstanding--);
  }
}, 50);

// ---- the disruptions ----------------------------------------------------------------------
const leased = async (worker) => {
  const { rows } = await admin.query(
    `select id from iw_deliveries where status = 'pending' and locked_by is not null${worker ? ' and locked_by = $1' : ''}`,
    worker ? [worker] : [],
  );
  return rows.map((r) => r.id);
};
const disruptions = []; // { at, what, inFlight: Set }
const plan = [];
for (let k = 1; k * KILL_EVERY_MIN < MINUTES - 0.25; k++) plan.push({ atMin: k * KILL_EVERY_MIN, what: 'kill' });
for (let i = 0; i < DB_RESTARTS; i++) plan.push({ atMin: ((i + 0.5) / DB_RESTARTS) * MINUTES, what: 'db' });
plan.sort((a, b) => a.atMin - b.atMin);
let victim = 0;
for (const step of plan) {
  const wait = t0 + step.atMin * 60_000 - performance.now();
  if (wait > 0) await sleep(wait);
  if (step.what === 'kill') {
    const slot = ['w1', 'w2'][victim++ % 2];
    const w = workers.get(slot);
    const gone = new Promise((r) => (w.exited ? r() : w.child.once('exit', r)));
    w.child.kill('SIGKILL');
    await gone;
    // Read at once, well within the lease: what it held is all it can have sent unrecorded.
    const inFlight = new Set(await leased(w.id).catch(() => []));
    disruptions.push({ at: clock(), what: `SIGKILL ${w.id}`, inFlight });
    await spawnWorker(slot);
    log(`killed ${w.id} holding ${inFlight.size} leases; ${workers.get(slot).id} started`);
  } else {
    const inFlight = new Set(await leased().catch(() => []));
    const s0 = performance.now();
    cluster.stop();
    await sleep(OUTAGE_S * 1000);
    cluster.start();
    const down = performance.now() - s0;
    disruptions.push({ at: clock(), what: `database restart (down ${(down / 1000).toFixed(1)} s)`, inFlight });
    log(`database restarted: down ${(down / 1000).toFixed(1)} s, ${inFlight.size} deliveries leased at the stop`);
  }
}
const endAt = t0 + MINUTES * 60_000;
while (performance.now() < endAt) {
  await sleep(Math.min(10_000, endAt - performance.now()));
  log(
    `${events} events, ${emitted.size} deliveries emitted, ${counts.size} arrived; ${emitFailures} emit failures, ${behind} ticks behind`,
  );
}

// ---- drain and report ---------------------------------------------------------------------
emitting = false;
clearInterval(loadTimer);
while (outstanding > 0) await sleep(100);
const drainStart = performance.now();
const pending = async () =>
  Number(
    (await admin.query("select count(*)::int as n from iw_deliveries where status <> 'delivered'").catch(() => ({ rows: [{ n: -1 }] })))
      .rows[0].n,
  );
// Until everything arrived, or nothing more arrives for a minute (a machine too busy to keep up
// drains slowly, but drains), or 15 minutes.
let lastProgress = performance.now();
let arrivedBefore = counts.size;
while (performance.now() - drainStart < 900_000 && performance.now() - lastProgress < 60_000) {
  const missing = [...emitted].filter((id) => !counts.has(id)).length;
  if (missing === 0 && (await pending()) === 0) break;
  if (counts.size > arrivedBefore) (arrivedBefore = counts.size), (lastProgress = performance.now());
  await sleep(500);
}
// Not arrived: lost only if the database no longer has it waiting (recorded without an arrival,
// or gone); still pending there, it is late (the drain gave up), not lost.
const notArrived = [...emitted].filter((id) => !counts.has(id));
const stillPending = new Set(
  (
    await admin
      .query("select id from iw_deliveries where id = any($1::text[]) and status = 'pending'", [notArrived])
      .catch(() => ({ rows: [] }))
  ).rows.map((r) => r.id),
);
// A graceful stop of each engine; the idle control just ends.
workers.get('idle').child.kill();
const stops = await Promise.all(
  [...workers.values()]
    .filter((w) => w.slot !== 'idle')
    .map(
      (w) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve({ id: w.id, errors: -1 }), 30_000);
          w.child.on(
            'message',
            (m) => m?.type === 'stopped' && (clearTimeout(timer), resolve({ id: w.id, errors: m.errors, firstErrors: m.firstErrors })),
          );
          w.child.send({ type: 'stop' });
        }),
    ),
);
await emitter.close();
await admin.end();
await new Promise((r) => (receiver.closeAllConnections(), receiver.close(r)));
await bouncer?.close();
cluster.stop();
const postgresLog = readFileSync(cluster.log, 'utf8');
cluster.remove();

const lost = notArrived.filter((id) => !stillPending.has(id));
const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
const anyInFlight = new Set(disruptions.flatMap((d) => [...d.inFlight]));
const unknown = [...counts.keys()].filter((id) => !emitted.has(id)).length;
const perDisruption = disruptions.map((d) => ({
  at: d.at,
  what: d.what,
  inFlight: d.inFlight.size,
  duplicatesAmongThem: duplicates.filter((id) => d.inFlight.has(id)).length,
}));
const byIncarnation = Map.groupBy ? Map.groupBy(samples, (s) => s.worker) : groupBy(samples, (s) => s.worker);
const rss = [...byIncarnation].map(([worker, xs]) => {
  const later = xs.filter((s) => s.lifeMinute >= 5).map((s) => s.rssMB);
  const spread = later.length >= 2 ? (Math.max(...later) - Math.min(...later)) / Math.min(...later) : null;
  return {
    worker,
    perMinuteMB: xs.map((s) => Math.round(s.rssMB)),
    spreadAfter5Min: spread,
    loopP99PerMinuteMs: xs.map((s) => Math.round(s.loopP99Ms * 10) / 10),
    loopMaxMs: Math.max(0, ...xs.map((s) => s.loopMaxMs)),
  };
});
const engineSamples = samples.filter((s) => !s.worker.startsWith('idle'));
const loopP99Max = Math.max(0, ...engineSamples.map((s) => s.loopP99Ms));
const controlP99Max = Math.max(0, ...samples.filter((s) => s.worker.startsWith('idle')).map((s) => s.loopP99Ms));
const summary = {
  startedAt: new Date(Date.now() - (performance.now() - t0)).toISOString(),
  minutes: MINUTES,
  via: bouncer ? `PgBouncer ${bouncer.version} (transaction mode), wake-ups direct` : 'direct',
  ratePerSec: RATE,
  cores: cpus().length,
  loadAverageAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
  events,
  emitted: emitted.size,
  emitFailures,
  emitErrors,
  ticksBehind: behind,
  delivered: emitted.size - notArrived.length,
  lost: lost.length,
  pendingWhenTheDrainGaveUp: stillPending.size,
  duplicates: duplicates.length,
  duplicatesOutsideInFlight: duplicates.filter((id) => !anyInFlight.has(id)).length,
  arrivalsOfUnknownIds: unknown,
  drainSeconds: Math.round((performance.now() - drainStart) / 100) / 10,
  disruptions: perDisruption,
  perWorkerArrivals: Object.fromEntries(byWorker),
  rss,
  loopP99MaxMs: Math.round(loopP99Max * 10) / 10,
  idleControlLoopP99MaxMs: Math.round(controlP99Max * 10) / 10,
  workerErrors: stops,
  postgresFatalLines: postgresLog
    .split('\n')
    .filter(
      (l) =>
        /PANIC|FATAL/.test(l) &&
        !/terminating connection due to administrator command|the database system is (shutting down|starting up)/.test(l),
    ).length,
};
console.log(JSON.stringify(summary, null, 2));
if (OUT) writeFileSync(OUT, `${JSON.stringify(summary, null, 2)}\n`);
log(
  `emitted ${summary.emitted}, delivered ${summary.delivered}, lost ${summary.lost}, duplicates ${summary.duplicates} ` +
    `(${summary.duplicatesOutsideInFlight} outside what was in flight); event-loop p99 (worst minute) ${summary.loopP99MaxMs} ms, ` +
    `an idle process beside them ${summary.idleControlLoopP99MaxMs} ms`,
);
process.exit(lost.length === 0 ? 0 : 1);

function groupBy(xs, key) {
  const m = new Map();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}
