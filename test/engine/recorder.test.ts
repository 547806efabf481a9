import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { OutcomeRecorder } from '../../src/delivery/recorder.js';
import type { RecordAttemptArgs, Store } from '../../src/store.js';
import { useCleanups } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/http.js';

const cleanups = useCleanups();

/** A real SQLite store whose `recordAttempts` calls are counted: the size of each group written. */
async function countingStore() {
  const dir = tempDir();
  const store = sqliteStore({ filename: dir.file('webhooks.db') });
  await store.migrate(Date.now());
  cleanups.push(() => store.close());
  const groups: number[] = [];
  const counted = new Proxy(store, {
    get(target, prop) {
      if (prop === 'recordAttempts')
        return (batch: RecordAttemptArgs[]) => {
          groups.push(batch.length);
          return target.recordAttempts(batch);
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Store;
  return { recorder: new OutcomeRecorder(counted), groups };
}

let seq = 0;
/** A success for a delivery the store does not hold (recorded as nothing, like one deleted in flight). */
function outcome(): RecordAttemptArgs {
  const n = String(seq++).padStart(20, '0');
  return {
    attempt: {
      id: `attempt_000000000000${n}`,
      deliveryId: `msg_000000000000${n}`,
      webhookId: 'webhook_gone',
      environment: 'default',
      startedAt: 1,
      durationMs: 1,
      statusCode: 200,
      errorKind: null,
      errorMessage: null,
      responseExcerpt: null,
      success: true,
    },
    workerId: 'w1',
    now: 2,
    nextAttemptAt: null,
    disableAfterMs: 72 * 3600_000,
  };
}

describe('outcome group commit', () => {
  test('an outcome that lands a millisecond after another joins its group (the group gathers while outcomes keep coming)', async () => {
    const { recorder, groups } = await countingStore();
    const first = recorder.record(outcome(), 60_000);
    // A timer of the same length created first fires first: this outcome lands during the
    // group's first millisecond of waiting, after the turn in which the first one landed.
    const second = new Promise((resolve) => setTimeout(() => resolve(recorder.record(outcome(), 60_000)), 1));
    await Promise.all([first, second]);
    expect(groups).toEqual([2]);
  });

  test('outcomes of one turn are one group up to 128; a lone later outcome is its own group', async () => {
    const { recorder, groups } = await countingStore();
    const results = await Promise.all(Array.from({ length: 200 }, () => recorder.record(outcome(), 60_000)));
    expect(results).toHaveLength(200);
    expect(results.every((r) => r.disabled === null)).toBe(true);
    await recorder.record(outcome(), 60_000);
    expect(groups).toEqual([128, 72, 1]);
  });
});
