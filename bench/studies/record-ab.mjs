// What one change to the recording of outcomes costs, on a busy machine: two builds (e.g. with and
// without the hourly counters) record groups of successes, each on its own SQLite file and its own
// PostgreSQL database (a build's migrations may differ), ALTERNATING group by group in one process, so load that comes and goes
// falls on both alike (record-path.mjs alternates whole processes, which a shared machine's load
// swings outlast). Per build: median and mean wall time of `Store.recordAttempts` per delivery,
// and the ratio. GROUPS groups (400) of GROUP deliveries (32) over WEBHOOKS webhooks (4) each.
// On PostgreSQL the CPU that each store's server processes spent in each `recordAttempts`
// (/proc/<pid>/schedstat, nanoseconds on the CPU; a store's calls run one at a time) is reported
// beside the wall time: it does not grow with the machine's load as the wall time does.
// Run: node bench/studies/record-ab.mjs <dist A> <dist B>   (e.g. .tmp/nocount dist)

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchArgs } from '../lib/args.mjs';
import { delivered } from '../lib/outcome.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from '../lib/postgres.mjs';

const GROUPS = Number(process.env.GROUPS ?? 400);
const GROUP = Number(process.env.GROUP ?? 32);
const WEBHOOKS = Number(process.env.WEBHOOKS ?? 4);
const [a, b] = benchArgs(import.meta.url, {}, { positionals: true }).positionals.map((d) => resolve(d));
if (!a || !b) throw new Error('usage: node bench/studies/record-ab.mjs <dist A> <dist B>');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const build = (dist, path) => import(pathToFileURL(join(dist, path)).href);
const environment = 'default';
const data = { user: { id: 'kp_0123456789abcdef', email: 'someone@example.com' } };

async function compare(label, open) {
  const stores = [await open(a), await open(b)];
  await stores[0].migrate(Date.now());
  await stores[1].migrate(Date.now());
  for (let i = 0; i < WEBHOOKS; i++)
    for (const store of stores) {
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
  const times = [[], []];
  const cpu = [[], []];
  // PostgreSQL: the server processes of each store's pool (read once the warm-up has opened them).
  let backends = [null, null];
  const serverPids = () =>
    Promise.all(
      stores.map(async (s) => {
        const query = { sql: 'select pid from pg_stat_activity where datname = current_database()', parameters: [], query: {} };
        return (await s.kysely.executeQuery(query)).rows.map((r) => r.pid);
      }),
    );
  const onCpu = (pids) => pids.reduce((n, pid) => n + Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]), 0);
  for (let g = -20; g < 2 * GROUPS; g++) {
    if (g === 0 && label === 'postgres') backends = await serverPids();
    const k = (g + 20) % 2; // A, B, A, B, …
    const store = stores[k];
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
    const pids = backends[k];
    const c0 = pids === null ? 0 : onCpu(pids);
    const t0 = process.hrtime.bigint();
    await store.recordAttempts(batch);
    const us = Number(process.hrtime.bigint() - t0) / 1000 / batch.length;
    const serverUs = pids === null ? 0 : (onCpu(pids) - c0) / 1000 / batch.length;
    if (g >= 0) {
      times[k].push(us); // the first 20 groups warm up
      cpu[k].push(serverUs);
    }
  }
  for (const s of stores) await s.close();
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const [ma, mb] = times.map(median);
  const [ea, eb] = times.map(mean);
  console.log(
    `${label}: A median ${ma.toFixed(1)} µs/delivery (mean ${ea.toFixed(1)}), B median ${mb.toFixed(1)} (mean ${eb.toFixed(1)}); ` +
      `B/A median ${((mb / ma - 1) * 100).toFixed(1)} %, mean ${((eb / ea - 1) * 100).toFixed(1)} %; load ${load()}`,
  );
  if (backends[0] !== null) {
    const [ca, cb] = cpu.map(median);
    const [sa, sb] = cpu.map(mean);
    console.log(
      `${label} server CPU: A median ${ca.toFixed(1)} µs/delivery (mean ${sa.toFixed(1)}), B median ${cb.toFixed(1)} (mean ${sb.toFixed(1)}); ` +
        `B/A median ${((cb / ca - 1) * 100).toFixed(1)} %, mean ${((sb / sa - 1) * 100).toFixed(1)} %`,
    );
  }
}

console.log(`record-ab: A ${a}, B ${b}; ${GROUPS} groups of ${GROUP} each, alternating; load ${load()}`);
const dir = mkdtempSync(join(tmpdir(), 'iw-record-ab-'));
try {
  await compare('sqlite', async (dist) =>
    (await build(dist, 'adapters/sqlite/index.js')).sqliteStore({ filename: join(dir, `${dist === a ? 'a' : 'b'}.db`) }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (await postgresAvailable()) {
  const names = [`iw_record_ab_${process.pid}_a`, `iw_record_ab_${process.pid}_b`];
  const urls = [await createDatabase(names[0]), await createDatabase(names[1])];
  try {
    await compare('postgres', async (dist) =>
      (await build(dist, 'adapters/postgres/index.js')).postgresStore({
        connectionString: urls[dist === a ? 0 : 1],
        notifications: false,
      }),
    );
  } finally {
    for (const name of names) await dropDatabase(name);
  }
}
