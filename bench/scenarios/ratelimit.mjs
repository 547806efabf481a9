// Rate limit (endpoint options, docs/endpoint-options.md): one webhook at `perSecond` with a
// backlog of `backlog` due deliveries, beside two neighbours of `neighbourEvents` each: one of
// another environment, one of the same. On PostgreSQL `processes` engines (this one and forked
// workers) share the database. Figures: the throttled webhook's arrivals over any 10 s window
// (per second; the target is at most 1.1 × perSecond), and each neighbour's rate beside the
// backlog as a ratio to its rate alone (the same run without the throttled webhook); beside it
// the CPU ratio: the machine's CPU per neighbour delivery (this process with its receiver, the
// workers, the database's backends) alone over beside the backlog.
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { countClaims, cpuSplit } from '../lib/claim-stats.mjs';
import { EVENT_TYPE, makeEngine } from '../lib/engine.mjs';
import { preload } from '../lib/preload.mjs';
import { sleep } from '../lib/stats.mjs';
import { withFreshStore } from '../lib/stores.mjs';

const WORKER = fileURLToPath(new URL('./ratelimit-worker.mjs', import.meta.url));

export default async function ratelimit(config) {
  const { runs } = config;
  const processes = config.kind === 'postgres' ? config.processes : 1;
  const out = {
    throttledMaxPerSec: [],
    throttledMeanPerSec: [],
    otherEnvRatio: [],
    sameEnvRatio: [],
    otherEnvSoloPerSec: [],
    arrivedTwice: [],
    cpuRatio: [],
    cpuMsPerNeighbourDelivery: [],
  };
  for (let run = 0; run < runs; run++) {
    const solo = await measure(config, `rl_solo_${run}`, { throttled: false, processes });
    const mixed = await measure(config, `rl_mixed_${run}`, { throttled: true, processes });
    out.otherEnvSoloPerSec.push(solo.otherEnv);
    // The machine's CPU (engines, receiver, PostgreSQL backends) per neighbour delivery, alone
    // over beside the backlog: what the neighbours could keep where CPU bounds them, a figure that
    // the load of other programs moves much less than the rates.
    out.cpuRatio.push(solo.cpuMs / mixed.cpuMs);
    out.cpuMsPerNeighbourDelivery.push([solo.cpuMs, mixed.cpuMs]);
    out.otherEnvRatio.push(mixed.otherEnv / solo.otherEnv);
    out.sameEnvRatio.push(mixed.sameEnv / solo.sameEnv);
    out.throttledMaxPerSec.push(mixed.maxPerSec);
    out.throttledMeanPerSec.push(mixed.meanPerSec);
    // Deliveries that arrived twice (a lease that ran out under load, say): at-least-once, counted.
    out.arrivedTwice.push(solo.twice + mixed.twice);
  }
  return { metrics: out, notes: { processes } };
}

/** Arrival times (ms, monotonic) per path, at a receiver in this process that answers 200. */
async function localReceiver() {
  const arrivals = new Map();
  const ids = new Map();
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const seen = ids.get(req.url) ?? new Set();
    seen.add(req.headers['webhook-id']);
    ids.set(req.url, seen);
    req.resume();
    req.on('end', () => {
      const list = arrivals.get(req.url) ?? [];
      list.push(at);
      arrivals.set(req.url, list);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    arrivals: (path) => arrivals.get(path) ?? [],
    /** Distinct deliveries (webhook-id) that arrived at `path`: fewer than its arrivals means some came twice. */
    distinct: (path) => ids.get(path)?.size ?? 0,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
  };
}

async function measure(config, label, { throttled, processes }) {
  const { backlog, perSecond, neighbourEvents } = config;
  const receiver = await localReceiver();
  try {
    return await withFreshStore(config, label, async ({ store, location }) => {
      const stats = process.env.BENCH_CLAIM_STATS ? countClaims(store) : null;
      const hooks = await makeEngine({ store });
      const workers = [];
      try {
        const create = (name, environment, path, extra = {}) =>
          hooks.webhooks.create({ name, endpoint: `${receiver.url}${path}`, eventTypes: [EVENT_TYPE], environment, ...extra });
        const other = await create('other env', 'env_b', '/other');
        const same = await create('same env', 'env_a', '/same');
        const paced = throttled ? await create('paced', 'env_a', '/paced', { rateLimit: { perSecond } }) : null;
        // Interleaved in the due index (spread over the neighbours' due times): every claim meets
        // the throttled webhook's rows among the others'. Two preloads: one of its groups per
        // environment each (preload gives a group every event of its environment in the batch).
        const groups = [
          { environment: 'env_b', webhookIds: [other.id] },
          { environment: 'env_a', webhookIds: [same.id] },
        ];
        // The other processes first, idle (nothing due yet), so their start-up is not timed.
        for (let i = 1; i < processes; i++) workers.push(await startWorker(location));
        const firstDueAt = Date.now() - 2 * neighbourEvents - 60_000;
        await preload(store, { groups, events: 2 * neighbourEvents, firstDueAt, spacingMs: 1 });
        if (paced)
          await preload(store, {
            groups: [{ environment: 'env_a', webhookIds: [paced.id] }],
            events: backlog,
            firstDueAt,
            spacingMs: Math.max(1, Math.round((2 * neighbourEvents) / backlog)),
          });
        const database = location.pgUrl ? new URL(location.pgUrl).pathname.slice(1) : null;
        const pids = [process.pid, ...workers.map((w) => w.pid)];
        const cpu0 = await cpuSplit(pids, database);
        let cpuMs = null;
        // When the neighbours are done: the CPU they cost (whatever ran beside them, the throttled
        // webhook's claims and attempts included), per neighbour delivery.
        const neighboursDone = async () => {
          const cpu1 = await cpuSplit(pids, database);
          cpuMs = (cpu1.engines - cpu0.engines + cpu1.postgres - cpu0.postgres) / (2 * neighbourEvents);
          if (!stats) return;
          const per = (k) => ((cpu1[k] - cpu0[k]) / (2 * neighbourEvents)).toFixed(3);
          console.error(`cpu (${label}): ms per neighbour delivery: engines+receiver ${per('engines')}, postgres ${per('postgres')}`);
          console.error(`claim stats (${label}, main, until the neighbours were done): ${JSON.stringify(stats())}`);
          for (const w of workers) w.send('snap');
        };
        const t0 = performance.now();
        await hooks.start();
        for (const w of workers) w.send('wake');
        const deadline = t0 + (paced ? (backlog / perSecond) * 1000 * 1.5 + 30_000 : 60_000);
        const neighbours = () =>
          receiver.arrivals('/other').length >= neighbourEvents && receiver.arrivals('/same').length >= neighbourEvents;
        const done = () => neighbours() && (!paced || receiver.distinct('/paced') >= backlog);
        while (!done()) {
          if (cpuMs === null && neighbours()) await neighboursDone();
          if (performance.now() > deadline)
            throw new Error(
              `${label}: ${receiver.arrivals('/other').length}, ${receiver.arrivals('/same').length}, ${receiver.arrivals('/paced').length} arrived in time`,
            );
          await sleep(20);
        }
        if (cpuMs === null) {
          await neighboursDone();
          if (stats) await sleep(200);
        }
        const rate = (path) => {
          const list = receiver.arrivals(path);
          return list.length / ((Math.max(...list) - t0) / 1000);
        };
        const result = { otherEnv: rate('/other'), sameEnv: rate('/same'), cpuMs, maxPerSec: 0, meanPerSec: 0, twice: 0 };
        for (const path of ['/other', '/same', '/paced']) result.twice += receiver.arrivals(path).length - receiver.distinct(path);

        if (paced) {
          const list = [...receiver.arrivals('/paced')].sort((a, b) => a - b);
          // The most arrivals in any 10 s window (each window starts at an arrival).
          let max = 0;
          for (let i = 0, j = 0; i < list.length; i++) {
            while (j < list.length && list[j] < list[i] + 10_000) j++;
            max = Math.max(max, j - i);
          }
          result.maxPerSec = max / 10;
          result.meanPerSec = (list.length - 1) / ((list.at(-1) - list[0]) / 1000);
        }
        return result;
      } finally {
        for (const w of workers) w.send('stop');
        await Promise.all(workers.map((w) => w.exited));
        await hooks.close();
      }
    });
  } finally {
    await receiver.close();
  }
}

async function startWorker(location) {
  const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((r) => child.once('exit', r));
  const kill = setTimeout(() => child.kill('SIGKILL'), 600_000);
  void exited.then(() => clearTimeout(kill));
  await new Promise((resolve, reject) => {
    child.once('message', (m) => (m?.ready ? resolve() : reject(new Error(m?.error ?? 'worker failed'))));
    void exited.then(() => reject(new Error('rate-limit worker exited before it was ready')));
    child.send({ location });
  });
  return { send: (m) => child.connected && child.send(m), exited, pid: child.pid };
}
