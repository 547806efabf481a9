import { HOUR_MS, type HourCounts, hourOf } from './stats.js';

/**
 * The list's stats (every webhook of an environment over the last 24 hours) without reading a
 * day of hourly counters on every call (docs/decisions/033-settled-hours.md). An hour that ended
 * more than an hour ago is **settled**: its attempts were recorded (one is counted in the hour it
 * started, and recorded when it ends), so its counters no longer change. The settled hours of a
 * window are read once per process and kept here as counts per point; each call reads only what
 * is new since (the hours settled meanwhile, once) and the two live hours.
 *
 * The first call of a process for an environment reads every settled hour of the window: the
 * counts go straight into their points (decision 034), nothing sorted or kept twice; the store
 * reads those hours from their packs, a row per hour, and hands them over as tables, with no
 * object per webhook and hour (decision 035).
 *
 * Memory is bounded: at most {@link MAX_KEPT_POINTS} points are kept across environments, the
 * least recently read environment going first. What a late write (an attempt recorded over an
 * hour after it started, e.g. by a process paused that long) adds to a settled hour is seen by
 * the overview at once, and by this list in the processes that read that hour afterwards.
 */
export const MAX_KEPT_POINTS = 500_000;

/** The settled hours `[since, settled)` of a window of `points` hours from `since`. */
interface Span {
  since: number;
  settled: number;
  points: number;
}

/**
 * A span's counts, per webhook with attempts in it: succeeded per point, then failed per point.
 * Never changed once made (a call that started with it keeps reading it while another makes the
 * next one).
 */
interface Settled extends Span {
  byWebhook: Map<string, number[]>;
}

interface Entry {
  settled: Settled | null;
  /** Extensions one after another (two calls must not read the same hours twice). */
  turn: Promise<void>;
}

/**
 * Reads the counts (no durations) of every webhook of the environment in `[since, until)`; the
 * hours before `settled` are settled (the store may read them from their packs, decision 035).
 */
export type ReadCounts = (since: number, until: number, settled: number) => Promise<HourCounts[]>;

/**
 * Where the settled hours end at `now`: every hour that starts before it ended over an hour ago.
 * The one rule for the list's kept hours and for the packing chore (`hour-packs.ts`).
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

export class SettledHours {
  readonly #entries = new Map<string, Entry>();

  /**
   * Every webhook's points (one per hour) and sums over `window` (of hours, `windowOf('24h')`),
   * for the webhooks with attempts in it: settled hours from memory (reading, with `read`, the
   * ones settled since the last call), the rest with `read` now.
   */
  async read(environment: string, window: HourWindow, now: number, read: ReadCounts): Promise<Map<string, Activity>> {
    const { since, until, points } = window;
    const settled = Math.min(until, Math.max(since, settledBefore(now)));
    const { kept, live } = await this.#settle(environment, { since, settled, points }, until, read);
    const out = new Map<string, Activity>();
    for (const [webhookId, counts] of kept.byWebhook) {
      const series = new Array<Activity['points'][number]>(points);
      let succeeded = 0;
      let failed = 0;
      for (let i = 0; i < points; i++) {
        const p = { at: since + i * HOUR_MS, succeeded: counts[i]!, failed: counts[points + i]! };
        succeeded += p.succeeded;
        failed += p.failed;
        series[i] = p;
      }
      out.set(webhookId, { points: series, succeeded, failed });
    }
    for (const t of live ?? (await read(settled, until, settled))) {
      const { webhookIds, hours, counts } = t;
      for (let i = 0; i < webhookIds.length; i++) {
        const webhookId = webhookIds[i]!;
        let a = out.get(webhookId);
        if (!a) {
          const series = Array.from({ length: points }, (_, j) => ({ at: since + j * HOUR_MS, succeeded: 0, failed: 0 }));
          a = { points: series, succeeded: 0, failed: 0 };
          out.set(webhookId, a);
        }
        for (let k = 0; k < hours.length; k++) {
          const p = a.points[(hours[k]! - since) / HOUR_MS]!;
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

  /**
   * The settled hours of `want`, from the environment's kept ones and what settled since. When
   * it reads, it reads on to `until` in the same statement and gives back the live rows too.
   */
  async #settle(environment: string, want: Span, until: number, read: ReadCounts): Promise<{ kept: Settled; live: HourCounts[] | null }> {
    let entry = this.#entries.get(environment);
    if (entry) this.#entries.delete(environment); // read again: last to go
    entry ??= { settled: null, turn: Promise.resolve() };
    this.#entries.set(environment, entry);
    const e = entry;
    let made: Settled | null = null;
    let live: HourCounts[] | null = null;
    const turn = e.turn.then(async () => {
      const kept = e.settled;
      if (kept && same(kept, want)) {
        made = kept;
        return;
      }
      // Kept hours that are still in the window, when they reach as far as it starts.
      const from = kept && reaches(kept, want) ? kept : null;
      const tables = await read(from ? from.settled : want.since, until, want.settled);
      made = { ...want, byWebhook: from ? shifted(from, want) : new Map() };
      live = addTables(made, tables);
      // A call behind the kept hours (its clock an hour earlier, overlapping one that moved on)
      // reads its own, and keeps nothing.
      if (kept && kept.settled > want.settled) return;
      e.settled = made;
      this.#bound(environment);
    });
    e.turn = turn.catch(() => {});
    await turn;
    return { kept: made!, live };
  }

  /** Drops the least recently read environments (never `keep`) while over {@link MAX_KEPT_POINTS}. */
  #bound(keep: string): void {
    const size = (e: Entry) => (e.settled ? e.settled.byWebhook.size * e.settled.points : 0);
    let total = 0;
    for (const e of this.#entries.values()) total += size(e);
    for (const [environment, e] of this.#entries) {
      if (total <= MAX_KEPT_POINTS) break;
      if (environment === keep) continue;
      this.#entries.delete(environment);
      total -= size(e);
    }
  }
}

const same = (a: Span, b: Span) => a.since === b.since && a.settled === b.settled && a.points === b.points;

/** Whether `want` is `kept` moved on: the same points, starting where kept ones are or later, kept ones not past it. */
const reaches = (kept: Span, want: Span) =>
  kept.points === want.points && kept.since <= want.since && want.since <= kept.settled && kept.settled <= want.settled;

/** The kept counts of the hours `[want.since, kept.settled)`, moved to their points in `want`; webhooks left with none go. */
function shifted(kept: Settled, want: Span): Map<string, number[]> {
  const by = (want.since - kept.since) / HOUR_MS;
  const points = want.points;
  const byWebhook = new Map<string, number[]>();
  for (const [webhookId, old] of kept.byWebhook) {
    const counts = new Array<number>(2 * points).fill(0);
    let any = 0;
    for (let i = 0; i + by < points; i++) {
      counts[i] = old[i + by]!;
      counts[points + i] = old[points + i + by]!;
      any += counts[i]! + counts[points + i]!;
    }
    if (any > 0) byWebhook.set(webhookId, counts);
  }
  return byWebhook;
}

/**
 * Adds the counts of hours in `[s.since, s.settled)` into their points, a webhook looked up once
 * per table; gives back the others (the live hours') as tables.
 */
function addTables(s: Settled, tables: readonly HourCounts[]): HourCounts[] {
  const { since, settled, points, byWebhook } = s;
  const live: HourCounts[] = [];
  for (const { webhookIds, hours, counts } of tables) {
    const at: number[] = [];
    const kept: number[][] = [];
    const later: HourCounts = { webhookIds, hours: [], counts: [] };
    for (let k = 0; k < hours.length; k++) {
      if (hours[k]! >= settled) {
        later.hours.push(hours[k]!);
        later.counts.push(counts[k]!);
      } else {
        at.push((hours[k]! - since) / HOUR_MS);
        kept.push(counts[k]!);
      }
    }
    if (later.hours.length > 0) live.push(later);
    if (at.length === 0) continue;
    for (let i = 0; i < webhookIds.length; i++) {
      let into = byWebhook.get(webhookIds[i]!);
      if (!into) {
        into = new Array<number>(2 * points).fill(0);
        byWebhook.set(webhookIds[i]!, into);
      }
      for (let k = 0; k < at.length; k++) {
        into[at[k]!]! += kept[k]![2 * i]!;
        into[points + at[k]!]! += kept[k]![2 * i + 1]!;
      }
    }
  }
  return live;
}
