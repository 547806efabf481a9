// Runs ONE scenario in this process (with its own receiver) and prints its raw result: for
// profiling and debugging, e.g.
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/one.mjs fanout1 sqlite --quick
//   node bench/one.mjs ratelimit postgres --runs=3   (a scenario's runs, where it has them)
// The PostgreSQL scenarios need a server at 127.0.0.1:5432 (BENCH_PG_URL).

import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs } from './lib/args.mjs';
import { buildPlan } from './lib/plan.mjs';
import { dropDatabasesLike } from './lib/postgres.mjs';
import { startReceiver } from './lib/receiver-client.mjs';

const { values, positionals } = benchArgs(import.meta.url, { quick: { type: 'boolean' }, runs: { type: 'string' } }, { positionals: true });
const [id, kind = null] = positionals;
const step = buildPlan({ quick: values.quick ?? false }).find((s) => s.id === id);
if (!step) throw new Error(`usage: node bench/one.mjs <scenario id> [sqlite|postgres] [--quick]`);
const receiver = await startReceiver();
const pgPrefix = `iw_bench_one_${process.pid}`;
try {
  const mod = await import(pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), 'scenarios', step.module)).href);
  const runs = values.runs;
  const config = runs === undefined ? step.config : { ...step.config, runs: Number(runs) };
  const result = await mod.default({ ...config, kind, pgPrefix, receiver: { urls: receiver.urls, hangUrl: receiver.hangUrl } });
  console.log(JSON.stringify(result, null, 1));
} finally {
  await receiver.stop();
  if (kind === 'postgres') await dropDatabasesLike(pgPrefix).catch(() => {});
}
