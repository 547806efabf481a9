import { beforeEach, describe, expect, test } from 'vitest';
import { HOUR_MS } from '../../src/stats.js';
import type { Store } from '../../src/store.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';

/**
 * The dashboard's stats and log filters, part of the store contract (run by describeStore on every
 * adapter): hourly counters written with the outcomes (each adapter's own path for a group of
 * successes, and the shared path for failures), and the log's date range and delivery id.
 */
export function describeStatsContract(ready: () => Promise<Store>): void {
  describe('stats: hourly counters and log filters', () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });

    /** `n` events to `hook`, created at `at(i)`, claimed by w1. */
    const deliveries = async (hook: { id: string; environment: string }, n: number, at: (i: number) => number) => {
      const made = [];
      for (let i = 0; i < n; i++) {
        const [d] = await s.insertEvent(event(hook.environment, { createdAt: at(i) }), {
          newDeliveryId: () => id('msg'),
          webhookIds: [hook.id],
        });
        made.push(d!);
      }
      await s.claimDue({ now: T0 + 10 * HOUR_MS, limit: 100, workerId: 'w1', leaseMs: LEASE });
      return made;
    };

    test('every recorded attempt is counted once in its webhook and hour, successes and failures, with its duration', async () => {
      const a = webhook('env_a');
      const b = webhook('env_a');
      const other = webhook('env_b');
      for (const w of [a, b, other]) await s.createWebhook(w, { maxWebhooks: null });
      const hour = T0 - (T0 % HOUR_MS);
      const ofA = await deliveries(a, 4, (i) => T0 + i);
      const ofB = await deliveries(b, 1, () => T0);
      const ofOther = await deliveries(other, 1, () => T0);
      // Successes as one group (each adapter's own path), two of them in the next hour.
      const group = [...ofA.slice(0, 3), ...ofB, ...ofOther].map((d, i) => ({
        attempt: { ...attempt(d.id, d.webhookId, d.environment, true, i < 2 ? T0 : hour + HOUR_MS + i), durationMs: 30 + i * 1000 },
        workerId: 'w1',
        now: T0 + 5,
        nextAttemptAt: null,
        disableAfterMs: HOUR_MS * 72,
      }));
      await s.recordAttempts(group);
      // The same group again (a retried commit): counted once.
      await s.recordAttempts(group);
      // A failure (the shared path).
      await s.recordAttempts([
        {
          attempt: attempt(ofA[3]!.id, a.id, 'env_a', false, T0),
          workerId: 'w1',
          now: T0 + 6,
          nextAttemptAt: T0 + 60_000,
          disableAfterMs: HOUR_MS * 72,
        },
      ]);
      const rows = await s.readHours('env_a', { since: hour, until: hour + 2 * HOUR_MS });
      const sorted = rows.sort((x, y) => (x.webhookId + x.hour).localeCompare(y.webhookId + y.hour));
      const expected = [
        { webhookId: a.id, hour, succeeded: 2, failed: 1 },
        { webhookId: a.id, hour: hour + HOUR_MS, succeeded: 1, failed: 0 },
        { webhookId: b.id, hour: hour + HOUR_MS, succeeded: 1, failed: 0 },
      ].sort((x, y) => (x.webhookId + x.hour).localeCompare(y.webhookId + y.hour));
      expect(sorted.map(({ durations, ...r }) => r)).toEqual(expected);
      // The list's read (counts only, a row per webhook from the database): the same counts.
      const counts = await s.readHours('env_a', { since: hour, until: hour + 2 * HOUR_MS, durations: false });
      expect(counts.map(({ durations, ...r }) => r).sort((x, y) => (x.webhookId + x.hour).localeCompare(y.webhookId + y.hour))).toEqual(
        expected,
      );
      // Durations: 30 ms and 1030 ms and the failure's 12.6 ms in the first hour of `a`.
      const first = sorted.find((r) => r.webhookId === a.id && r.hour === hour)!;
      expect(first.durations).toEqual([1, 1, 0, 0, 0, 0, 1, 0, 0, 0]);
      // One webhook's; another environment's stay there; the range's end is exclusive.
      expect(await s.readHours('env_a', { webhookId: b.id, since: hour, until: hour + 2 * HOUR_MS })).toHaveLength(1);
      expect(await s.readHours('env_a', { webhookId: other.id, since: hour, until: hour + 2 * HOUR_MS })).toEqual([]);
      expect(await s.readHours('env_b', { since: hour, until: hour + 2 * HOUR_MS })).toHaveLength(1);
      expect(await s.readHours('env_a', { since: hour, until: hour + HOUR_MS })).toHaveLength(1);
      // Deleting a webhook deletes its counters.
      await s.deleteWebhook('env_a', a.id);
      expect(await s.readHours('env_a', { since: hour, until: hour + 2 * HOUR_MS })).toHaveLength(1);
    });

    test("a chart's read sums the counters per period from its start; the list's read gives the ids in the list's order", async () => {
      const a = webhook('env_a', { createdAt: T0 + 2 });
      const b = webhook('env_a', { createdAt: T0 + 1 });
      const other = webhook('env_b');
      for (const w of [a, b, other]) await s.createWebhook(w, { maxWebhooks: null });
      expect(await s.listWebhookIds('env_a')).toEqual([b.id, a.id]);
      expect(await s.listWebhookIds('env_b')).toEqual([other.id]);
      expect(await s.listWebhookIds('env_none')).toEqual([]);
      const hour = T0 - (T0 % HOUR_MS);
      const ofA = await deliveries(a, 4, () => T0);
      const ofB = await deliveries(b, 1, () => T0);
      const offsets = [0, 1, 3, 7]; // hours after `hour`
      const outcome = (d: { id: string; webhookId: string }, startedAt: number, durationMs: number) => ({
        attempt: { ...attempt(d.id, d.webhookId, 'env_a', true, startedAt), durationMs },
        workerId: 'w1',
        now: T0 + 5,
        nextAttemptAt: null,
        disableAfterMs: HOUR_MS * 72,
      });
      await s.recordAttempts([
        ...ofA.map((d, i) => outcome(d, hour + offsets[i]! * HOUR_MS + 5, 10 + i * 100)),
        outcome(ofB[0]!, hour + 2 * HOUR_MS, 12),
      ]);
      const byKey = <R extends { webhookId: string; hour: number }>(rows: R[]) =>
        [...rows].sort((x, y) => (x.webhookId + x.hour).localeCompare(y.webhookId + y.hour));
      const buckets = (...set: Array<[number, number]>) => {
        const d = new Array(10).fill(0);
        for (const [i, n] of set) d[i] = n;
        return d;
      };
      // Six-hour periods from `hour`: hours 0, 1, 3 of `a` (10, 110, 210 ms) in the first, hour 7 (310 ms) in the second.
      expect(byKey(await s.readHours('env_a', { since: hour, until: hour + 12 * HOUR_MS, stepMs: 6 * HOUR_MS }))).toEqual(
        byKey([
          { webhookId: a.id, hour, succeeded: 3, failed: 0, durations: buckets([0, 1], [3, 2]) },
          { webhookId: a.id, hour: hour + 6 * HOUR_MS, succeeded: 1, failed: 0, durations: buckets([4, 1]) },
          { webhookId: b.id, hour, succeeded: 1, failed: 0, durations: buckets([0, 1]) },
        ]),
      );
      // Periods start at `since`, not at a multiple of the step: hours 1 to 6, then 7 to 12, of one webhook.
      expect(
        byKey(await s.readHours('env_a', { webhookId: a.id, since: hour + HOUR_MS, until: hour + 13 * HOUR_MS, stepMs: 6 * HOUR_MS })),
      ).toEqual(
        byKey([
          { webhookId: a.id, hour: hour + HOUR_MS, succeeded: 2, failed: 0, durations: buckets([3, 2]) },
          { webhookId: a.id, hour: hour + 7 * HOUR_MS, succeeded: 1, failed: 0, durations: buckets([4, 1]) },
        ]),
      );
      expect(await s.readHours('env_b', { since: hour, until: hour + 12 * HOUR_MS, stepMs: 6 * HOUR_MS })).toEqual([]);
    });

    test('the log by date range and by delivery id, with and without other filters', async () => {
      const a = webhook('env_a');
      await s.createWebhook(a, { maxWebhooks: null });
      const made = await deliveries(a, 6, (i) => T0 + i * 1000);
      const ids = (page: { deliveries: { id: string }[] }) => page.deliveries.map((d) => d.id);
      const newestFirst = [...made].reverse().map((d) => d.id);
      // The whole log of the webhook, in a range: [T0 + 1000, T0 + 4000).
      const inRange = await s.listDeliveries('env_a', { webhookId: a.id, since: T0 + 1000, until: T0 + 4000 });
      expect(ids(inRange)).toEqual(newestFirst.slice(2, 5));
      // Paged: two, then one.
      const first = await s.listDeliveries('env_a', { webhookId: a.id, since: T0 + 1000, until: T0 + 4000, limit: 2 });
      expect(ids(first)).toEqual(newestFirst.slice(2, 4));
      const second = await s.listDeliveries('env_a', { webhookId: a.id, since: T0 + 1000, until: T0 + 4000, limit: 2, after: first.next });
      expect(ids(second)).toEqual(newestFirst.slice(4, 5));
      expect(second.next).toBeNull();
      // With a status and an event type.
      expect(ids(await s.listDeliveries('env_a', { webhookId: a.id, status: 'pending', since: T0 + 5000 }))).toEqual(
        newestFirst.slice(0, 1),
      );
      expect(ids(await s.listDeliveries('env_a', { webhookId: a.id, eventType: 'user.created', until: T0 + 1000 }))).toEqual(
        newestFirst.slice(5),
      );
      // By delivery id: that one, not another environment's.
      expect(ids(await s.listDeliveries('env_a', { webhookId: a.id, deliveryId: made[2]!.id }))).toEqual([made[2]!.id]);
      expect(ids(await s.listDeliveries('env_b', { deliveryId: made[2]!.id }))).toEqual([]);
    });
  });
}
