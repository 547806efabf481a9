// Fairness between environments (issue "Tenant isolation and poison inputs"): the noisy neighbour
// as the issue found it, measured as a distribution. On one engine (defaults: 64 slots, 8 per
// webhook, 15 s attempt deadline), 50 webhooks of one environment point at endpoints that accept
// and never answer, 5 webhooks of a second environment at one hanging path of a server that a third
// environment's healthy endpoint is also on. The noisy ones get their events first; once their
// attempts hang, the healthy environment emits HEALTHY events PACE_MS apart, and the figure is its
// latency from calling emit() to the request arriving at its endpoint (matched by `webhook-id`):
// p50 / p90 / p99 / max over every run. The endpoints share this process (and its event loop)
// with the engine.
//
//   npm run build && node bench/fairness.mjs            # SQLite and PostgreSQL, 3 runs each
//   node bench/fairness.mjs --stores=sqlite --runs=1 --healthy=20   # a smoke test; needs a build (dist/)
//   node bench/fairness.mjs --neighbour-late            # the neighbour's events once the noisy environment is at its cap
//   node bench/fairness.mjs --within=4,7,12,20          # inside ONE environment: N hanging webhooks beside its healthy one
//
// --within (issue 39, decision 026): one environment has N webhooks on endpoints that accept and
// never answer and one healthy webhook; every event goes to all N + 1. NOISY_EVENTS events first,
// then HEALTHY events PACE_MS apart; the figure is the healthy webhook's latency, emit → arrival,
// per N. Before slow start, N = 7 filled the environment's 56 slots (7 × 8) and the healthy
// webhook waited for the 15 s timeouts.
//
// Bounded: RUNS runs per store of HEALTHY events each (defaults 3 × 100, 50 ms apart); every run
// gives up after RUN_LIMIT_MS and the whole script after SCRIPT_LIMIT_MS. Traffic goes to
// 127.0.0.1 only (the endpoints live in this process; PostgreSQL at BENCH_PG_URL, local).
// Writes <tmp>/identity-webhooks-bench/fairness-<date>.json (-quick.json when smaller), or --out=FILE.
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dirname } from 'node:path';
import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { benchArgs, numberArg, resultsFile } from './lib/args.mjs';
import { describeMachine } from './lib/machine.mjs';
import { EVENT_DATA } from './lib/payload.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from './lib/postgres.mjs';
import { percentile, sleep } from './lib/stats.mjs';
import { openStore } from './lib/stores.mjs';
import { tempDir } from './lib/tmp.mjs';

const values = benchArgs(import.meta.url, {
  runs: { type: 'string' },
  healthy: { type: 'string' },
  pace: { type: 'string' },
  'neighbour-late': { type: 'boolean' },
  within: { type: 'string' },
  stores: { type: 'string', default: 'sqlite,postgres' },
  'no-postgres': { type: 'boolean' },
  out: { type: 'string' },
});
const RUNS = numberArg('runs', values.runs, 3, { min: 1, integer: true });
const HEALTHY = numberArg('healthy', values.healthy, 100, { min: 1, integer: true });
const PACE_MS = numberArg('pace', values.pace, 50, { min: 0 });
const NOISY_WEBHOOKS = 50;
const NEIGHBOUR_WEBHOOKS = 5;
const NOISY_EVENTS = 10; // per noisy environment: 500 + 50 attempts that will all hang
/** --neighbour-late: the neighbour's events only once the noisy environment holds CAP attempts. */
const NEIGHBOUR_LATE = values['neighbour-late'] ?? false;
const CAP = 64 - 8; // what one environment over its share may hold: the slots less the reserve
const RUN_LIMIT_MS = 60_000;
/** --within=N,N,…: the numbers of hanging webhooks beside one healthy webhook of the same environment. */
const WITHIN = values.within
  ? values.within
      .split(',')
      .map(Number)
      .filter((n) => n > 0)
  : null;
const SCRIPT_LIMIT_MS = 10 * 60_000;
const ISSUER = 'https://auth.example.com';

setTimeout(() => {
  console.error(`fairness: gave up after ${SCRIPT_LIMIT_MS / 1000} s`);
  process.exit(2);
}, SCRIPT_LIMIT_MS).unref();

/** A server on 127.0.0.1: `/ok…` answers 200 and records when it arrived; anything else hangs. */
async function endpointServer() {
  const arrivals = new Map(); // webhook-id → performance.now() at arrival
  const hanging = new Set();
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/ok')) {
      const id = String(req.headers['webhook-id']);
      req.on('end', () => {
        if (!arrivals.has(id)) arrivals.set(id, performance.now());
        res.end('ok');
      });
    } else {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
    }
  });
  server.keepAliveTimeout = 10_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', 511, r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    arrivals,
    hanging,
    close: () =>
      new Promise((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const key = await generateSigningKey();
const data = (id) => ({ user: { ...EVENT_DATA.user, id } });

/** Where the current run is, for the watchdog's message. */
let stage = 'starting';

async function oneRun(store) {
  const dead = await endpointServer();
  const shared = await endpointServer();
  const errors = [];
  let hooks;
  try {
    hooks = createWebhooks({
      store,
      keys: [key],
      issuer: ISSUER,
      allowPrivateNetworks: true, // otherwise the defaults, the engine's own transport included
      logger: { warn: () => {}, error: (m, meta) => void (errors.length < 20 && errors.push(`${m} ${JSON.stringify(meta ?? {})}`)) },
    });
    stage = 'start';
    await hooks.start();
    stage = 'setup';
    const make = (environment, endpoint) => hooks.webhooks.create({ environment, name: 'w', endpoint, eventTypes: ['user.created'] });
    for (let i = 0; i < NOISY_WEBHOOKS; i++) await make('noisy', `${dead.url}/hang/${i}`);
    for (let i = 0; i < NEIGHBOUR_WEBHOOKS; i++) await make('neighbour', `${shared.url}/hang/shared`);
    await make('healthy', `${shared.url}/ok`);
    const emitNoisy = (environment, i) =>
      hooks.emit({ type: 'user.created', source: 'api', data: data(`kp_${environment}_${i}`), environment });
    if (NEIGHBOUR_LATE) {
      // The order that defeats the reserve: the noisy environment reaches its cap (56 of 64) first,
      // then the neighbour, under its own share, is let into the slots that are left.
      for (let i = 0; i < NOISY_EVENTS; i++) await emitNoisy('noisy', i);
      const w0 = performance.now();
      while (dead.hanging.size < CAP && performance.now() - w0 < 5_000) await sleep(10);
      for (let i = 0; i < NOISY_EVENTS; i++) await emitNoisy('neighbour', i);
    } else {
      for (let i = 0; i < NOISY_EVENTS; i++) {
        await emitNoisy('noisy', i);
        await emitNoisy('neighbour', i);
      }
    }
    stage = 'waiting for the noisy attempts to hang';
    const t0 = performance.now();
    while (dead.hanging.size + shared.hanging.size < 40 && performance.now() - t0 < 5_000) await sleep(10);
    const hangingAtStart = dead.hanging.size + shared.hanging.size;
    // Whose attempts hang: the noisy environment's (its own host) and the neighbour's (the shared host).
    const hangingByEnvironmentAtStart = { noisy: dead.hanging.size, neighbour: shared.hanging.size };

    const sentAt = new Map(); // delivery id (webhook-id) → performance.now() before emit()
    let maxHanging = hangingAtStart;
    for (let n = 0; n < HEALTHY; n++) {
      const at = performance.now();
      const ev = await hooks.emit({ type: 'user.created', source: 'api', data: data(`kp_${n}`), environment: 'healthy' });
      sentAt.set(ev.deliveryIds[0], at);
      maxHanging = Math.max(maxHanging, dead.hanging.size + shared.hanging.size);
      await sleep(PACE_MS);
    }
    stage = 'waiting for the healthy deliveries';
    const deadline = performance.now() + RUN_LIMIT_MS / 2;
    while (shared.arrivals.size < HEALTHY && performance.now() < deadline) await sleep(20);
    const latencies = [...sentAt].filter(([id]) => shared.arrivals.has(id)).map(([id, at]) => shared.arrivals.get(id) - at);
    // What never arrived waited at least this long: kept as lower bounds, so the percentiles do not flatter.
    const end = performance.now();
    const notArrived = [...sentAt].filter(([id]) => !shared.arrivals.has(id)).map(([, at]) => end - at);
    return {
      healthyEmitted: HEALTHY,
      healthyArrived: latencies.length,
      hangingAtStart,
      hangingByEnvironmentAtStart,
      maxHanging,
      noisyHangingAtEnd: dead.hanging.size,
      latenciesMs: latencies.map((x) => Math.round(x * 100) / 100),
      notArrivedWaitedMs: notArrived.map((x) => Math.round(x)),
      errors,
    };
  } finally {
    // Hanging attempts end now (network errors), so close() does not wait out their deadline.
    stage = 'closing the endpoints';
    await dead.close();
    await shared.close();
    stage = 'closing the engine';
    await hooks?.close();
    stage = 'closed';
  }
}

/** --within: N hanging webhooks and one healthy webhook of one environment; the healthy one's latencies. */
async function oneWithinRun(store, n) {
  const dead = await endpointServer();
  const live = await endpointServer();
  const errors = [];
  let hooks;
  try {
    hooks = createWebhooks({
      store,
      keys: [key],
      issuer: ISSUER,
      allowPrivateNetworks: true, // otherwise the defaults: 64 slots, 8 per webhook, a 15 s deadline
      logger: { warn: () => {}, error: (m, meta) => void (errors.length < 20 && errors.push(`${m} ${JSON.stringify(meta ?? {})}`)) },
    });
    stage = 'start';
    await hooks.start();
    stage = 'setup';
    for (let i = 0; i < n; i++)
      await hooks.webhooks.create({
        environment: 'acme',
        name: `dead${i}`,
        endpoint: `${dead.url}/hang/${i}`,
        eventTypes: ['user.created'],
      });
    await hooks.webhooks.create({ environment: 'acme', name: 'healthy', endpoint: `${live.url}/ok`, eventTypes: ['user.created'] });
    const emit = (id) => hooks.emit({ type: 'user.created', source: 'api', data: data(id), environment: 'acme' });
    for (let i = 0; i < NOISY_EVENTS; i++) await emit(`kp_first_${i}`);
    stage = 'waiting for the hanging attempts';
    const t0 = performance.now();
    while (dead.hanging.size < n && performance.now() - t0 < 5_000) await sleep(10);
    const hangingAtStart = dead.hanging.size;
    const sent = []; // [performance.now() before emit(), the event's delivery ids]
    let maxHanging = hangingAtStart;
    for (let i = 0; i < HEALTHY; i++) {
      const at = performance.now();
      const ev = await emit(`kp_${i}`);
      sent.push([at, ev.deliveryIds]);
      maxHanging = Math.max(maxHanging, dead.hanging.size);
      await sleep(PACE_MS);
    }
    stage = 'waiting for the healthy deliveries';
    // Only the healthy webhook's delivery of an event can arrive at /ok.
    const arrivedAt = (ids) => ids.map((id) => live.arrivals.get(id)).find((x) => x !== undefined);
    const deadline = performance.now() + RUN_LIMIT_MS / 2;
    while (sent.some(([, ids]) => arrivedAt(ids) === undefined) && performance.now() < deadline) await sleep(20);
    const end = performance.now();
    const latencies = sent.filter(([, ids]) => arrivedAt(ids) !== undefined).map(([at, ids]) => arrivedAt(ids) - at);
    const notArrived = sent.filter(([, ids]) => arrivedAt(ids) === undefined).map(([at]) => end - at);
    return {
      hanging: n,
      healthyEmitted: HEALTHY,
      healthyArrived: latencies.length,
      hangingAtStart,
      maxHanging,
      latenciesMs: latencies.map((x) => Math.round(x * 100) / 100),
      notArrivedWaitedMs: notArrived.map((x) => Math.round(x)),
      errors,
    };
  } finally {
    stage = 'closing the endpoints';
    await dead.close();
    await live.close();
    stage = 'closing the engine';
    await hooks?.close();
    stage = 'closed';
  }
}

/**
 * p50 / p90 / p99 / max over the arrived latencies and, for deliveries that never arrived, how
 * long they had waited when the run ended (lower bounds: with any of them, `atLeast` is set and
 * each figure is a lower bound).
 */
function figures(arrived, notArrived = []) {
  const r = (x) => (x === null ? null : Math.round(x * 10) / 10);
  const latencies = [...arrived, ...notArrived];
  return {
    n: latencies.length,
    arrived: arrived.length,
    ...(notArrived.length > 0 ? { atLeast: true } : {}),
    p50: r(percentile(latencies, 50)),
    p90: r(percentile(latencies, 90)),
    p99: r(percentile(latencies, 99)),
    max: r(percentile(latencies, 100)),
  };
}

const machine = describeMachine();
const started = new Date();
const results = {
  scenario: 'fairness',
  startedAt: started.toISOString(),
  machine,
  runs: RUNS,
  healthyPerRun: HEALTHY,
  paceMs: PACE_MS,
  order: WITHIN ? `within one environment: ${WITHIN.join(', ')} hanging` : NEIGHBOUR_LATE ? 'neighbour-late' : 'interleaved',
  stores: {},
};
const kinds = values.stores.split(',').filter((k) => k === 'sqlite' || k === 'postgres');
if (values['no-postgres'] && kinds.includes('postgres')) kinds.pop();
if (kinds.includes('postgres') && !(await postgresAvailable())) {
  kinds.splice(kinds.indexOf('postgres'), 1);
  results.stores.postgres = { skipped: 'no PostgreSQL' };
}
let failed = false;
for (const kind of kinds) {
  const runs = [];
  for (let run = 0; run < RUNS; run++) {
    let store;
    let cleanup;
    if (kind === 'sqlite') {
      const dir = tempDir('fairness');
      store = await openStore({ kind, dir: dir.path });
      cleanup = async () => dir.cleanup();
    } else {
      const name = `iw_bench_fair_${process.pid}_${Date.now()}`;
      store = await openStore({ kind, pgUrl: await createDatabase(name) });
      cleanup = () => dropDatabase(name);
    }
    const limit = setTimeout(() => {
      console.error(`fairness: a ${kind} run exceeded ${RUN_LIMIT_MS / 1000} s (${stage})`);
      process.exit(2);
    }, RUN_LIMIT_MS); // kept referenced: a promise nobody settles ends here, with the stage, not in exit code 13
    try {
      if (WITHIN) {
        // One store per N, opened fresh (the outer store serves the first N).
        const within = [];
        for (const [i, n] of WITHIN.entries()) {
          let s = store;
          let done = async () => {};
          if (i > 0 && kind === 'sqlite') {
            const dir = tempDir('fairness');
            s = await openStore({ kind, dir: dir.path });
            done = async () => dir.cleanup();
          } else if (i > 0) {
            const name = `iw_bench_fair_${process.pid}_${Date.now()}`;
            s = await openStore({ kind, pgUrl: await createDatabase(name) });
            done = () => dropDatabase(name);
          }
          try {
            limit.refresh();
            const result = await oneWithinRun(s, n);
            within.push(result);
            const f = figures(result.latenciesMs, result.notArrivedWaitedMs);
            console.log(
              `${kind} run ${run + 1}, ${n} hanging webhooks beside the healthy one: ${result.healthyArrived}/${result.healthyEmitted} arrived with ${result.hangingAtStart}..${result.maxHanging} attempts hanging; ${f.atLeast ? 'at least ' : ''}p50 ${f.p50} p90 ${f.p90} p99 ${f.p99} max ${f.max} ms`,
            );
            if (result.healthyArrived < result.healthyEmitted) failed = true;
          } finally {
            await done();
          }
        }
        runs.push({ within, latenciesMs: [], notArrivedWaitedMs: [] });
        continue;
      }
      const result = await oneRun(store);
      runs.push(result);
      const f = figures(result.latenciesMs, result.notArrivedWaitedMs);
      console.log(
        `${kind} run ${run + 1}: ${result.healthyArrived}/${result.healthyEmitted} healthy arrived with ${result.hangingAtStart}..${result.maxHanging} attempts hanging (at the start: noisy ${result.hangingByEnvironmentAtStart.noisy}, neighbour ${result.hangingByEnvironmentAtStart.neighbour}); ${f.atLeast ? 'at least ' : ''}p50 ${f.p50} p90 ${f.p90} p99 ${f.p99} max ${f.max} ms`,
      );
      if (result.healthyArrived < result.healthyEmitted) failed = true;
    } finally {
      clearTimeout(limit);
      await cleanup();
    }
  }
  if (WITHIN) {
    const byN = {};
    for (const n of WITHIN) {
      const rs = runs.flatMap((r) => r.within).filter((r) => r.hanging === n);
      byN[n] = {
        ...figures(
          rs.flatMap((r) => r.latenciesMs),
          rs.flatMap((r) => r.notArrivedWaitedMs),
        ),
        maxHanging: Math.max(...rs.map((r) => r.maxHanging)),
      };
      const f = byN[n];
      console.log(
        `${kind}: ${n} hanging webhooks of the environment, its healthy webhook's emit → arrival, ${f.arrived} of ${f.n} arrived: ${f.atLeast ? 'at least ' : ''}p50 ${f.p50} ms, p99 ${f.p99} ms (at most ${f.maxHanging} attempts hanging)`,
      );
    }
    results.stores[kind] = { within: byN, runs: runs.flatMap((r) => r.within) };
    continue;
  }
  const all = figures(
    runs.flatMap((r) => r.latenciesMs),
    runs.flatMap((r) => r.notArrivedWaitedMs),
  );
  results.stores[kind] = {
    all,
    perRun: runs.map((r) => ({
      ...figures(r.latenciesMs, r.notArrivedWaitedMs),
      hangingAtStart: r.hangingAtStart,
      hangingByEnvironmentAtStart: r.hangingByEnvironmentAtStart,
      maxHanging: r.maxHanging,
    })),
    runs,
  };
  const f = all;
  console.log(
    `${kind}: healthy environment, emit → arrival, ${f.arrived} of ${f.n} arrived: ${f.atLeast ? 'at least ' : ''}p50 ${f.p50} ms, p90 ${f.p90} ms, p99 ${f.p99} ms, max ${f.max} ms`,
  );
}
results.loadAverageAtEnd = (await import('node:os')).loadavg().map((x) => Math.round(x * 100) / 100);
results.wallSeconds = Math.round((Date.now() - started.getTime()) / 100) / 10;
// Smaller than the defaults is a smoke test, named so.
const quick = RUNS < 3 || HEALTHY < 100 ? '-quick' : '';
const file = resultsFile(
  values.out,
  `fairness${WITHIN ? '-within' : NEIGHBOUR_LATE ? '-neighbour-late' : ''}-${started.toISOString().slice(0, 19).replace(/:/g, '-')}${quick}.json`,
);
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(
  `load average ${machine.loadAverageAtStart.join(' / ')} at the start, ${results.loadAverageAtEnd.join(' / ')} at the end; ${results.wallSeconds} s`,
);
console.log(`written ${file.pathname}`);
if (failed) {
  console.error('fairness: some healthy deliveries never arrived');
  process.exitCode = 1;
}
