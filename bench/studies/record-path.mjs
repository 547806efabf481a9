// What recording a group of successful outcomes costs per delivery (`Store.recordAttempts`, the
// group commit's transaction), on a real SQLite file and on the local PostgreSQL: wall time, and
// this process's CPU time (user + system), which a busy machine disturbs less. Needs builds:
// `node bench/studies/record-path.mjs [dist ...]` (default: ./dist); several builds (e.g. the previous
// commit's: `npx tsc -p tsconfig.build.json --outDir .tmp/before`) run interleaved, RUNS rounds
// (3), each in a fresh process. GROUPS groups (300) of GROUP deliveries (32) per database; only
// the recordAttempts calls are timed (the emits and claims that set each group up are not).

import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs } from '../lib/args.mjs';
import { delivered } from '../lib/outcome.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from '../lib/postgres.mjs';

const RUNS = Number(process.env.RUNS ?? 3);
const GROUPS = Number(process.env.GROUPS ?? 300);
const GROUP = Number(process.env.GROUP ?? 32);
const { values: runMode, positionals } = benchArgs(import.meta.url, { child: { type: 'boolean' } }, { positionals: true });
const mode = runMode.child ? '--child' : positionals[0];
const rest = runMode.child ? positionals : positionals.slice(1);

if (mode !== '--child') {
  const dists = (mode ? [mode, ...rest] : ['dist']).map((d) => resolve(d));
  const withPostgres = await postgresAvailable();
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(`load average at start ${load()}; ${GROUPS} groups of ${GROUP}${withPostgres ? '' : '; no PostgreSQL: SQLite only'}`);
  const results = new Map(dists.map((d) => [d, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const dist of run % 2 ? [...dists].reverse() : dists) {
      const r = await child(dist, withPostgres);
      results.get(dist).push(r);
      console.log(
        `run ${run + 1} ${dist}: ${Object.entries(r)
          .map(([k, v]) => `${k} ${v.toFixed(1)} µs/delivery`)
          .join(', ')}`,
      );
    }
  }
  console.log(`\nmedian of ${RUNS} (load average now ${load()}):`);
  for (const [dist, rs] of results) {
    const med = (k) => rs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
    console.log(
      `${dist}: ${Object.keys(rs[0])
        .map((k) => `${k} ${med(k).toFixed(1)} µs/delivery`)
        .join(', ')}`,
    );
  }
  process.exit(0);
}

function child(dist, withPostgres) {
  return new Promise((resolveChild, reject) => {
    const args = ['--child', dist, withPostgres ? 'pg' : ''];
    const p = fork(fileURLToPath(import.meta.url), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    p.on('message', resolveChild);
    p.on('exit', (code) => code !== 0 && reject(new Error(`${dist}: exit ${code}`)));
  });
}

// ---- one run, in its own process ----
const [dist, pgFlag] = rest;
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const environment = 'default';
const WEBHOOKS = 4;

async function measure(store) {
  await store.migrate(Date.now());
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
  const data = { user: { id: 'kp_0123456789abcdef', email: 'someone@example.com' } };
  let timed = 0;
  let cpu = 0;
  let recorded = 0;
  for (let g = -10; g < GROUPS; g++) {
    for (let i = 0; i < GROUP / WEBHOOKS; i++) {
      const now = Date.now();
      await store.insertEvent(
        { id: `event_${randomUUID()}`, environment, type: 'user.created', source: 'admin', data, eventTimestamp: now, createdAt: now },
        { newDeliveryId: () => `msg_${randomUUID()}` },
      );
    }
    const now = Date.now();
    const claimed = await store.claimDue({ now, limit: GROUP, workerId: 'bench', leaseMs: 60_000 });
    const batch = claimed.map((c) => delivered(c, now));
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await store.recordAttempts(batch);
    const t = Number(process.hrtime.bigint() - t0);
    const c = process.cpuUsage(c0);
    if (g >= 0) (timed += t / 1000), (cpu += c.user + c.system), (recorded += batch.length); // the first 10 groups warm up
  }
  await store.close();
  return { wall: timed / recorded, cpu: cpu / recorded };
}

const result = {};
const { sqliteStore } = await load('adapters/sqlite/index.js');
const dir = mkdtempSync(join(tmpdir(), 'iw-record-path-'));
const put = (name, r) => ((result[`${name} wall`] = r.wall), (result[`${name} cpu`] = r.cpu));
put('sqlite', await measure(sqliteStore({ filename: join(dir, 'bench.db') })));
rmSync(dir, { recursive: true, force: true });
if (pgFlag === 'pg') {
  const { postgresStore } = await load('adapters/postgres/index.js');
  const name = `iw_bench_${process.pid}_${Date.now()}_record`;
  const url = await createDatabase(name);
  try {
    put('postgres', await measure(postgresStore({ connectionString: url, notifications: false })));
  } finally {
    await dropDatabase(name);
  }
}
process.send(result);
process.disconnect();
