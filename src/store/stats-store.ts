import type { HourCounts, HourRecord } from '../stats.js';
import type { StoreErrors } from './store-errors.js';

/** The dashboard's figures: the hourly counters and the settled hours' packs (docs/decisions/040-list-stats.md). */
export interface StatsStore extends StoreErrors {
  /**
   * The hourly counters of the environment's webhooks (of one when `webhookId` is given) whose
   * hour starts in `[since, until)`, in no particular order: what `recordAttempts` added for each
   * attempt it wrote (src/stats.ts). A row per webhook and hour with attempts. With
   * `durations: false`, each record's `durations` may be empty (only the counts are read). With
   * `stepMs`, the counters are summed per webhook and period of `stepMs` from `since` (a chart's
   * points), each record's `hour` being its period's start.
   */
  readHours(
    environment: string,
    args: { webhookId?: string; since: number; until: number; durations?: boolean; stepMs?: number },
  ): Promise<HourRecord[]>;
  /**
   * The list's read: the counts (no durations) of every webhook of the environment in the hours
   * that start in `[since, until)`, as tables (`HourCounts`, src/stats.ts), in no particular
   * order; a webhook and hour without attempts may be left out or counted as zeros. The hours
   * that start before `settled` are settled and may be read from their packs (`packHours`), the
   * others (and settled hours not packed yet) from the counters: the counts `readHours` gives,
   * unless a late write reached a counter after its hour was packed.
   */
  readCounts(environment: string, args: { since: number; until: number; settled: number }): Promise<HourCounts[]>;
  /**
   * Packs the hourly counters of the hours that start in `[since, until)`, which the caller says
   * are settled (they no longer change), across every environment: one row per environment and
   * hour holding every webhook's counts of it, which the list's read takes instead of the
   * counters (`readCounts`). A pack already there is left as it is, so processes
   * that pack the same hour at once leave one. Returns the packs written.
   */
  packHours(args: { since: number; until: number }): Promise<number>;
  /** The start of the latest hour packed in any environment, or null when nothing is packed. */
  lastPackedHour(): Promise<number | null>;
}
