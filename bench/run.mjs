// The benchmark suite of identity-webhooks, run on the BUILT package: `npm run bench`
// (build, then this file). Options:
//   --quick        every scenario, small: a smoke test in under 30 s
//   --only=a,b     only these scenario ids (the ceiling always runs: every rate is a ratio to it)
//   --no-postgres  skip the PostgreSQL scenarios even if a server answers
//   --out=FILE     where to write the JSON (default <tmp>/identity-webhooks-bench/<date>.json, or
//                  under BENCH_RESULTS; results are not kept in the tree)
//   --telemetry    every engine process registers an OpenTelemetry SDK (in-memory exporters) first
// Prints a table of figures and one of targets; writes the same as JSON. Never fails on a missed
// target (machines are noisy); exits non-zero only when a scenario could not run at all.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, resultsFile } from './lib/args.mjs';
import { runScenario } from './lib/child.mjs';
import { describeMachine } from './lib/machine.mjs';
import { buildPlan } from './lib/plan.mjs';
import { dropDatabasesLike, postgresAvailable } from './lib/postgres.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { FIGURE_HEADER, figureRows, TARGET_HEADER, targetRows, textTable } from './lib/report.mjs';
import { summarize } from './lib/stats.mjs';
import { derive, judge } from './lib/targets.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const values = benchArgs(import.meta.url, {
  quick: { type: 'boolean' },
  only: { type: 'string' },
  'no-postgres': { type: 'boolean' },
  out: { type: 'string' },
  telemetry: { type: 'boolean' },
});
const quick = values.quick ?? false;
const telemetry = values.telemetry ?? false;
const only = values.only?.split(',');
const started = new Date();
const stamp = started.toISOString().replace(/[:]/g, '-').replace(/\..*/, '');
const outFile = resultsFile(values.out, `${stamp}${quick ? '-quick' : ''}${telemetry ? '-telemetry' : ''}.json`);
const log = (...a) => console.log(...a);

const machine = describeMachine();
log(
  `identity-webhooks bench (${quick ? 'quick' : 'full'}${telemetry ? ', OpenTelemetry SDK registered' : ''}) on ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}`,
);

const plan = buildPlan({ quick }).filter((s) => !only || s.id === 'ceiling' || only.includes(s.id));
const havePostgres = !values['no-postgres'] && (await postgresAvailable());
if (!havePostgres) log('PostgreSQL: not reachable at 127.0.0.1:5432 (or --no-postgres): its scenarios are skipped');
// The PgBouncer scenario starts its own pooler from Debian's binary; without it, it says so and skips.
const { PGBOUNCER } = await import('./lib/pgbouncer.mjs');
if (havePostgres && !PGBOUNCER && plan.some((s) => s.requires === 'pgbouncer'))
  log('PgBouncer: not installed (apt-get install -y pgbouncer): the pgbouncer scenario is skipped');
const pgPrefix = `iw_bench_${process.pid}_${Date.now().toString(36)}`;

const receiver = await startReceiver({ okPorts: 10 });
const results = {};
let failures = 0;
const t0 = performance.now();
try {
  for (const step of plan) {
    for (const kind of step.kinds) {
      const key = kind ?? 'any';
      const label = `${step.id}${kind ? ` [${kind}]` : ''}`;
      (results[step.id] ??= {})[key] = await runStep(step, kind, label);
    }
  }
} finally {
  await receiver.stop();
  if (havePostgres) await dropDatabasesLike(pgPrefix).catch((e) => log(`could not drop bench databases: ${e.message}`));
}
const totalSeconds = (performance.now() - t0) / 1000;

async function runStep(step, kind, label) {
  if (kind === 'postgres' && !havePostgres) return { status: 'skipped', reason: 'skipped: no PostgreSQL' };
  if (step.requires === 'pgbouncer' && !PGBOUNCER) return { status: 'skipped', reason: 'skipped: pgbouncer is not installed' };
  const s0 = performance.now();
  process.stdout.write(`  ${label} ... `);
  try {
    const config = {
      ...step.config,
      kind,
      pgPrefix: `${pgPrefix}_${step.id.replace(/-/g, '_')}`,
      receiver: { urls: receiver.urls, hangUrl: receiver.hangUrl },
    };
    const out = await runScenario(join(here, 'scenarios', step.module), config, {
      timeoutMs: quick ? 60_000 : 240_000,
      env: telemetry ? { IW_BENCH_TELEMETRY: '1' } : {},
    });
    const metrics = Object.fromEntries(Object.entries(out.metrics).map(([name, runs]) => [name, summarize(runs)]));
    log(`${((performance.now() - s0) / 1000).toFixed(1)} s`);
    if (out.errors?.length) log(`    engine reported: ${out.errors.slice(0, 3).join(' | ')}`);
    if (telemetry) log(`    telemetry: ${out.notes?.telemetry?.spans ?? 0} spans exported in the scenario process`);
    return { status: 'ok', metrics, notes: out.notes, seconds: (performance.now() - s0) / 1000 };
  } catch (error) {
    failures++;
    const reason = error.message.split('\n')[0];
    log(`FAILED: ${reason}`);
    if (process.env.BENCH_DEBUG) log(error.stack);
    return { status: 'error', reason };
  } finally {
    // The scenario process has exited: its databases can go now (they can be large).
    if (kind === 'postgres') await dropDatabasesLike(`${pgPrefix}_${step.id.replace(/-/g, '_')}`).catch(() => {});
  }
}

const derived = derive(results);
const verdicts = judge(results);
log(
  `\nFigures (median of runs, or of the windows of one sustained run; ceiling ${derived.ceiling ? Math.round(derived.ceiling) : '-'} signatures/s):\n`,
);
log(textTable(FIGURE_HEADER, figureRows(plan, results, derived)));
log('\nTargets:\n');
log(textTable(TARGET_HEADER, targetRows(verdicts)));
log(
  `\n${verdicts.filter((v) => v.verdict === 'pass').length} pass, ${verdicts.filter((v) => v.verdict === 'miss').length} miss, ${verdicts.filter((v) => v.verdict === 'n/a').length} n/a; ${totalSeconds.toFixed(0)} s in all`,
);

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(
  outFile,
  `${JSON.stringify({ startedAt: started.toISOString(), profile: quick ? 'quick' : 'full', telemetry, seconds: Math.round(totalSeconds), machine, postgres: havePostgres, plan, results, derived, targets: verdicts }, null, 2)}\n`,
);
log(`wrote ${outFile}`);
process.exitCode = failures > 0 ? 1 : 0;
