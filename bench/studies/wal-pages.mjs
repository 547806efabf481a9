// What the SQLite store writes per delivery, in WAL pages: a count, not a timing, so it does not
// move with the machine's noise (the peers bench's ratios move ±0.05 between sittings). Through
// the store API only (no HTTP, no scheduler): the bench's preload writes `--deliveries` due
// deliveries, `--fanout` webhooks of one environment per event, then a loop claims `--claim` rows
// at a time and records every claimed delivery as a success in groups of `--group`, as the
// engine does under load (fan-out 10 in the peers bench: claims of ~56, groups of ~41).
//
// Pages are read from the WAL index (`mxFrame` in the -shm header), with SQLite's automatic
// checkpoints off and no checkpoint run, so the count only grows; each claim's and each group's
// pages are what its transaction appended. Time per delivery is printed too, but read it as a
// rough guide: with no checkpoint the WAL grows through the whole run.
//
// `--variants=a,b`: besides `as-migrated` (the schema the migrations make), the same run with a
// secondary index dropped or changed, to attribute the pages. These variants are for
// attribution only; none is the shipped schema, and several would break a feature (each says
// what, in its `note`). Every variant runs in a fresh process on a fresh file; `--rounds` repeats.
//
//   npm run build && node bench/studies/wal-pages.mjs [--deliveries=16000] [--fanout=10] [--claim=56]
//     [--group=40] [--rounds=1] [--variants=all] [--engine=PATH] [--out=FILE]
// The figures go to <tmp>/identity-webhooks-bench/wal-pages-<date>.json (or --out=FILE).

import { fork } from 'node:child_process';
import { mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs, resultsFile } from '../lib/args.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { preload } from '../lib/preload.mjs';
import { textTable } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';
import { tempDir } from '../lib/tmp.mjs';

const PENDING_UNLEASED =
  "create index iw_deliveries_pending on iw_deliveries (webhook_id, next_attempt_at) where status = 'pending' and locked_by is null";

/** Each variant: what it changes after the migrations, and what it would cost the product. */
const VARIANTS = {
  'as-migrated': { sql: [], note: 'the shipped schema' },
  'no pending index': {
    sql: ['drop index iw_deliveries_pending'],
    note: 'claims that leave a saturated webhook out would read its whole due backlog',
  },
  'pending index of unleased rows + leased index': {
    sql: [
      'drop index iw_deliveries_pending',
      PENDING_UNLEASED,
      "create index iw_deliveries_leased on iw_deliveries (next_attempt_at) where status = 'pending' and locked_by is not null",
    ],
    note: 'expired leases found through the second index (not built)',
  },
  'no log-by-status index': {
    sql: ['drop index iw_deliveries_log_status'],
    note: 'the delivery log filtered by a rare status would walk the whole log',
  },
  'log-by-status without delivered rows': {
    sql: [
      'drop index iw_deliveries_log_status',
      "create index iw_deliveries_log_status on iw_deliveries (webhook_id, status, created_at, id) where status <> 'delivered'",
    ],
    note: 'the "delivered" filter would walk the log',
  },
  'no retention index': {
    sql: ['drop index iw_deliveries_finished'],
    note: 'retention would scan for finished rows',
  },
  'no attempts-by-delivery index': {
    sql: ['drop index iw_attempts_delivery'],
    note: "a delivery's attempts would be a table scan",
  },
  'only the due index': {
    sql: [
      'drop index iw_deliveries_pending',
      'drop index iw_deliveries_log_status',
      'drop index iw_deliveries_finished',
      'drop index iw_attempts_delivery',
    ],
    note: "the reference's layout: no fairness index, no log filters, no retention index",
  },
};

const here = fileURLToPath(new URL('.', import.meta.url));

const values = benchArgs(import.meta.url, {
  child: { type: 'boolean' },
  deliveries: { type: 'string', default: '16000' },
  fanout: { type: 'string', default: '10' },
  claim: { type: 'string', default: '56' },
  group: { type: 'string', default: '40' },
  engine: { type: 'string' },
  rounds: { type: 'string', default: '1' },
  variants: { type: 'string', default: 'all' },
  out: { type: 'string' },
});
if (values.child) {
  process.once('message', async (config) => {
    try {
      process.send({ result: await measure(config) }, () => process.exit(0));
    } catch (error) {
      process.send({ error: String(error?.stack ?? error) }, () => process.exit(1));
    }
  });
} else {
  const option = (name, fallback) => values[name] ?? fallback;
  const config = {
    deliveries: Number(option('deliveries', 16_000)),
    fanout: Number(option('fanout', 10)),
    claim: Number(option('claim', 56)),
    group: Number(option('group', 40)),
    enginePath: resolve(option('engine', join(here, '../..'))),
  };
  const rounds = Number(option('rounds', 1));
  const wanted = option('variants', 'all');
  const names = wanted === 'all' ? Object.keys(VARIANTS) : ['as-migrated', ...wanted.split(',').filter((v) => v !== 'as-migrated')];
  for (const n of names) if (!VARIANTS[n]) throw new TypeError(`unknown variant "${n}"; known: ${Object.keys(VARIANTS).join(', ')}`);
  if (!(config.deliveries % config.fanout === 0 && config.claim > 0 && config.group > 0))
    throw new TypeError('--deliveries must be a multiple of --fanout, and --claim and --group positive');
  console.log(
    `WAL pages per delivery: ${config.deliveries} deliveries, fan-out ${config.fanout}, claims of ${config.claim}, groups of ${config.group}, ${rounds} round(s), engine ${config.enginePath}/dist`,
  );
  const results = new Map(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) for (const name of names) results.get(name).push(await child({ ...config, variant: name }));
  const base = median(results.get('as-migrated').map((x) => x.claimPages + x.recordPages));
  const rows = names.map((name) => {
    const rs = results.get(name);
    const claim = median(rs.map((x) => x.claimPages));
    const record = median(rs.map((x) => x.recordPages));
    return [
      name,
      claim.toFixed(3),
      record.toFixed(3),
      (claim + record).toFixed(3),
      `${(((claim + record) / base - 1) * 100).toFixed(0)} %`,
      median(rs.map((x) => x.usPerDelivery)).toFixed(1),
      VARIANTS[name].note,
    ];
  });
  console.log(
    textTable(['variant', 'claim pages/d', 'record pages/d', 'pages/d', 'vs as migrated', 'µs/d (rough)', 'what it costs'], rows),
  );
  const stamp = new Date().toISOString().replace(/[:]/g, '-').replace(/\..*/, '');
  const out = resultsFile(values.out, `wal-pages-${stamp}.json`);
  mkdirSync(dirname(out), { recursive: true });
  const { enginePath, ...shape } = config;
  const figures = { machine: describeMachine(), engine: enginePath, ...shape, rounds, results: Object.fromEntries(results) };
  writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

function child(config) {
  return new Promise((resolvePromise, reject) => {
    const c = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const timer = setTimeout(() => c.kill('SIGKILL'), 300_000);
    c.once('message', (m) => (clearTimeout(timer), m.error ? reject(new Error(m.error)) : resolvePromise(m.result)));
    c.once('exit', (code) => (clearTimeout(timer), reject(new Error(`child exited (${code}) without a result`))));
    c.send(config);
  });
}

async function measure({ enginePath, variant, deliveries, fanout, claim, group }) {
  const load = (file) => import(pathToFileURL(join(enginePath, 'dist', file)).href);
  const { sqliteStore } = await load('adapters/sqlite/index.js');
  const { createWebhooks, generateSigningKey } = await load('src/index.js');
  const { default: Database } = await import('better-sqlite3');
  const dir = tempDir('wal-pages');
  const raw = new Database(join(dir.path, 'webhooks.db'));
  try {
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    raw.pragma('wal_autocheckpoint = 0');
    const store = sqliteStore({ database: raw }); // a handle of ours: the store runs no checkpoint on it
    const hooks = createWebhooks({
      store,
      keys: [await generateSigningKey()],
      issuer: 'https://bench.example',
      allowPrivateNetworks: true,
    });
    await store.migrate(Date.now());
    const db = store.kysely;
    for (const statement of VARIANTS[variant].sql) raw.exec(statement);
    const webhookIds = [];
    for (let i = 0; i < fanout; i++) {
      const w = await hooks.webhooks.create({
        name: `w${i}`,
        endpoint: `http://127.0.0.1:9/${i}`,
        eventTypes: ['user.created'],
        environment: 'default',
      });
      webhookIds.push(w.id);
    }
    await preload(store, {
      groups: [{ environment: 'default', webhookIds }],
      events: deliveries / fanout,
      firstDueAt: Date.now() - deliveries,
      kind: 'sqlite',
    });
    raw.pragma('wal_checkpoint(TRUNCATE)'); // the loop's pages only, from an empty WAL

    const shm = openSync(join(dir.path, 'webhooks.db-shm'), 'r');
    const header = Buffer.alloc(4);
    const frames = () => (readSync(shm, header, 0, 4, 16), header.readUInt32LE(0)); // WalIndexHdr.mxFrame
    const workerId = 'wal-pages';
    let claimPages = 0;
    let recordPages = 0;
    let recorded = 0;
    const outcomes = [];
    const t0 = performance.now();
    for (;;) {
      const now = Date.now();
      let before = frames();
      const claimed = await store.claimDue({ now, limit: claim, workerId, leaseMs: 60_000 });
      claimPages += frames() - before;
      for (const c of claimed) {
        outcomes.push({
          attempt: {
            id: `attempt_${c.delivery.id.slice('msg_'.length)}`,
            deliveryId: c.delivery.id,
            webhookId: c.webhook.id,
            environment: c.delivery.environment,
            startedAt: now,
            durationMs: 1,
            statusCode: 200,
            errorKind: null,
            errorMessage: null,
            responseExcerpt: null,
            success: true,
          },
          workerId,
          now,
          nextAttemptAt: null,
          disableAfterMs: 72 * 3_600_000,
        });
      }
      while (outcomes.length >= group || (claimed.length === 0 && outcomes.length > 0)) {
        const batch = outcomes.splice(0, group);
        before = frames();
        await store.recordAttempts(batch);
        recordPages += frames() - before;
        recorded += batch.length;
      }
      if (claimed.length === 0) break;
    }
    const seconds = (performance.now() - t0) / 1000;
    const [delivered] = await db
      .selectFrom('iw_deliveries')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'delivered')
      .execute();
    if (Number(delivered.n) !== deliveries || recorded !== deliveries)
      throw new Error(`recorded ${recorded}, delivered ${delivered.n}, expected ${deliveries}`);
    await hooks.close();
    return { claimPages: claimPages / deliveries, recordPages: recordPages / deliveries, usPerDelivery: (seconds * 1e6) / deliveries };
  } finally {
    if (raw.open) raw.close();
    dir.cleanup();
  }
}
