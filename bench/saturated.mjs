// One saturated endpoint with a deep backlog (issue 17, done-when 3): does a claim cost more as
// the backlog grows, and are claimed deliveries given back?
//
//   npm run build && node bench/saturated.mjs                 # backlogs of 8k, 32k and 128k, SQLite and PostgreSQL
//   node bench/saturated.mjs --sizes=8000,32000 --stores=sqlite --deliver=2000
//   node bench/saturated.mjs --engine=/path/to/other/checkout  # that checkout's dist (built), for a before/after
//
// For each store and backlog size: a fresh database, ONE webhook of one environment on the
// receiver process (bench/receiver.mjs, 127.0.0.1), the backlog preloaded as due deliveries
// (bench/lib/preload.mjs), the engine with its defaults (64 slots, 8 per webhook, claims of 64),
// then the first `--deliver` deliveries (4,000 by default) timed. Every claim the scheduler makes
// is timed around the store's own claimDue (its statements, not the scheduler's bookkeeping), and
// every row given back through release() is counted. Printed per run: claims, their p50 / p99 /
// max, rows released, deliveries/s. Bounded: each run stops after `--deliver` deliveries or 120 s,
// and everything goes to 127.0.0.1 only. Writes <tmp>/identity-webhooks-bench/saturated-<date>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { benchArgs, resultsDir } from './lib/args.mjs';
import { describeMachine as machine } from './lib/machine.mjs';
import { EVENT_TYPE, ISSUER } from './lib/payload.mjs';
import { createDatabase, dropDatabase, postgresAvailable } from './lib/postgres.mjs';
import { preload } from './lib/preload.mjs';
import { startReceiver } from './lib/receiver-client.mjs';
import { percentile } from './lib/stats.mjs';
import { tempDir } from './lib/tmp.mjs';

const values = benchArgs(import.meta.url, {
  sizes: { type: 'string', default: '8000,32000,128000' },
  stores: { type: 'string', default: 'sqlite,postgres' },
  deliver: { type: 'string', default: '4000' },
  engine: { type: 'string' },
});
const SIZES = values.sizes.split(',').map(Number);
const STORES = values.stores.split(',');
const DELIVER = Number(values.deliver);
const ENGINE = values.engine ?? join(import.meta.dirname, '..');
const RUN_LIMIT_MS = 120_000;

const load = (file) => import(pathToFileURL(join(ENGINE, 'dist', file)).href);
const { createWebhooks, generateSigningKey } = await load('src/index.js');
const key = await generateSigningKey();

async function run(kind, size, receiver) {
  let store;
  let dir;
  let db;
  if (kind === 'sqlite') {
    const { sqliteStore } = await load('adapters/sqlite/index.js');
    dir = tempDir('saturated');
    store = sqliteStore({ filename: join(dir.path, 'webhooks.db') });
  } else {
    const { postgresStore } = await load('adapters/postgres/index.js');
    db = `iw_saturated_${process.pid}_${size}`;
    store = postgresStore({ connectionString: await createDatabase(db) });
  }
  const claims = [];
  let released = 0;
  const claimDue = store.claimDue.bind(store);
  const release = store.release.bind(store);
  store.claimDue = async (args) => {
    const t0 = performance.now();
    const rows = await claimDue(args);
    claims.push({ ms: performance.now() - t0, rows: rows.length, excluded: args.excludeWebhookIds.length });
    return rows;
  };
  store.release = async (ids, ...rest) => {
    released += ids.length;
    return release(ids, ...rest);
  };
  // Counted as the engine records them, not by polling the table: a count(*) over the backlog
  // would queue on SQLite's one connection ahead of the claims it is timing.
  let delivered = 0;
  const recordAttempts = store.recordAttempts.bind(store);
  store.recordAttempts = async (batch) => {
    const results = await recordAttempts(batch);
    delivered += batch.filter((b) => b.attempt.success).length;
    return results;
  };
  const hooks = createWebhooks({
    store,
    keys: [key],
    issuer: ISSUER,
    allowPrivateNetworks: true,
    authorize: () => null,
    logger: { warn: () => {}, error: (message) => console.error(`  engine error: ${message}`) },
  });
  const count = async (query) => Number((await query.execute(store.kysely)).rows[0].n);
  try {
    await hooks.start();
    const webhook = await hooks.webhooks.create({
      name: 'saturated',
      endpoint: `${receiver.urls[0]}/ok/0`,
      eventTypes: [EVENT_TYPE],
      environment: 'default',
    });
    await preload(store, {
      groups: [{ environment: 'default', webhookIds: [webhook.id] }],
      events: size,
      firstDueAt: Date.now() - size,
      kind,
    });
    // A real backlog builds up over minutes and is in the database's own files (and, on
    // PostgreSQL, vacuumed and analyzed) by the time it is worked off; the preload writes it in
    // one go (~150 MB at 128k), and copying that out of the WAL (SQLite's checkpoint thread,
    // PostgreSQL's checkpointer) or autovacuum's first pass over the new rows would otherwise run
    // during the timed window, and a claim that needs the disk meanwhile waits for it. Settle
    // both first.
    if (kind === 'postgres') await sql`vacuum analyze`.execute(store.kysely);
    if (kind === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.kysely);
    else await sql`checkpoint`.execute(store.kysely).catch(() => {}); // (needs a superuser or pg_checkpoint)
    claims.length = 0;
    const t0 = performance.now();
    delivered = 0;
    hooks.wake();
    while (delivered < DELIVER && performance.now() - t0 < RUN_LIMIT_MS) await new Promise((r) => setTimeout(r, 5));
    const seconds = (performance.now() - t0) / 1000;
    // The store agrees (checked after the clock stopped): every success counted was recorded.
    const counted = delivered;
    const stored = await count(sql`select count(*) as n from iw_deliveries where status = 'delivered'`);
    if (stored < counted) throw new Error(`counted ${counted} deliveries, the store has ${stored}`);
    const ms = claims.map((c) => c.ms);
    if (process.env.SATURATED_DEBUG) console.log(claims.map((c, i) => `#${i} ${c.rows}/${c.excluded} ${c.ms.toFixed(1)}ms`).join(' '));
    return {
      store: kind,
      backlog: size,
      delivered: counted,
      perSec: counted / seconds,
      claims: claims.length,
      emptyClaims: claims.filter((c) => c.rows === 0).length,
      rowsClaimed: claims.reduce((n, c) => n + c.rows, 0),
      released,
      claimP50: percentile(ms, 50),
      claimP99: percentile(ms, 99),
      claimMax: Math.max(...ms),
      excludingClaimP99: percentile(
        claims.filter((c) => c.excluded > 0).map((c) => c.ms),
        99,
      ),
    };
  } finally {
    await hooks.close();
    dir?.cleanup();
    if (db) await dropDatabase(db);
  }
}

const receiver = await startReceiver({ okPorts: 1 });
const results = [];
const started = machine();
try {
  const stores = STORES.filter((s) => s !== 'postgres') ?? [];
  if (STORES.includes('postgres')) {
    if (await postgresAvailable()) stores.push('postgres');
    else console.log('PostgreSQL: none at 127.0.0.1:5432; SQLite only');
  }
  console.log(`saturated endpoint: backlogs ${SIZES.join(', ')}, first ${DELIVER} deliveries timed; engine ${ENGINE}`);
  for (const kind of stores)
    for (const size of SIZES) {
      const r = await run(kind, size, receiver);
      results.push(r);
      const f = (n) => n.toFixed(2);
      console.log(
        `  ${kind.padEnd(8)} backlog ${String(size).padStart(6)}: ${r.delivered} delivered, ${Math.round(r.perSec)}/s; ${r.claims} claims (${r.emptyClaims} empty, ${r.rowsClaimed} rows), claim p50 ${f(r.claimP50)} ms, p99 ${f(r.claimP99)} ms, max ${f(r.claimMax)} ms (excluding a webhook: p99 ${f(r.excludingClaimP99 ?? 0)} ms); ${r.released} rows given back`,
      );
    }
} finally {
  await receiver.stop();
}
const out = resultsDir();
mkdirSync(out, { recursive: true });
const file = join(out, `saturated-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}.json`);
writeFileSync(file, JSON.stringify({ machine: started, end: machine(), engine: ENGINE, deliver: DELIVER, results }, null, 2));
console.log(`wrote ${file}`);
