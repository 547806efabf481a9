// The engine beside a hand-written durable pipeline (the reference) and the peers a Node user
// would otherwise pick, in one sitting, against the same receiver process, same payload, same
// count of deliveries: `npm run bench:peers` (build, then this file). Options:
//   --quick               about 1,000 deliveries per variant instead of 8,000 (a smoke test)
//   --deliveries=N        deliveries per variant and round (overrides the profile)
//   --rounds=N            rounds (default 3): every round runs every variant once, interleaved
//   --only=a,b            only these variant ids (each engine variant's reference is added)
//   --engine=PATH         also run the engine variants of another built checkout (PATH/dist),
//   --engine-label=NAME   named NAME (repeat both to compare several builds with this one)
//   --no-postgres, --no-redis, --no-current (leave out this checkout's engine)
//   --out=FILE            where to write the JSON (default <tmp>/identity-webhooks-bench/peers-<date>.json)
// Each variant runs in a fresh process (lib/child.mjs); rounds rotate the order. Prints every
// variant's deliveries/s (median of the rounds, min..max) and its ratio to its reference (the
// median of the per-round ratios: each round's variant over the same round's reference), then
// the targets as pass/miss (never failing the run). A failed correctness check (a
// delivery not recorded exactly once, or the receiver's count not the store's) fails the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, numberArg, resultsFile } from './lib/args.mjs';
import { runScenario } from './lib/child.mjs';
import { describeMachine } from './lib/machine.mjs';
import { dropDatabasesLike, postgresAvailable } from './lib/postgres.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { fmt, markdownTable, textTable } from './lib/report.mjs';
import { median, round } from './lib/stats.mjs';
import { engineTargets, engineVariants, peerVariants, STDWH } from './peers/variants.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const values = benchArgs(import.meta.url, {
  quick: { type: 'boolean' },
  deliveries: { type: 'string' },
  rounds: { type: 'string' },
  only: { type: 'string' },
  engine: { type: 'string', multiple: true },
  'engine-label': { type: 'string', multiple: true },
  'no-postgres': { type: 'boolean' },
  'no-redis': { type: 'boolean' },
  'no-current': { type: 'boolean' },
  out: { type: 'string' },
});
const flag = (name) => values[name] ?? false;
const option = (name) => values[name];

const quick = flag('quick');
const deliveries = numberArg('deliveries', option('deliveries'), quick ? 1_000 : 8_000, { min: 1, max: 100_000, integer: true });
const rounds = numberArg('rounds', option('rounds'), 3, { min: 1, max: 9, integer: true });
const REDIS = { host: '127.0.0.1', port: 6379 };
// A variant's own deadline for its work (a queue peer gives up waiting for jobs), and a minute
// more for its process: 40 deliveries/s at the worst (pg-boss ran at 82/s at load 10).
const DEADLINE_MS = 60_000 + deliveries * 25;
const started = new Date();
const stamp = started.toISOString().replace(/[:]/g, '-').replace(/\..*/, '');
const outFile = resultsFile(option('out'), `peers-${stamp}${quick ? '-quick' : ''}.json`);
const log = (...a) => console.log(...a);

const engines = [];
if (!flag('no-current')) engines.push({ label: 'current', path: resolve(here, '..') });
const labels = values['engine-label'] ?? [];
(values.engine ?? []).forEach((path, i) => engines.push({ label: labels[i] ?? `engine${i + 2}`, path: resolve(path) }));

const machine = describeMachine();
log(
  `identity-webhooks peers (${deliveries} deliveries per variant, ${rounds} rounds) on ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}`,
);
for (const e of engines) log(`  engine ${e.label}: ${e.path}/dist`);

const havePostgres = !flag('no-postgres') && (await postgresAvailable());
const haveRedis = !flag('no-redis') && (await redisAvailable());
if (!havePostgres) log('PostgreSQL: not reachable at 127.0.0.1:5432 (or --no-postgres): its variants are skipped');
if (!haveRedis) log('Redis: not reachable at 127.0.0.1:6379 (or --no-redis): BullMQ is skipped');

let variants = [...peerVariants(), ...engines.flatMap(engineVariants)];
const only = option('only')
  ?.split(',')
  .flatMap((id) => (id === 'stdwh' ? STDWH : [id]));
if (only) {
  const wanted = new Set(only.flatMap((id) => [id, variants.find((v) => v.id === id)?.ref].filter(Boolean)));
  variants = variants.filter((v) => wanted.has(v.id));
}
const skipReason = (v) =>
  (v.store === 'postgres' && !havePostgres && 'no PostgreSQL') || (v.store === 'redis' && !haveRedis && 'no Redis') || null;

const pgPrefix = `iw_bench_peers_${process.pid}_${Date.now().toString(36)}`;
const receiver = await startReceiver({ okPorts: 10 });
const results = Object.fromEntries(variants.map((v) => [v.id, { rounds: [], errors: [] }]));
const failures = [];
const t0 = performance.now();
try {
  for (let r = 0; r < rounds; r++) {
    // Each round starts further along the list, so no variant always runs first (cold machine) or last.
    const shift = Math.floor((r * variants.length) / rounds);
    const order = [...variants.slice(shift), ...variants.slice(0, shift)];
    log(`\nround ${r + 1} of ${rounds}`);
    for (const v of order) await runOne(v, r);
  }
} finally {
  await receiver.stop();
  if (havePostgres) await dropDatabasesLike(pgPrefix).catch((e) => log(`could not drop bench databases: ${e.message}`));
}
const totalSeconds = (performance.now() - t0) / 1000;
const loadAverageAtEnd = os.loadavg().map((x) => round(x, 2));

async function runOne(v, r) {
  const skipped = skipReason(v);
  if (skipped) return void (results[v.id].skipped = skipped);
  const label = `${v.id}`.padEnd(24);
  process.stdout.write(`  ${label} `);
  const prefix = `${pgPrefix}_${r}_${v.id.replace(/[^a-z0-9]/gi, '_')}`.toLowerCase();
  const s0 = performance.now();
  try {
    const config = { ...v.config, deliveries, deadlineMs: DEADLINE_MS, receiver: { urls: receiver.urls }, pgPrefix: prefix, redis: REDIS };
    const out = await runScenario(join(here, 'peers', v.module), config, { timeoutMs: DEADLINE_MS + 60_000 });
    results[v.id].rounds.push({ round: r, ...roundAll(out) });
    if (out.durability) v.durability = out.durability;
    log(
      `${fmt(out.perSec).padStart(7)}/s  (${out.deliveries} in ${out.seconds.toFixed(2)} s, ${((performance.now() - s0) / 1000).toFixed(1)} s in all)`,
    );
  } catch (error) {
    const reason = error.message.split('\n').find((l) => l.includes('CORRECTNESS')) ?? error.message.split('\n')[0];
    results[v.id].errors.push({ round: r, reason });
    failures.push(`${v.id}, round ${r + 1}: ${reason}`);
    log(`FAILED: ${reason}`);
    if (process.env.BENCH_DEBUG) log(error.stack);
  } finally {
    if (v.store === 'postgres' && havePostgres) await dropDatabasesLike(prefix).catch(() => {});
  }
}

function roundAll(out) {
  return Object.fromEntries(Object.entries(out).map(([k, x]) => [k, typeof x === 'number' ? round(x, 4) : x]));
}

const perSec = (id, r) => results[id]?.rounds.find((x) => x.round === r)?.perSec;
/** The median over rounds of a / b, each pair from the same round; null when no round has both. */
function ratio(a, b) {
  const xs = [];
  for (let r = 0; r < rounds; r++) {
    const x = perSec(a, r);
    const y = perSec(b, r);
    if (Number.isFinite(x) && Number.isFinite(y) && y > 0) xs.push(x / y);
  }
  return xs.length ? { median: median(xs), rounds: xs.map((x) => round(x, 3)) } : null;
}

const summary = variants.map((v) => {
  const xs = results[v.id].rounds.map((x) => x.perSec);
  const vsRef = v.ref ? ratio(v.id, v.ref) : null;
  return {
    id: v.id,
    title: v.title,
    store: v.store,
    durability: v.durability,
    durabilityKey: v.durabilityKey,
    inFlight: v.inFlight,
    ref: v.ref,
    perSec: xs.length ? { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) } : null,
    vsRef: v.ref ? vsRef : xs.length ? { median: 1 } : null,
    signaturesPerDelivery: median(results[v.id].rounds.map((x) => x.signaturesPerDelivery)),
    cpuMsPerDelivery: median(results[v.id].rounds.map((x) => x.cpuMsPerDelivery)),
    skipped: results[v.id].skipped ?? null,
  };
});

const targets = engines.flatMap(({ label }) =>
  engineTargets(label)
    .filter(([id]) => results[id])
    .map(([id, over, goal, title]) => {
      const base = over ?? variants.find((v) => v.id === id).ref;
      const measured = results[base] ? ratio(id, base) : null;
      const strict = over === 'bullmq';
      const verdict = !measured ? 'n/a' : (strict ? measured.median > goal : measured.median >= goal) ? 'pass' : 'miss';
      return {
        target: title,
        variant: id,
        over: base,
        measured: measured?.median ?? null,
        rounds: measured?.rounds ?? [],
        goal: `${strict ? '>' : '>='} ${goal} ×`,
        verdict,
      };
    }),
);

const HEADER = ['variant', 'deliveries/s', 'min .. max', '× its reference', 'reference', 'in flight', 'signatures/delivery', 'durability'];
const rows = summary.map((s) => [
  s.id,
  s.perSec ? fmt(s.perSec.median) : s.skipped ? `skipped: ${s.skipped}` : 'failed',
  s.perSec ? `${fmt(s.perSec.min)} .. ${fmt(s.perSec.max)}` : '',
  s.vsRef ? `${s.vsRef.median.toFixed(2)} ×` : '-',
  s.ref ?? '(reference)',
  s.inFlight,
  s.signaturesPerDelivery === null ? '-' : s.signaturesPerDelivery.toFixed(2),
  s.durabilityKey,
]);
const TARGET_HEADER = ['target', 'measured', 'goal', 'verdict'];
const targetRows = targets.map((t) => [t.target, t.measured === null ? '-' : `${t.measured.toFixed(2)} ×`, t.goal, t.verdict]);

log(`\nDeliveries/s: median of ${rounds} interleaved rounds of ${deliveries}; × reference: median of the per-round ratios.\n`);
log(textTable(HEADER, rows));
log('');
for (const key of [...new Set(summary.map((s) => s.durabilityKey))])
  log(`durability ${key}: ${summary.find((s) => s.durabilityKey === key).durability}`);
log('\nTargets (issue 17; a miss never fails the run):\n');
log(textTable(TARGET_HEADER, targetRows));
log(
  `\nload average: ${machine.loadAverageAtStart.join(' ')} at the start, ${loadAverageAtEnd.join(' ')} at the end; ${totalSeconds.toFixed(0)} s in all`,
);
if (flag('markdown')) log(`\n${markdownTable(HEADER, rows)}\n\n${markdownTable(TARGET_HEADER, targetRows)}`);

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(
  outFile,
  `${JSON.stringify(
    {
      startedAt: started.toISOString(),
      profile: quick ? 'quick' : 'full',
      deliveries,
      rounds,
      seconds: Math.round(totalSeconds),
      machine: { ...machine, loadAverageAtEnd },
      engines,
      postgres: havePostgres,
      redis: haveRedis,
      variants: summary,
      results,
      targets,
      failures,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${outFile}`);
if (failures.length) {
  log(`\n*** ${failures.length} VARIANT RUN(S) FAILED — these figures are not to be trusted: ***`);
  for (const f of failures) log(`  ${f}`);
}
process.exitCode = failures.length ? 1 : 0;

async function redisAvailable() {
  const { default: IORedis } = await import('ioredis');
  const client = new IORedis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
