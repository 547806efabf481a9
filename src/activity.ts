import { HOUR_MS, type HourCounts, hourOf } from './stats.js';

/**
 * The list's stats (every webhook of an environment over the last 24 hours), made on every call
 * from one read (docs/decisions/040-list-stats.md): the settled hours from their packs, a row per
 * hour (`hour-packs.ts`), the live hours from the hourly counters, handed over as tables with no
 * object per webhook and hour (`HourCounts`). Nothing is kept between calls: what a call shows is
 * what the store holds.
 */

/**
 * Where the settled hours end at `now`: every hour that starts before it ended over an hour ago
 * (an attempt counts in the hour it started and is recorded when it ends), so its counters no
 * longer change. The one rule for the list's read and for the packing chore (`hour-packs.ts`).
 */
export const settledBefore = (now: number) => hourOf(now) - HOUR_MS;

/** A window of whole hours: `points` hours from `since` to `until`. */
export interface HourWindow {
  since: number;
  until: number;
  points: number;
}

/** One webhook's hourly points over a window, oldest first, and their sums. */
export interface Activity {
  points: Array<{ at: number; succeeded: number; failed: number }>;
  succeeded: number;
  failed: number;
}

/** Where a window's settled hours end at `now` (`settledBefore`, kept inside the window). */
export const settledIn = ({ since, until }: HourWindow, now: number) => Math.min(until, Math.max(since, settledBefore(now)));

/**
 * Every webhook's points (one per hour) and sums over `window`, for the webhooks with attempts in
 * it, from the tables of the list's read (`Store.readCounts`), a webhook looked up once per table.
 */
export function activityOf(tables: readonly HourCounts[], { since, points }: HourWindow): Map<string, Activity> {
  const out = new Map<string, Activity>();
  for (const { webhookIds, hours, counts } of tables) {
    const at = hours.map((h) => (h - since) / HOUR_MS);
    for (let i = 0; i < webhookIds.length; i++) {
      const webhookId = webhookIds[i]!;
      let a = out.get(webhookId);
      if (!a) {
        const series = Array.from({ length: points }, (_, j) => ({ at: since + j * HOUR_MS, succeeded: 0, failed: 0 }));
        a = { points: series, succeeded: 0, failed: 0 };
        out.set(webhookId, a);
      }
      for (let k = 0; k < at.length; k++) {
        const p = a.points[at[k]!]!;
        const succeeded = counts[k]![2 * i]!;
        const failed = counts[k]![2 * i + 1]!;
        p.succeeded += succeeded;
        p.failed += failed;
        a.succeeded += succeeded;
        a.failed += failed;
      }
    }
  }
  return out;
}
