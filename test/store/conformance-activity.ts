import { beforeEach, describe, expect, test } from 'vitest';
import { type Activity, activityOf, settledIn } from '../../src/activity.js';
import type { DeliveryRecord } from '../../src/model.js';
import { HOUR_MS, type HourCounts, type HourRecord, hourOf, windowOf } from '../../src/stats.js';
import type { Store } from '../../src/store.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';

/**
 * The list's stats on every adapter: the store's list read (`readCounts`, its own statements and
 * parsing; here without packs) gives the plain read's counts, and the points the list makes of
 * it (src/activity.ts) are, on every call, the points the counters themselves give, hour by hour.
 */
export function describeActivityContract(ready: () => Promise<Store>): void {
  describe("stats: the list's read", () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });

    const ENV = 'env_a';
    const now = T0 + 20 * 60_000;
    const hour = hourOf(now);

    /** Records one attempt per entry, each on a delivery of its own, started `hoursAgo` before this hour. */
    const record = (entries: HourEntry[]) => recordInHours(s, hour, entries);
    const many = (webhookId: string, hoursAgo: number, n: number, success = true) =>
      Array.from({ length: n }, () => ({ webhookId, hoursAgo, success }));

    /** The slow path: the window's plain rows summed into their points, per webhook. */
    const counted = async (at: number) => {
      const w = windowOf('24h', at);
      return pointsOf(await s.readHours(ENV, { since: w.since, until: w.until }), w);
    };
    /** The list's points at `at`, as `stats()` makes them. */
    const listed = async (at: number) => {
      const w = windowOf('24h', at);
      return Object.fromEntries(activityOf(await s.readCounts(ENV, { since: w.since, until: w.until, settled: settledIn(w, at) }), w));
    };

    test("the list's read gives the plain read's counts, and its settled hours the counters' points, first call and after", async () => {
      const [a, b, c, other] = [webhook(ENV), webhook(ENV), webhook(ENV), webhook('env_b')];
      for (const w of [a, b, c, other]) await s.createWebhook(w, { maxWebhooks: null });
      await record([
        ...many(a.id, 30, 1), // before the window
        ...many(a.id, 23, 2), // its first point
        ...many(a.id, 12, 12), // two digits
        ...many(a.id, 5, 3, false),
        ...many(a.id, 1, 1), // live: the hour before this one
        ...many(a.id, 0, 2),
        ...many(b.id, 22, 1, false),
        ...many(b.id, 2, 1), // the last settled hour
        ...many(c.id, 0, 1), // live only
        { webhookId: other.id, hoursAgo: 3, success: true, environment: 'env_b' },
      ]);

      // The list's read and the plain one: the same counts, whether or not the range starts on the hour.
      for (const [since, until] of [
        [hour - 23 * HOUR_MS, hour + HOUR_MS],
        [hour - 23 * HOUR_MS + 1_800_000, hour + HOUR_MS],
        [hour - 40 * HOUR_MS, hour - HOUR_MS],
        [hour - 2 * HOUR_MS, hour + HOUR_MS], // a short range: read as packs made from the counters
      ] as const) {
        const plain = await s.readHours(ENV, { since, until });
        expect(plain.length).toBeGreaterThan(0);
        expect(recordsOf(await s.readCounts(ENV, { since, until, settled: since }))).toEqual(countsOf(plain));
      }

      // A call, then one with new attempts in the live hours: seen at once.
      expect(await listed(now)).toEqual(await counted(now));
      expect(Object.keys(await listed(now)).sort()).toEqual([a.id, b.id, c.id].sort());
      await record([...many(a.id, 0, 1, false), ...many(c.id, 1, 2)]);
      expect(await listed(now)).toEqual(await counted(now));
      // Hour after hour, as the window moves on and hours settle.
      for (let h = 1; h <= 4; h++) expect(await listed(now + h * HOUR_MS)).toEqual(await counted(now + h * HOUR_MS));

      // A late write to a settled hour (not packed here): the next call sees it.
      const later = now + 4 * HOUR_MS;
      const before = (await listed(later))[a.id]!.succeeded;
      await record(many(a.id, 5, 1));
      expect(await listed(later)).toEqual(await counted(later));
      expect((await listed(later))[a.id]!.succeeded).toBe(before + 1);
    });
  });
}

/** One attempt of a test's counters: on `webhookId`, started `hoursAgo` hours before `hour`. */
export interface HourEntry {
  webhookId: string;
  hoursAgo: number;
  success: boolean;
  environment?: string;
}

/** The environment the counters' tests record in, unless an entry names another. */
const ENV = 'env_a';

/** Records one attempt per entry, each on a delivery of its own, in the hour `hoursAgo` before `hour`. */
export async function recordInHours(s: Store, hour: number, entries: readonly HourEntry[]): Promise<void> {
  const made: DeliveryRecord[] = [];
  for (const e of entries) {
    const [d] = await s.insertEvent(event(e.environment ?? ENV, { createdAt: T0 }), {
      newDeliveryId: () => id('msg'),
      webhookIds: [e.webhookId],
    });
    made.push(d!);
  }
  await s.claimDue({ now: T0 + 10 * HOUR_MS, limit: 1000, workerId: 'w1', leaseMs: LEASE });
  await s.recordAttempts(
    entries.map((e, i) => ({
      attempt: {
        ...attempt(made[i]!.id, e.webhookId, e.environment ?? ENV, e.success, hour - e.hoursAgo * HOUR_MS + 60_000),
        durationMs: 40,
      },
      workerId: 'w1',
      now: T0 + 5,
      nextAttemptAt: e.success ? null : T0 + 30 * HOUR_MS,
      disableAfterMs: HOUR_MS * 1000,
    })),
  );
}

/** A webhook's counts of one hour, as the tests compare them (no durations). */
type HourCount = { webhookId: string; hour: number; succeeded: number; failed: number };

/** Webhook, then hour. */
const byKey = (x: HourCount, y: HourCount) => (x.webhookId === y.webhookId ? x.hour - y.hour : x.webhookId < y.webhookId ? -1 : 1);

/** Counter rows without their durations, webhook and hour in order. */
export const countsOf = (rows: readonly HourCount[]): HourCount[] =>
  rows.map((r) => ({ webhookId: r.webhookId, hour: r.hour, succeeded: r.succeeded, failed: r.failed })).sort(byKey);

/** The list's tables as records (`webhookId`, `hour`, counts), webhook and hour in order, none with no attempts. */
export function recordsOf(tables: readonly HourCounts[]): HourCount[] {
  const records: HourCount[] = [];
  for (const { webhookIds, hours, counts } of tables)
    webhookIds.forEach((webhookId, i) =>
      hours.forEach((hour, k) => {
        const [succeeded, failed] = [counts[k]![2 * i]!, counts[k]![2 * i + 1]!];
        if (succeeded + failed > 0) records.push({ webhookId, hour, succeeded, failed });
      }),
    );
  return records.sort(byKey);
}

/** Counter rows summed into the list's points of window `w`, per webhook (the slow path the list's reads are checked against). */
export function pointsOf(rows: readonly HourRecord[], w: { since: number; points: number }): Record<string, Activity> {
  const out: Record<string, Activity> = {};
  for (const r of rows) {
    out[r.webhookId] ??= {
      points: Array.from({ length: w.points }, (_, i) => ({ at: w.since + i * HOUR_MS, succeeded: 0, failed: 0 })),
      succeeded: 0,
      failed: 0,
    };
    const a = out[r.webhookId]!;
    a.points[(r.hour - w.since) / HOUR_MS]!.succeeded += r.succeeded;
    a.points[(r.hour - w.since) / HOUR_MS]!.failed += r.failed;
    a.succeeded += r.succeeded;
    a.failed += r.failed;
  }
  return out;
}
