import { CompiledQuery } from 'kysely';
import { describe, expect, test } from 'vitest';
import { claimQuery } from '../../adapters/sqlite/claim.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { tempDir } from '../helpers/http.js';
import { describeStore } from './conformance.js';

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
  test('the claim, built once per shape, reads the due index, or per webhook when it leaves webhooks or customers out', async () => {
    const dir = tempDir('iw-claim-plan-');
    const store = sqliteStore({ filename: dir.file('webhooks.db') });
    try {
      await store.migrate(0);
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
    } finally {
      await store.close();
      dir.cleanup();
    }
  });
});
