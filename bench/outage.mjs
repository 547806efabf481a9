// Outage reproduction: duplicates and losses when PostgreSQL stops mid-run for longer than a lease.
//
// A throwaway cluster (initdb on a free port in a temp dir, as bench/soak.mjs: the machine's
// server is never touched), 3 worker processes (outage-worker.mjs over ENGINE/dist), a receiver on
// 127.0.0.1 that notes the webhook-id of every 200 it sends, a backlog emitted before the workers
// start. Once `--stop-at` of it is answered, PostgreSQL is stopped (pg_ctl stop -m fast) for
// `--outage` seconds and started again; then the run waits for the drain. Bounded: it reports and
// exits after `--max-s` seconds whatever happened.
//
//   node bench/outage.mjs --outage=6 [--engine=DIR] [--backlog=3000] [--webhooks=10] [--delay-ms=1000]
//        [--lease-ms=10000] [--timeout-ms=5000] [--stop-at=0.3] [--kill=none|before|during]
//        [--out=FILE.jsonl] [--verbose]
//
// `--kill=before`: SIGKILL w2 at the stop point with no outage (`--outage=0`) or just before the
// stop; `during`: halfway through the outage. Reports how long its leased deliveries took to be
// answered by another process.
//
// Reports (one JSON line): leasedAtStop (pending rows with a lease when the stop began: the
// deliveries in flight), duplicates (webhook-ids answered 200 more than once), lost (emitted,
// never answered, not pending), and for each duplicate why it was sent again. Not a test, not in
// `npm run bench`: the figures of decision 036 and the CHANGELOG (10 runs of a 6 s and of a 30 s
// stop) came from it, written outside the tree with --out.
import { fork } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs, numberArg } from './lib/args.mjs';
import { startThrowawayCluster } from './lib/cluster.mjs';
import { EVENT_DATA } from './lib/payload.mjs';

const values = benchArgs(import.meta.url, {
  engine: { type: 'string' },
  outage: { type: 'string' },
  backlog: { type: 'string' },
  webhooks: { type: 'string' },
  'delay-ms': { type: 'string' },
  'stop-at': { type: 'string' },
  kill: { type: 'string', default: 'none' },
  'max-s': { type: 'string' },
  out: { type: 'string' },
  verbose: { type: 'boolean' },
  'lease-ms': { type: 'string' },
  'timeout-ms': { type: 'string' },
});
const here = dirname(fileURLToPath(import.meta.url));
// The checkout whose dist/ runs (this one by default: `npm run build` first).
const ENGINE = resolve(values.engine ?? join(here, '..'));
const OUTAGE_S = numberArg('outage', values.outage, 6, { min: 0 });
const BACKLOG = numberArg('backlog', values.backlog, 3000, { min: 1, integer: true });
const WEBHOOKS = numberArg('webhooks', values.webhooks, 10, { min: 1, integer: true });
const DELAY_MS = numberArg('delay-ms', values['delay-ms'], 1000, { min: 0 });
const STOP_AT = numberArg('stop-at', values['stop-at'], 0.3, { min: 0, max: 1 });
const KILL = values.kill;
if (!['none', 'before', 'during'].includes(KILL)) throw new TypeError('--kill: none, before or during');
const MAX_S = numberArg('max-s', values['max-s'], 115, { min: 1 });
const OUT = values.out;
const VERBOSE = values.verbose ?? false;
const DELIVERY = {
  leaseMs: numberArg('lease-ms', values['lease-ms'], 10_000, { min: 1 }),
  timeoutMs: numberArg('timeout-ms', values['timeout-ms'], 5_000, { min: 1 }),
};

const t0 = Date.now();
const log = (...a) => VERBOSE && console.error(`[outage ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const engineRequire = createRequire(join(ENGINE, 'package.json'));
const pg = engineRequire('pg');
const load = (p) => import(pathToFileURL(join(ENGINE, p)).href);
const { createWebhooks, generateSigningKey } = await load('dist/src/index.js');
const { postgresStore } = await load('dist/adapters/postgres/index.js');

// ---- a throwaway cluster (bench/lib/cluster.mjs) ----------------------------------------------
const cluster = await startThrowawayCluster({ prefix: 'iw-outage', flags: '-c fsync=off' });
const workers = new Map();
const cleanup = () => {
  for (const w of workers.values()) if (!w.exited) w.child.kill('SIGKILL');
  cluster.remove();
};
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
const { url, port } = cluster;

// ---- the receiver: every 200 it sends, by webhook-id ------------------------------------------
const answers = new Map(); // webhook-id -> [{ worker, at }]
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    setTimeout(() => {
      const id = String(req.headers['webhook-id']);
      const worker = String(req.headers['x-worker']);
      res.writeHead(200).end('ok', () => {
        const at = Date.now();
        const list = answers.get(id);
        if (list) list.push({ worker, at });
        else answers.set(id, [{ worker, at }]);
      });
    }, DELAY_MS),
  );
});
receiver.keepAliveTimeout = 5_000;
await new Promise((r) => receiver.listen(0, '127.0.0.1', 1024, r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

// ---- the backlog, then the workers ------------------------------------------------------------
const key = await generateSigningKey();
const emitterStore = postgresStore({ connectionString: url, maxConnections: 4, notifications: false, onError: () => {} });
const emitter = createWebhooks({ store: emitterStore, keys: [key], issuer: 'http://127.0.0.1/', allowPrivateNetworks: true });
for (let i = 0; i < WEBHOOKS; i++)
  await emitter.webhooks.create({ name: `h${i}`, endpoint: `${receiverUrl}/h${i}`, eventTypes: ['user.created'] });
const emitted = new Set();
const events = Math.ceil(BACKLOG / WEBHOOKS);
for (let i = 0; i < events; i += 50)
  await Promise.all(
    Array.from({ length: Math.min(50, events - i) }, (_, j) =>
      emitter
        .emit({ type: 'user.created', source: 'admin', data: { user: { ...EVENT_DATA.user, id: `kp_${i + j}` } } })
        .then((r) => r.deliveryIds.forEach((id) => emitted.add(id))),
    ),
  );
await emitter.close();
log(`cluster on ${port}, ${emitted.size} deliveries emitted to ${WEBHOOKS} webhooks`);

const reports = new Map();
function spawnWorker(id) {
  const child = fork(join(here, 'outage-worker.mjs'), [], {
    env: {
      ...process.env,
      OUTAGE_ENGINE: ENGINE,
      OUTAGE_URL: url,
      WORKER_ID: id,
      OUTAGE_KEY: JSON.stringify(key),
      OUTAGE_DELIVERY: JSON.stringify(DELIVERY),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const w = { id, child, exited: false };
  child.on('exit', () => (w.exited = true));
  child.on('message', (m) => m?.type === 'report' && reports.set(id, m));
  workers.set(id, w);
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${id} not ready within 30 s`)), 30_000);
    child.on('message', (m) => m?.type === 'ready' && (clearTimeout(timer), ok(w)));
    child.once('exit', (code) => (clearTimeout(timer), fail(new Error(`${id} exited (${code}) before ready`))));
  });
}
const admin = new pg.Pool({ connectionString: url, max: 2 });
admin.on('error', () => {});
const leased = async (worker) =>
  (
    await admin.query(
      `select id from iw_deliveries where status = 'pending' and locked_by is not null${worker ? ' and locked_by = $1' : ''}`,
      worker ? [worker] : [],
    )
  ).rows.map((r) => r.id);

// The bound on the whole run.
let timedOut = false;
const hard = setTimeout(() => (timedOut = true), MAX_S * 1000);
hard.unref();

const started = Date.now();
await Promise.all(['w0', 'w1', 'w2'].map(spawnWorker));
while (answers.size < STOP_AT * emitted.size && !timedOut) await sleep(20);
log(`${answers.size} answered; stopping`);

// ---- the disruption -----------------------------------------------------------------------------
let killed = null; // { at, ids }
const kill = async () => {
  const w = workers.get('w2');
  const gone = new Promise((r) => (w.exited ? r() : w.child.once('exit', r)));
  w.child.kill('SIGKILL');
  await gone;
  const at = Date.now();
  killed = { at, ids: new Set(await leased('w2').catch(() => [])) };
  log(`killed w2 holding ${killed.ids.size} leases`);
};
for (const w of workers.values()) w.child.send({ type: 'mark' });
let leasedAtStop = [];
let stopAt = null;
let backAt = null;
if (KILL === 'before') await kill();
if (OUTAGE_S > 0) {
  leasedAtStop = await leased();
  stopAt = Date.now();
  cluster.stop();
  log(`stopped in ${Date.now() - stopAt} ms; ${leasedAtStop.length} leased at the stop`);
  if (KILL === 'during') {
    await sleep((OUTAGE_S * 1000) / 2);
    const w = workers.get('w2');
    w.child.kill('SIGKILL');
    await new Promise((r) => (w.exited ? r() : w.child.once('exit', r)));
    killed = { at: Date.now(), ids: null }; // its leases are read once the database is back
    await sleep((OUTAGE_S * 1000) / 2);
  } else await sleep(OUTAGE_S * 1000);
  cluster.start();
  backAt = Date.now();
  if (killed && killed.ids === null) killed.ids = new Set(await leased('w2').catch(() => []));
  log(`started again: down ${((backAt - stopAt) / 1000).toFixed(1)} s`);
}

// ---- drain ------------------------------------------------------------------------------------------
const unfinished = async () =>
  Number((await admin.query("select count(*)::int as n from iw_deliveries where status <> 'delivered'")).rows[0].n);
let drained = false;
while (!timedOut) {
  const missing = [...emitted].some((id) => !answers.has(id));
  if (!missing && (await unfinished().catch(() => -1)) === 0) {
    drained = true;
    break;
  }
  await sleep(200);
}
const drainedAt = Date.now();
// Late arrivals of anything sent twice at the very end.
await sleep(Math.min(1_500, DELAY_MS + 500));

// ---- report -----------------------------------------------------------------------------------------
for (const w of workers.values()) if (!w.exited) w.child.send({ type: 'report' });
const deadline = Date.now() + 5_000;
while (Date.now() < deadline && [...workers.values()].some((w) => !w.exited && !reports.has(w.id))) await sleep(20);
const notAnswered = [...emitted].filter((id) => !answers.has(id));
const pendingNow = new Set(
  (
    await admin
      .query("select id from iw_deliveries where id = any($1::text[]) and status = 'pending'", [notAnswered])
      .catch(() => ({ rows: [] }))
  ).rows.map((r) => r.id),
);
const duplicates = [...answers].filter(([, xs]) => xs.length > 1);
const successRows = new Map(
  (
    await admin
      .query(
        'select delivery_id, count(*)::int as n from iw_attempts where success = 1 and delivery_id = any($1::text[]) group by delivery_id',
        [duplicates.map(([id]) => id)],
      )
      .catch(() => ({ rows: [] }))
  ).rows.map((r) => [r.delivery_id, r.n]),
);
// Why each duplicate was sent again: the second sender's claim against the first sender's record.
const firstAt = (list, id, pred = () => true) => list?.find((x) => x.ids?.includes(id) && pred(x))?.at ?? null;
const leasedSet = new Set(leasedAtStop);
const why = duplicates.map(([id, xs]) => {
  const [a, b] = xs;
  const ra = reports.get(a.worker);

  const recordedAt = firstAt(ra?.records, id, (x) => x.ok);
  // The first claim of it after the stop, by any process (the one that fenced the record out; it may have given it back unsent).
  const claimsAfter = [...reports.values()].map((r) => firstAt(r.claims, id)).filter((t) => t !== null);
  const reclaimedAt = claimsAfter.length ? Math.min(...claimsAfter) : null;
  const reclaimedBy = [...reports].find(([, r]) => firstAt(r.claims, id) === reclaimedAt)?.[0];
  let cause;
  if (killed && a.worker === 'w2') cause = 'sender killed';
  else if (recordedAt === null) cause = 'first record never landed';
  else if (reclaimedAt !== null && reclaimedAt < recordedAt)
    cause =
      a.worker === reclaimedBy
        ? 'reclaimed by its own process before its record landed'
        : 'reclaimed by another process before the record landed';
  else cause = 'other';
  return {
    id,
    first: a.worker,
    again: b.worker,
    answeredVsStop: stopAt && a.at - stopAt,
    recordedVsBack: recordedAt && backAt && recordedAt - backAt,
    reclaimedVsBack: reclaimedAt && backAt && reclaimedAt - backAt,
    reclaimedBy,
    successRows: successRows.get(id) ?? 0,
    leasedAtStop: leasedSet.has(id),
    cause,
  };
});
const causes = {};
for (const w of why) causes[w.cause] = (causes[w.cause] ?? 0) + 1;
let killedRetry = null;
if (killed) {
  const times = [...killed.ids].map((id) => {
    const again = (answers.get(id) ?? []).find((x) => x.worker !== 'w2' && x.at >= killed.at);
    return again ? again.at - killed.at : null;
  });
  const done = times.filter((t) => t !== null);
  killedRetry = {
    held: killed.ids.size,
    retried: done.length,
    maxSeconds: done.length ? Math.max(...done) / 1000 : null,
    within60s: done.filter((t) => t <= 60_000).length,
  };
}
const summary = {
  engine: ENGINE,
  outageSeconds: OUTAGE_S,
  downSeconds: backAt && stopAt ? Math.round((backAt - stopAt) / 100) / 10 : 0,
  lease: DELIVERY,
  kill: KILL,
  emitted: emitted.size,
  leasedAtStop: leasedAtStop.length,
  duplicates: duplicates.length,
  duplicatesAmongLeasedAtStop: why.filter((w) => w.leasedAtStop).length,
  ratio: leasedAtStop.length ? Math.round((10_000 * duplicates.length) / leasedAtStop.length) / 100 : null,
  lost: notAnswered.filter((id) => !pendingNow.has(id)).length,
  stillPending: pendingNow.size,
  drained,
  drainSecondsAfterBack: Math.round((drainedAt - (backAt ?? started)) / 100) / 10,
  runSeconds: Math.round((Date.now() - t0) / 100) / 10,
  causes,
  byPair: why.reduce((m, w) => ((m[`${w.first}>${w.again}`] = (m[`${w.first}>${w.again}`] ?? 0) + 1), m), {}),
  killedRetry,
  why: why.slice(0, VERBOSE ? 100 : 8),
  workerErrors: Object.fromEntries(
    [...reports].map(([id, r]) => [id, { errors: r.errors, top: r.messages.sort((x, y) => y[1] - x[1]).slice(0, VERBOSE ? 12 : 4) }]),
  ),
  // When each process first wrote an outcome and first claimed something after the database was back.
  timeline: Object.fromEntries(
    [...reports].map(([id, r]) => {
      const rec = r.records.find((x) => x.ok && backAt && x.at >= backAt);
      const claim = r.claims.find((x) => backAt && x.at >= backAt);
      const rel = (t) => (backAt ? t - backAt : t - t0);
      return [
        id,
        {
          firstRecord: rec ? rec.at - backAt : null,
          firstClaim: claim ? claim.at - backAt : null,
          // Claim tries from the stop until 3 s after the return: [ms from the return, taken or -1].
          tries: VERBOSE ? (r.tries ?? []).filter(([t]) => !backAt || t < backAt + 3_000).map(([t, n]) => [rel(t), n]) : undefined,
          records: VERBOSE
            ? r.records.filter((x) => !backAt || x.at < backAt + 3_000).map((x) => [rel(x.at), x.ok ? x.ids.length : -1])
            : undefined,
        },
      ];
    }),
  ),
  // Deliveries leased at the stop that a claim took again after it (sent twice or not).
  reclaimedOfLeasedAtStop: leasedAtStop.filter((id) => [...reports.values()].some((r) => firstAt(r.claims, id) !== null)).length,
  recordFailuresAfterStop: Object.fromEntries([...reports].map(([id, r]) => [id, r.records.filter((x) => !x.ok).length])),
};
console.log(JSON.stringify(summary));
if (OUT) appendFileSync(OUT, `${JSON.stringify(summary)}\n`);
if (OUT)
  appendFileSync(
    `${OUT.replace(/\.jsonl$/, '')}.why.jsonl`,
    `${JSON.stringify({ at: new Date(t0).toISOString(), stopAt, backAt, killed: killed && { at: killed.at, n: killed.ids.size }, why })}\n`,
  );
for (const w of workers.values()) if (!w.exited) w.child.send({ type: 'stop' });
await sleep(1_000);
await admin.end().catch(() => {});
await new Promise((r) => (receiver.closeAllConnections(), receiver.close(r)));
process.exit(0);
