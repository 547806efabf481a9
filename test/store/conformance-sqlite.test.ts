import Database from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import { describe, expect, test } from 'vitest';
import { wholeLogPage } from '../../adapters/kysely/log.js';
import { claimDue, claimQuery } from '../../adapters/sqlite/claim.js';
import { withRowsAsArrays } from '../../adapters/sqlite/driver.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { tempDir } from '../helpers/http.js';
import { attempt, describeStore, event, id, LEASE, T0, webhook } from './conformance.js';

const DAY = 86_400_000;

/** A store on a fresh file, migrated; closed and its directory removed after `fn`. */
async function onMigratedStore(prefix: string, fn: (store: ReturnType<typeof sqliteStore>) => Promise<void>): Promise<void> {
  const dir = tempDir(prefix);
  const store = sqliteStore({ filename: dir.file('webhooks.db') });
  try {
    await store.migrate(0);
    await fn(store);
  } finally {
    await store.close();
    dir.cleanup();
  }
}

// better-sqlite3 is synchronous: a second handle on the file inside this process would sit in
// SQLite's busy wait while the first, blocked with it, could never commit. So the "other
// process" here is the same store: the races still interleave on its queue. Separate processes
// on one file are covered by test/engine/durability.test.ts.
describeStore('sqlite', async () => {
  const dir = tempDir('iw-store-');
  const store = sqliteStore({ filename: dir.file('webhooks.db') });
  return {
    store,
    sibling: async () => store,
    async close() {
      await store.close();
      dir.cleanup();
    },
  };
});

describe('sqlite: claims', () => {
  test('the claim, built once per shape, reads the due index, or per webhook when it leaves webhooks or environments out', async () => {
    await onMigratedStore('iw-claim-plan-', async (store) => {
      for (const args of [
        { now: 1, limit: 64, workerId: 'w', leaseMs: 10 },
        { now: 1, limit: 64, workerId: 'w', leaseMs: 10, excludeWebhookIds: ['webhook_a', 'webhook_b'], excludeEnvironments: ['env_a'] },
        {
          now: 1,
          limit: 64,
          workerId: 'w',
          leaseMs: 10,
          excludeWebhookIds: ['webhook_a', 'webhook_b'],
          excludeEnvironments: ['env_a'],
          byWebhook: false,
        },
      ]) {
        const claim = claimQuery(args);
        // The same text object every time for one shape: nothing is built per claim.
        expect(claimQuery(args).sql).toBe(claim.sql);
        const { rows } = await store.kysely.executeQuery<{ detail: string }>(
          CompiledQuery.raw(`explain query plan ${claim.sql}`, [...claim.parameters]),
        );
        const plan = rows.map((r) => r.detail).join(' | ');
        if (args.excludeWebhookIds && args.byWebhook !== false) {
          // The webhooks with pending work by a skip scan, each one's oldest due rows by a range:
          // nothing reads past the rows of what is left out.
          expect(plan).toMatch(/SEARCH iw_deliveries USING COVERING INDEX iw_deliveries_pending \(webhook_id>\?\)/);
          expect(plan).toMatch(/SEARCH z USING INDEX iw_deliveries_pending \(webhook_id=\? AND next_attempt_at<\?\)/);
          expect(plan).not.toMatch(/iw_deliveries_due/);
        } else expect(plan).toMatch(/USING INDEX iw_deliveries_due/);
        expect(plan).not.toMatch(/SCAN (iw_deliveries|w|x|z)(?! USING)/);
      }
    });
  });
});

describe("sqlite: a webhook's whole log", () => {
  test('migration 13: no index of its own; a page reads a backward range of the status index per status', async () => {
    await onMigratedStore('iw-whole-log-', async (store) => {
      const run = async (q: CompiledQuery) => (await store.kysely.executeQuery<any>(q)).rows;
      const names = (
        await run(CompiledQuery.raw(`select name from sqlite_master where type = 'index' and tbl_name = 'iw_deliveries'`))
      ).map((r: { name: string }) => r.name);
      expect(names).not.toContain('iw_deliveries_log');
      expect(names).toContain('iw_deliveries_log_status');
      for (const after of [null, { createdAt: T0 + 3, id: 'msg_~' }]) {
        const page = wholeLogPage('env_a', 'webhook_a', after, 26).compile(store.kysely);
        const plan = (await run(CompiledQuery.raw(`explain query plan ${page.sql}`, [...page.parameters]))).map(
          (r: { detail: string }) => r.detail,
        );
        // Four ranges of the index, each in its own order (no sort inside one) and limited: what
        // the merge sorts is at most four times a page, whatever the webhook's log holds.
        const range = after
          ? 'SEARCH iw_deliveries USING INDEX iw_deliveries_log_status (webhook_id=? AND status=? AND (created_at,id)<(?,?))'
          : 'SEARCH iw_deliveries USING INDEX iw_deliveries_log_status (webhook_id=? AND status=?)';
        expect(plan.filter((d: string) => d === range)).toHaveLength(4);
        expect(plan.join(' | ')).not.toMatch(/SCAN iw_deliveries/);
      }
    });
  });
});

describe('sqlite: rows as arrays', () => {
  test('one statement text, run with and without the mark, answers each time in the form asked for', async () => {
    await onMigratedStore('iw-raw-rows-', async (store) => {
      const query = CompiledQuery.raw('select ? as "a", ? as "b"', [1, 'x']);
      const run = async (q: CompiledQuery) => (await store.kysely.executeQuery(q)).rows;
      expect(await run(query)).toEqual([{ a: 1, b: 'x' }]);
      expect(await run(withRowsAsArrays(query))).toEqual([[1, 'x']]);
      expect(await run(query)).toEqual([{ a: 1, b: 'x' }]);
      expect(await run(withRowsAsArrays(query))).toEqual([[1, 'x']]);
      // A statement that returns no rows runs as before, marked or not.
      const write = CompiledQuery.raw('create table "t" ("x")');
      expect((await store.kysely.executeQuery(withRowsAsArrays(write))).rows).toEqual([]);
    });
  });
});

describe('sqlite: what a claim returns', () => {
  test('each claimed row as the table now holds it: the columns it fills in from its arguments, and every other', async () => {
    await onMigratedStore('iw-claim-rows-', async (store) => {
      const hooks = [webhook('env_a'), webhook('env_a')];
      for (const h of hooks) await store.createWebhook(h, { maxWebhooks: null });
      const deliveries = await store.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
      // One delivery with a failed attempt behind it: last_attempt_at, last_result and
      // last_error are set, attempt_count is 1, and it is due again.
      const [first] = await store.claimDue({ now: T0, limit: 1, workerId: 'w0', leaseMs: LEASE });
      await store.recordAttempts([
        {
          attempt: attempt(first!.delivery.id, first!.webhook.id, 'env_a', false, T0),
          workerId: 'w0',
          now: T0 + 1,
          nextAttemptAt: T0 + 100,
          disableAfterMs: DAY,
        },
      ]);
      const args = { now: T0 + 200, limit: 10, workerId: 'w1', leaseMs: LEASE };
      const claimed = await claimDue(store.kysely, args);
      expect(claimed.map((r) => r.id).sort()).toEqual(deliveries.map((d) => d.id).sort());
      const { rows } = await store.kysely.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(
          `select * from iw_deliveries where id in (${claimed.map(() => '?').join(', ')})`,
          claimed.map((r) => r.id),
        ),
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const row of claimed) expect(row).toEqual(byId.get(row.id));
      const failed = claimed.find((r) => r.id === first!.delivery.id)!;
      expect(failed).toMatchObject({
        attempt_count: 1,
        last_result: '500',
        claimed_due_at: T0 + 100,
        locked_by: 'w1',
        updated_at: T0 + 1, // the failure's record; a lease is not a change of state
      });
    });
  });
});

describe('sqlite: a group of successes (adapters/sqlite/record.ts)', () => {
  /** A store on a handle the test also holds, with `n` deliveries claimed by w1 and their successes. */
  async function setUp(n: number) {
    const dir = tempDir('iw-record-');
    const db = new Database(dir.file('webhooks.db'));
    db.pragma('journal_mode = WAL'); // the host's choice: the store leaves a handle passed in as it is
    const store = sqliteStore({ database: db });
    await store.migrate(0);
    const hooks = Array.from({ length: n }, () => webhook('env_a'));
    for (const h of hooks) await store.createWebhook(h, { maxWebhooks: null });
    const deliveries = await store.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
    expect(await store.claimDue({ now: T0, limit: n, workerId: 'w1', leaseMs: LEASE })).toHaveLength(n);
    const group = deliveries.map((d, i) => ({
      attempt: attempt(d.id, d.webhookId, 'env_a', true, T0 + i),
      workerId: 'w1',
      now: T0 + 50,
      nextAttemptAt: null,
      disableAfterMs: DAY,
    }));
    const statuses = async () => Promise.all(deliveries.map(async (d) => (await store.getDelivery('env_a', d.id))?.status));
    const attempts = () => (db.prepare('select count(*) as n from iw_attempts').get() as { n: number }).n;
    return {
      db,
      store,
      group,
      statuses,
      attempts,
      async close() {
        await store.close();
        db.close();
        dir.cleanup();
      },
    };
  }

  test("waits out the host's own transaction on a shared handle instead of joining it", async () => {
    const t = await setUp(3);
    try {
      t.db.prepare('begin').run();
      let done = false;
      const recording = t.store.recordAttempts(t.group).then((r) => ((done = true), r));
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      expect(done).toBe(false); // still waiting for the host
      // The host rolls its transaction back: had the group run inside it, it would be gone too.
      t.db.prepare('rollback').run();
      expect(await recording).toEqual(t.group.map(() => ({ disabled: null })));
      expect(await t.statuses()).toEqual(['delivered', 'delivered', 'delivered']);
      expect(t.attempts()).toBe(3);
      expect(t.db.inTransaction).toBe(false);
    } finally {
      await t.close();
    }
  });

  test('an error part-way rolls the whole group back and is thrown; the group then records whole', async () => {
    const t = await setUp(3);
    try {
      // The second attempt breaks a NOT NULL column: the first one's rows must not stay behind.
      const broken = t.group.map((g, i) => (i === 1 ? { ...g, attempt: { ...g.attempt, environment: null as unknown as string } } : g));
      await expect(t.store.recordAttempts(broken)).rejects.toThrow(/NOT NULL/);
      expect(t.db.inTransaction).toBe(false);
      expect(await t.statuses()).toEqual(['pending', 'pending', 'pending']);
      expect(t.attempts()).toBe(0);
      expect(await t.store.recordAttempts(t.group)).toEqual(t.group.map(() => ({ disabled: null })));
      expect(await t.statuses()).toEqual(['delivered', 'delivered', 'delivered']);
      expect(t.attempts()).toBe(3);
    } finally {
      await t.close();
    }
  });
});
