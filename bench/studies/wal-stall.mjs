// How long SQLite's WAL checkpoint stalls the host's event loop under a sustained write load.
// `npm run build` first: `node bench/studies/wal-stall.mjs [dist ...]` (default: ./dist). Give several
// builds (e.g. one of the previous commit: `npx tsc -p tsconfig.build.json --outDir .tmp/before`,
// then `node bench/studies/wal-stall.mjs .tmp/before dist`) and they run interleaved, RUNS rounds (3),
// each run in a fresh process on a fresh file, SECONDS long (8).
//
// The load goes through the store as the engine drives it, one store call per turn of the event
// loop: emit an event to 4 webhooks, claim 32 due deliveries, record their 32 successes. A
// `monitorEventLoopDelay` histogram (1 ms resolution) records every turn's lateness: its max is
// the longest stall, a checkpoint run on the main thread shows there. The WAL's size is sampled
// every 50 ms (it stays bounded when checkpoints keep up: journal_size_limit is 16 MB).

import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs } from '../lib/args.mjs';
import { delivered as success } from '../lib/outcome.mjs';

const RUNS = Number(process.env.RUNS ?? 3);
const SECONDS = Number(process.env.SECONDS ?? 8);
// Deliveries per second the load aims at (0: as fast as it goes). Paced, like an engine waiting
// on HTTP, so the CPU has room and a stall seen is the checkpoint's, not the scheduler's.
const RATE = Number(process.env.RATE ?? 1000);
const { values: runMode, positionals } = benchArgs(import.meta.url, { child: { type: 'boolean' } }, { positionals: true });
const mode = runMode.child ? '--child' : positionals[0];
const rest = runMode.child ? positionals : positionals.slice(1);

if (mode !== '--child') {
  const dists = (mode ? [mode, ...rest] : ['dist']).map((d) => resolve(d));
  console.log(
    `${RATE ? `paced at ${RATE}` : 'unpaced'} deliveries/s; ${cpus().length} cores, ${cpus()[0]?.model}, Node ${process.version}; load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const results = new Map(dists.map((d) => [d, []]));
  for (let run = 0; run < RUNS; run++) {
    // Alternate the order so neither build always runs first.
    const order = run % 2 ? [...dists].reverse() : dists;
    for (const dist of order) {
      const r = await child(dist);
      results.get(dist).push(r);
      console.log(`run ${run + 1} ${dist}: ${line(r)}`);
    }
  }
  console.log(
    `\nmedian of ${RUNS} (load average now ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}):`,
  );
  for (const [dist, rs] of results) {
    const med = (k) => rs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
    console.log(
      `${dist}: longest stall ${med('maxMs').toFixed(1)} ms (worst ${Math.max(...rs.map((r) => r.maxMs)).toFixed(1)}), p99 ${med('p99Ms').toFixed(2)} ms, turns over 10 ms ${med('over10')}, ${med('perSecond').toFixed(0)} deliveries/s, WAL max ${med('walMaxMB').toFixed(1)} MB`,
    );
  }
  process.exit(0);
}

function child(dist) {
  return new Promise((resolveChild, reject) => {
    const p = fork(fileURLToPath(import.meta.url), ['--child', dist], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    p.on('message', resolveChild);
    p.on('exit', (code) => code !== 0 && reject(new Error(`${dist}: exit ${code}`)));
  });
}

function line(r) {
  return `longest stall ${r.maxMs.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(2)} ms, p50 ${r.p50Ms.toFixed(2)} ms, turns over 10 ms ${r.over10}, ${r.perSecond.toFixed(0)} deliveries/s, WAL max ${r.walMaxMB.toFixed(1)} MB, end ${r.walEndMB.toFixed(1)} MB`;
}

// ---- one run, in its own process ----
const dist = rest[0];
const { sqliteStore } = await import(pathToFileURL(join(dist, 'adapters/sqlite/index.js')).href);
const dir = mkdtempSync(join(tmpdir(), 'iw-wal-stall-'));
const file = join(dir, 'bench.db');
const store = sqliteStore({ filename: file });
await store.migrate(Date.now());
const environment = 'default';
const WEBHOOKS = 4;
for (let i = 0; i < WEBHOOKS; i++) {
  const now = Date.now();
  await store.createWebhook(
    {
      id: `webhook_${i}`,
      environment,
      name: `receiver ${i}`,
      description: null,
      endpoint: `https://hooks.example.com/${i}`,
      eventTypes: ['user.created'],
      status: 'enabled',
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
    },
    { maxWebhooks: null },
  );
}
const data = {
  user: { id: 'kp_0123456789abcdef', email: 'someone@example.com', first_name: 'Some', last_name: 'One' },
  pad: 'x'.repeat(300),
};
const turn = () => new Promise((r) => setImmediate(r));

const walSize = () => {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};
let walMax = 0;
const sampler = setInterval(() => (walMax = Math.max(walMax, walSize())), 50);

const histogram = monitorEventLoopDelay({ resolution: 1 });
// 1 ms ticks measuring their own lateness: a second view of the same stalls, and it counts them.
let over10 = 0;
let last = performance.now();
const ticker = setInterval(() => {
  const t = performance.now();
  if (t - last > 11) over10++;
  last = t;
}, 1);

histogram.enable();
const end = performance.now() + SECONDS * 1000;
let delivered = 0;
const started = performance.now();
while (performance.now() < end) {
  const ahead = RATE > 0 ? started + (delivered / RATE) * 1000 - performance.now() : 0;
  if (ahead > 0) await new Promise((r) => setTimeout(r, ahead));
  for (let i = 0; i < 32 / WEBHOOKS; i++) {
    const now = Date.now();
    await store.insertEvent(
      { id: `event_${randomUUID()}`, environment, type: 'user.created', source: 'admin', data, eventTimestamp: now, createdAt: now },
      { newDeliveryId: () => `msg_${randomUUID()}` },
    );
    await turn();
  }
  const now = Date.now();
  const claimed = await store.claimDue({ now, limit: 32, workerId: 'bench', leaseMs: 30_000 });
  await turn();
  await store.recordAttempts(claimed.map((c) => success(c, now)));
  delivered += claimed.length;
  await turn();
}
histogram.disable();
clearInterval(ticker);
clearInterval(sampler);
const result = {
  maxMs: histogram.max / 1e6,
  p99Ms: histogram.percentile(99) / 1e6,
  p50Ms: histogram.percentile(50) / 1e6,
  over10,
  perSecond: delivered / SECONDS,
  walMaxMB: Math.max(walMax, walSize()) / 2 ** 20,
  walEndMB: walSize() / 2 ** 20,
};
await store.close();
rmSync(dir, { recursive: true, force: true });
process.send(result);
process.disconnect();
