import Database from 'better-sqlite3';
import { beforeAll, describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, type SigningKey } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { buildForChildren, spawnWorker, startLedger, until } from '../helpers/fleet.js';
import { tempDir } from '../helpers/http.js';

// Several host processes on one SQLite file, as sqliteStore's documentation allows: they queue on
// SQLite's write lock. Each claim is one statement and each group of successes one transaction
// run in one turn of a process's event loop (adapters/sqlite/record.ts), while the parent emits
// into the same file through Kysely transactions. Real OS processes (the test/helpers/fleet.ts
// workers, on the compiled library), one receiver on 127.0.0.1.

const cleanups = useCleanups();
let dist: string;
let key: SigningKey;
beforeAll(async () => {
  [dist, key] = await Promise.all([buildForChildren(), testKey()]);
}, 120_000);

describe('several processes on one SQLite file', () => {
  test('3 processes deliver 1,500 events x 2 webhooks emitted while they run: each delivery arrives once and is recorded once', async () => {
    const dir = tempDir('iw-sqlite-fleet-');
    const file = dir.file('webhooks.db');
    const ledger = await startLedger();
    const store = sqliteStore({ filename: file });
    const hooks = createWebhooks({ store, keys: [key], issuer: 'http://127.0.0.1/', allowPrivateNetworks: true });
    cleanups.push(
      () => dir.cleanup(),
      () => ledger.close(),
      () => hooks.close(),
    );
    await store.migrate(Date.now()); // the parent only emits: its engine is never started
    for (const name of ['a', 'b']) await hooks.webhooks.create({ name, endpoint: `${ledger.url}/${name}`, eventTypes: ['user.created'] });
    const workers = await Promise.all(
      ['s1', 's2', 's3'].map((id) => spawnWorker(dist, file, id, key, { delivery: { pollIntervalMs: 20, leaseMs: 120_000 } })),
    );
    cleanups.push(...workers.map((w) => () => w.kill()));

    const ids: string[] = [];
    for (let i = 0; i < 1500; i++) ids.push(...(await hooks.emit({ type: 'user.created', source: 'admin', data: userData() })).deliveryIds);
    const db = new Database(file, { readonly: true });
    cleanups.push(() => db.close());
    const delivered = () => (db.prepare("select count(*) as n from iw_deliveries where status = 'delivered'").get() as { n: number }).n;
    await until('every delivery to be recorded', () => delivered() === ids.length, 60_000, 20);
    const stopped = await Promise.all(workers.map((w) => w.stop()));
    expect(stopped.map((s) => s.errors)).toEqual([0, 0, 0]);

    const counts = ledger.counts();
    expect(counts.size).toBe(ids.length);
    expect(new Set(counts.keys())).toEqual(new Set(ids));
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
    expect(db.prepare('select count(*) as n, count(distinct delivery_id) as d from iw_attempts').get()).toEqual({
      n: ids.length,
      d: ids.length,
    });
    expect(db.prepare("select count(*) as n from iw_deliveries where attempt_count <> 1 or status <> 'delivered'").get()).toEqual({ n: 0 });
    // They shared the work (all three polled while the events arrived).
    expect(new Set(ledger.arrivals.map((a) => a.worker)).size).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
