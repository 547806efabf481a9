/**
 * A webhook's activity as hourly counters (`iw_webhook_hours`, migration 19): written by the store
 * with every recorded attempt, in the outcome's own transaction, so reading a day or a month of
 * activity costs one row per webhook and hour, whatever the size of the delivery log
 * (docs/decisions/030-hourly-counters.md). This file holds the shapes and the arithmetic the
 * engine and the stores share; the management functions read them with `Store.readHours`.
 */

/** The length of one counter row's period. */
export const HOUR_MS = 3_600_000;

/**
 * Upper bounds (exclusive) of the attempt-duration buckets, in milliseconds; a last bucket takes
 * the rest. Medians and 95th percentiles are read from these (interpolated inside a bucket), so
 * they are estimates, as a histogram's are.
 */
export const DURATION_BOUNDS = [25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const;
/** How many duration buckets a counter row has (`d0` … `d9`). */
export const DURATION_BUCKETS = DURATION_BOUNDS.length + 1;

/** The bucket a duration falls in. */
export function durationBucket(ms: number): number {
  let i = 0;
  while (i < DURATION_BOUNDS.length && ms >= DURATION_BOUNDS[i]!) i++;
  return i;
}

/** The start of the hour `at` falls in (UTC hours: every zone's hours but a few half-hour ones). */
export const hourOf = (at: number): number => at - (((at % HOUR_MS) + HOUR_MS) % HOUR_MS);

/** One webhook's attempts in one hour, as the store keeps them. */
export interface HourRecord {
  webhookId: string;
  /** The hour's start (epoch ms, a whole UTC hour). */
  hour: number;
  /** Attempts that succeeded (HTTP 200). */
  succeeded: number;
  /** Attempts that failed (any other answer, or none). */
  failed: number;
  /** Attempts per duration bucket (their upper bounds: `DURATION_BOUNDS` in src/stats.ts; the last bucket is open). */
  durations: number[];
}

/**
 * Many webhooks' counts over some hours, as one table (the list's read, `Store.readCounts`): in
 * the hour that starts at `hours[k]`, webhook `webhookIds[i]` had `counts[k][2 * i]` attempts
 * that succeeded and `counts[k][2 * i + 1]` that failed. A pack (decision 040) is the table of
 * one hour; the packs that list the same webhooks make one table. The list fills its points from
 * these with no object per webhook and hour (docs/decisions/040-list-stats.md).
 */
export interface HourCounts {
  webhookIds: string[];
  /** Each hour's start (epoch ms, a whole UTC hour). */
  hours: number[];
  /** Per hour, succeeded then failed for each webhook, in `webhookIds`' order. */
  counts: number[][];
}

/** What one attempt adds to its webhook's hour. */
export interface HourTally {
  environment: string;
  webhookId: string;
  hour: number;
  succeeded: number;
  failed: number;
  durations: number[];
}

/**
 * Attempts summed per (webhook, hour), sorted by webhook then hour: the order every store writes
 * them in, so two groups that touch the same rows lock them in the same order.
 */
export function tallyHours(
  attempts: Iterable<{ environment: string; webhookId: string; startedAt: number; durationMs: number; success: boolean }>,
): HourTally[] {
  const byKey = new Map<string, HourTally>();
  for (const a of attempts) {
    const hour = hourOf(a.startedAt);
    const key = `${a.webhookId}\u0000${hour}`;
    let t = byKey.get(key);
    if (!t) {
      t = {
        environment: a.environment,
        webhookId: a.webhookId,
        hour,
        succeeded: 0,
        failed: 0,
        durations: new Array(DURATION_BUCKETS).fill(0),
      };
      byKey.set(key, t);
    }
    if (a.success) t.succeeded++;
    else t.failed++;
    t.durations[durationBucket(Math.round(a.durationMs))]!++;
  }
  return [...byKey.values()].sort((a, b) => (a.webhookId < b.webhookId ? -1 : a.webhookId > b.webhookId ? 1 : a.hour - b.hour));
}

/**
 * The duration below which `share` (0 to 1) of the counted attempts fall, read from bucket counts
 * by linear interpolation inside the bucket (the last, open bucket answers its lower bound).
 * Null when nothing was counted.
 */
export function durationQuantile(durations: readonly number[], share: number): number | null {
  const total = durations.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = share * total;
  let below = 0;
  for (let i = 0; i < durations.length; i++) {
    const n = durations[i]!;
    if (n > 0 && below + n >= rank) {
      const low = i === 0 ? 0 : DURATION_BOUNDS[i - 1]!;
      const high = DURATION_BOUNDS[i];
      if (high === undefined) return low;
      return Math.round(low + ((rank - below) / n) * (high - low));
    }
    below += n;
  }
  return DURATION_BOUNDS.at(-1)!;
}

/** How each range is drawn: its points' length and how many. */
export const RANGES = {
  '24h': { stepMs: HOUR_MS, points: 24 },
  '7d': { stepMs: 6 * HOUR_MS, points: 28 },
  '30d': { stepMs: 24 * HOUR_MS, points: 30 },
} as const satisfies Record<string, { stepMs: number; points: number }>;

export type Range = keyof typeof RANGES;

/** One series of counts: its points, its sums and its summed duration buckets. */
export interface Series {
  since: number;
  until: number;
  stepMs: number;
  points: Array<{ at: number; succeeded: number; failed: number }>;
  succeeded: number;
  failed: number;
  durations: number[];
}

/**
 * The window of `range` ending with the hour `now` falls in: its last point holds that hour (a
 * day's or six hours' point ends at the end of the current hour, so the chart's right edge is now).
 */
export function windowOf(range: Range, now: number): { since: number; until: number; stepMs: number; points: number } {
  const { stepMs, points } = RANGES[range];
  const until = hourOf(now) + HOUR_MS;
  return { since: until - stepMs * points, until, stepMs, points };
}

/** Counter rows (one webhook's, or any's: they are summed) into the points of a window. */
export function seriesOf(rows: readonly HourRecord[], window: { since: number; until: number; stepMs: number; points: number }): Series {
  const points = Array.from({ length: window.points }, (_, i) => ({ at: window.since + i * window.stepMs, succeeded: 0, failed: 0 }));
  const durations = new Array<number>(DURATION_BUCKETS).fill(0);
  let succeeded = 0;
  let failed = 0;
  for (const r of rows) {
    if (r.hour < window.since || r.hour >= window.until) continue;
    const p = points[Math.floor((r.hour - window.since) / window.stepMs)]!;
    p.succeeded += r.succeeded;
    p.failed += r.failed;
    succeeded += r.succeeded;
    failed += r.failed;
    for (let i = 0; i < DURATION_BUCKETS; i++) durations[i]! += r.durations[i] ?? 0;
  }
  return { since: window.since, until: window.until, stepMs: window.stepMs, points, succeeded, failed, durations };
}

/** `succeeded / (succeeded + failed)`, or null when there was nothing. */
export const successRate = (succeeded: number, failed: number): number | null =>
  succeeded + failed === 0 ? null : succeeded / (succeeded + failed);
