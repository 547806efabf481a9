import { HOUR_MS, type HourRecord, hourOf } from './stats.js';

/**
 * The list's stats (every webhook of an environment over the last 24 hours) without reading a
 * day of hourly counters on every call (docs/decisions/033-settled-hours.md). An hour that ended
 * more than an hour ago is **settled**: its attempts were recorded (one is counted in the hour it
 * started, and recorded when it ends), so its counters no longer change. The settled hours of a
 * window are read once per process and kept here; each call reads only what is new since (the
 * hours settled meanwhile, once) and the two live hours. A day of 1,000 webhooks is then about
 * 2,000 rows per call instead of 24,000.
 *
 * Memory is bounded: at most {@link MAX_KEPT_ROWS} hours are kept across environments, the
 * least recently read environment going first. What a late write (an attempt recorded over an
 * hour after it started, e.g. by a process paused that long) adds to a settled hour is seen by
 * the overview at once, and by this list in the processes that read that hour afterwards.
 */
export const MAX_KEPT_ROWS = 500_000;

/** A webhook's settled hours, flat: hour, succeeded, failed, hour, … (three numbers per hour). */
type Kept = number[];

interface Entry {
  /** Hours before this are held (from the window's start); the hours from it on are not. */
  through: number;
  byWebhook: Map<string, Kept>;
  rows: number;
  /** Extensions one after another (two calls must not add the same hours twice). */
  turn: Promise<void>;
  /** The kept hours of `[since, settled)` as counts per webhook: succeeded per point, then failed per point. */
  aligned: { since: number; settled: number; byWebhook: Map<string, number[]> } | null;
}

/** The entry's settled hours in `[since, settled)` as counts per point of an hour from `since`. */
function alignedOf(entry: Entry, since: number, settled: number, points: number): Map<string, number[]> {
  const a = entry.aligned;
  if (a && a.since === since && a.settled === settled) return a.byWebhook;
  const byWebhook = new Map<string, number[]>();
  for (const [webhookId, kept] of entry.byWebhook) {
    let counts: number[] | undefined;
    for (let i = 0; i < kept.length; i += 3) {
      const hour = kept[i]!;
      // Another call may have settled more hours meanwhile: those are read live by this one.
      if (hour < since || hour >= settled) continue;
      counts ??= new Array<number>(2 * points).fill(0);
      const at = (hour - since) / HOUR_MS;
      counts[at]! += kept[i + 1]!;
      counts[points + at]! += kept[i + 2]!;
    }
    if (counts) byWebhook.set(webhookId, counts);
  }
  entry.aligned = { since, settled, byWebhook };
  return byWebhook;
}

/** Reads the counts (no durations) of every webhook of the environment in `[since, until)`. */
export type ReadCounts = (since: number, until: number) => Promise<HourRecord[]>;

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

function add(a: Activity, index: number, succeeded: number, failed: number): void {
  const p = a.points[index]!;
  p.succeeded += succeeded;
  p.failed += failed;
  a.succeeded += succeeded;
  a.failed += failed;
}

export class SettledHours {
  readonly #entries = new Map<string, Entry>();

  /**
   * Every webhook's points (one per hour) and sums over `window` (of hours, `windowOf('24h')`),
   * for the webhooks with attempts in it: settled hours from memory (reading, with `read`, the
   * ones settled since the last call), the rest with `read` now.
   */
  async read(environment: string, window: HourWindow, now: number, read: ReadCounts): Promise<Map<string, Activity>> {
    const { since, until } = window;
    const settled = Math.min(until, Math.max(since, hourOf(now) - HOUR_MS));
    const [entry, live] = await Promise.all([this.#settle(environment, since, settled, read), read(settled, until)]);
    const out = new Map<string, Activity>();
    const of = (webhookId: string) => {
      let a = out.get(webhookId);
      if (!a) {
        const points = Array.from({ length: window.points }, (_, i) => ({ at: since + i * HOUR_MS, succeeded: 0, failed: 0 }));
        a = { points, succeeded: 0, failed: 0 };
        out.set(webhookId, a);
      }
      return a;
    };
    // The settled hours as counts per point (made once per window and settled boundary).
    for (const [webhookId, counts] of alignedOf(entry, since, settled, window.points)) {
      const points = new Array<Activity['points'][number]>(window.points);
      let succeeded = 0;
      let failed = 0;
      for (let i = 0; i < window.points; i++) {
        const p = { at: since + i * HOUR_MS, succeeded: counts[i]!, failed: counts[window.points + i]! };
        succeeded += p.succeeded;
        failed += p.failed;
        points[i] = p;
      }
      out.set(webhookId, { points, succeeded, failed });
    }
    for (const r of live) add(of(r.webhookId), (r.hour - since) / HOUR_MS, r.succeeded, r.failed);
    return out;
  }

  /** The environment's entry, holding every settled hour of `[since, settled)`. */
  async #settle(environment: string, since: number, settled: number, read: ReadCounts): Promise<Entry> {
    let entry = this.#entries.get(environment);
    if (entry) this.#entries.delete(environment); // read again: last to go
    if (!entry || entry.through < since) entry = { through: since, byWebhook: new Map(), rows: 0, turn: Promise.resolve(), aligned: null };
    this.#entries.set(environment, entry);
    const e = entry;
    const turn = e.turn.then(async () => {
      if (e.through >= settled) return;
      const rows = await read(e.through, settled);
      let count = 0;
      for (const [webhookId, kept] of e.byWebhook) {
        // Hours that left the window go.
        let first = 0;
        while (first < kept.length && kept[first]! < since) first += 3;
        if (first > 0) kept.splice(0, first);
        if (kept.length === 0) e.byWebhook.delete(webhookId);
        else count += kept.length / 3;
      }
      for (const r of rows) {
        const kept = e.byWebhook.get(r.webhookId);
        if (kept) kept.push(r.hour, r.succeeded, r.failed);
        else e.byWebhook.set(r.webhookId, [r.hour, r.succeeded, r.failed]);
      }
      // Sorted by hour within a webhook, so the oldest are first to go above.
      for (const kept of e.byWebhook.values()) sortTriples(kept);
      e.rows = count + rows.length;
      e.through = settled;
      e.aligned = null;
      this.#bound(environment);
    });
    e.turn = turn.catch(() => {});
    await turn;
    return e;
  }

  /** Drops the least recently read environments (never `keep`) while over {@link MAX_KEPT_ROWS}. */
  #bound(keep: string): void {
    let total = 0;
    for (const e of this.#entries.values()) total += e.rows;
    for (const [environment, e] of this.#entries) {
      if (total <= MAX_KEPT_ROWS) break;
      if (environment === keep) continue;
      this.#entries.delete(environment);
      total -= e.rows;
    }
  }
}

/** Sorts hour, succeeded, failed triples by hour, in place (already sorted: one pass). */
function sortTriples(kept: number[]): void {
  let sorted = true;
  for (let i = 3; i < kept.length; i += 3) if (kept[i]! < kept[i - 3]!) sorted = false;
  if (sorted) return;
  const triples: number[][] = [];
  for (let i = 0; i < kept.length; i += 3) triples.push(kept.slice(i, i + 3));
  triples.sort((a, b) => a[0]! - b[0]!);
  kept.length = 0;
  for (const t of triples) kept.push(...t);
}
