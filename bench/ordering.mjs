// Ordered delivery per subject (issue 40, done-when 3): throughput of a per-subject webhook with
// 1,000 subjects against the same webhook in `none`, and the claim's cost as the backlog grows.
//
//   npm run build && node bench/ordering.mjs                 # backlogs of 8k, 32k and 128k, SQLite and PostgreSQL
//   node bench/ordering.mjs --sizes=8000 --stores=sqlite --deliver=2000 --subjects=1000
//   node bench/ordering.mjs --stores=postgres --rounds=5      # none and per-subject alternated, 5 pairs a size: the median ratio
//
// For each store, backlog size and mode (`none`, then `per-subject`): a fresh database, ONE webhook
// on the receiver process (bench/receiver.mjs, 127.0.0.1), the backlog preloaded as due
// deliveries (bench/lib/preload.mjs) of `--subjects` users in turn (event i is user i mod
// subjects). In `per-subject` the preload then writes each delivery's place in its user's queue
// (iw_ordered, what emit writes) and takes the due time off all but each user's first, as emit
// does: 1,000 due, the rest waiting. The engine has its defaults (64 slots, 8 per webhook, claims of
// 64); the first `--deliver` deliveries (4,000) are timed, each claim around the store's own
// claimDue. Printed per run: deliveries/s, claims p50 / p99 / max; per size the ratio
// per-subject / none; with `--rounds` above 1, the pairs of a size alternate (none, per-subject,
// none, …) so that a shift of the machine's load falls on both modes, and the ratio printed is the
// median of the pairs' ratios. Bounded: each run stops after `--deliver` deliveries or 120 s;
// 127.0.0.1 only. Writes <tmp>/identity-webhooks-bench/ordering-<date>.json.
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
  subjects: { type: 'string', default: '1000' },
  rounds: { type: 'string', default: '1' },
  engine: { type: 'string' },
});
const SIZES = values.sizes.split(',').map(Number);
const STORES = values.stores.split(',');
const DELIVER = Number(values.deliver);
const SUBJECTS = Number(values.subjects);
const ROUNDS = Number(values.rounds);
const ENGINE = values.engine ?? join(import.meta.dirname, '..');
const RUN_LIMIT_MS = 120_000;

const load = (file) => import(pathToFileURL(join(ENGINE, 'dist', file)).href);
const { createWebhooks, generateSigningKey } = await load('src/index.js');
const key = await generateSigningKey();

/** What emit writes for a per-subject webhook, set-based: each delivery's place in its user's queue; only the first due. */
async function queueBySubject(store, webhookId) {
  await store.kysely.transaction().execute(async (trx) => {
    await sql`insert into iw_ordered (delivery_id, webhook_id, subject, seq)
      select id, webhook_id, 'kp_' || cast((n - 1) % ${sql.lit(SUBJECTS)} as text), (n - 1) / ${sql.lit(SUBJECTS)} + 1
      from (select id, webhook_id, row_number() over (order by next_attempt_at, id) as n from iw_deliveries where webhook_id = ${webhookId}) d`.execute(
      trx,
    );
    await sql`update iw_deliveries set next_attempt_at = null where id in (select delivery_id from iw_ordered where seq > 1)`.execute(trx);
  });
}

async function run(kind, size, ordering, receiver) {
  let store;
  let dir;
  let db;
  if (kind === 'sqlite') {
    const { sqliteStore } = await load('adapters/sqlite/index.js');
    dir = tempDir('ordering');
    store = sqliteStore({ filename: join(dir.path, 'webhooks.db') });
  } else {
    const { postgresStore } = await load('adapters/postgres/index.js');
    db = `iw_ordering_${process.pid}_${size}_${ordering.replace('-', '_')}`;
    store = postgresStore({ connectionString: await createDatabase(db) });
  }
  const claims = [];
  const claimDue = store.claimDue.bind(store);
  store.claimDue = async (args) => {
    const t0 = performance.now();
    const rows = await claimDue(args);
    claims.push({ ms: performance.now() - t0, rows: rows.length });
    return rows;
  };
  let delivered = 0;
  const records = [];
  const recordAttempts = store.recordAttempts.bind(store);
  store.recordAttempts = async (batch) => {
    const t0 = performance.now();
    const results = await recordAttempts(batch);
    records.push({ ms: performance.now() - t0, n: batch.length });
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
  try {
    // Started only once the backlog and its queues are written: a scheduler running meanwhile
    // would deliver heads before their queues exist.
    const webhook = await hooks.webhooks.create({
      name: 'ordered',
      endpoint: `${receiver.urls[0]}/ok/0`,
      eventTypes: [EVENT_TYPE],
      environment: 'default',
      ordering,
    });
    await preload(store, {
      groups: [{ environment: 'default', webhookIds: [webhook.id] }],
      events: size,
      firstDueAt: Date.now() - size,
      kind,
    });
    if (ordering === 'per-subject') await queueBySubject(store, webhook.id);
    if (kind === 'postgres') await sql`vacuum analyze`.execute(store.kysely);
    if (kind === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.kysely);
    else await sql`checkpoint`.execute(store.kysely).catch(() => {});
    const due = Number(
      (await sql`select count(*) as n from iw_deliveries where status = 'pending' and next_attempt_at is not null`.execute(store.kysely))
        .rows[0].n,
    );
    claims.length = 0;
    records.length = 0;
    delivered = 0;
    const t0 = performance.now();
    await hooks.start();
    while (delivered < DELIVER && performance.now() - t0 < RUN_LIMIT_MS) await new Promise((r) => setTimeout(r, 5));
    const seconds = (performance.now() - t0) / 1000;
    const ms = claims.map((c) => c.ms);
    return {
      store: kind,
      backlog: size,
      ordering,
      dueAtStart: due,
      delivered,
      perSec: delivered / seconds,
      claims: claims.length,
      emptyClaims: claims.filter((c) => c.rows === 0).length,
      claimP50: percentile(ms, 50),
      claimP99: percentile(ms, 99),
      claimMax: Math.max(...ms),
      records: records.length,
      recordGroupMean: records.reduce((n, r) => n + r.n, 0) / records.length,
      recordP50: percentile(
        records.map((r) => r.ms),
        50,
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
const summary = [];
const started = machine();
try {
  const stores = STORES.filter((s) => s !== 'postgres');
  if (STORES.includes('postgres')) {
    if (await postgresAvailable()) stores.push('postgres');
    else console.log('PostgreSQL: none at 127.0.0.1:5432; SQLite only');
  }
  console.log(`ordering: backlogs ${SIZES.join(', ')} over ${SUBJECTS} users, first ${DELIVER} deliveries timed; engine ${ENGINE}`);
  const f = (n) => (n == null ? '-' : n.toFixed(2));
  for (const kind of stores)
    for (const size of SIZES) {
      const ratios = [];
      for (let round = 0; round < ROUNDS; round++) {
        const pair = {};
        for (const ordering of ['none', 'per-subject']) {
          const r = await run(kind, size, ordering, receiver);
          r.round = round;
          results.push(r);
          pair[ordering] = r;
          console.log(
            `  ${kind.padEnd(8)} ${ordering.padEnd(11)} backlog ${String(size).padStart(6)} (${r.dueAtStart} due): ${r.delivered} delivered, ${Math.round(r.perSec)}/s; ${r.claims} claims (${r.emptyClaims} empty), claim p50 ${f(r.claimP50)} ms, p99 ${f(r.claimP99)} ms, max ${f(r.claimMax)} ms; ${r.records} records of ${f(r.recordGroupMean)}, p50 ${f(r.recordP50)} ms`,
          );
        }
        ratios.push(pair['per-subject'].perSec / pair.none.perSec);
      }
      const median = percentile(ratios, 50);
      summary.push({ store: kind, backlog: size, ratios, median });
      console.log(
        `  ${kind.padEnd(8)} backlog ${String(size).padStart(6)}: per-subject / none = ${ROUNDS > 1 ? `median ${f(median)} × of ${ratios.map(f).join(', ')}` : `${f(median)} ×`}`,
      );
    }
} finally {
  await receiver.stop();
}
const out = resultsDir();
mkdirSync(out, { recursive: true });
const file = join(out, `ordering-${new Date().toISOString().replaceAll(':', '-').slice(0, 19)}.json`);
writeFileSync(
  file,
  JSON.stringify(
    { machine: started, end: machine(), engine: ENGINE, deliver: DELIVER, subjects: SUBJECTS, rounds: ROUNDS, summary, results },
    null,
    2,
  ),
);
console.log(`wrote ${file}`);
