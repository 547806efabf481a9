import type { Clock } from './clock.js';
import type { NoticeStore, PurgeCounts } from './store.js';
import { logFields } from './telemetry/log-fields.js';
import { transient } from './transient.js';
import type { Logger } from './types.js';

/** Rows per purging transaction: small enough that a host's emit never waits long behind one. */
export const PURGE_BATCH = 1000;
/** How often retention looks for old records, on the engine's clock. */
export const PURGE_INTERVAL_MS = 5 * 60_000;

export interface RetentionDeps {
  store: NoticeStore;
  clock: Clock;
  logger: Logger;
  /** Finished records older than this go. */
  periodMs: number;
}

/**
 * Retention: deletes finished deliveries with their attempts, events with no delivery left, sent
 * notices and the dashboard's hourly counters (with their packs) once older than the period, and fails (as `expired`) what is held for a webhook
 * disabled that long. At most every PURGE_INTERVAL_MS, in rounds of bounded transactions
 * (`Store.purge`), yielding between rounds; on PostgreSQL one process purges at a time.
 * Pending deliveries are never deleted.
 */
export class Retention {
  #lastRun = Number.NEGATIVE_INFINITY;
  readonly #isTransient: (error: unknown) => boolean;
  /** Totals of the last run, for tests and operators. */
  lastCounts: PurgeCounts | null = null;

  constructor(private readonly deps: RetentionDeps) {
    this.#isTransient = (error) => deps.store.isTransient(error);
  }

  /** One run if an interval has passed since the last; true when it ran (a purge may fail pending deliveries that expired). */
  async runIfDue(): Promise<boolean> {
    const { clock, store, logger, periodMs } = this.deps;
    const now = clock.now();
    // The first round comes one interval after start, not during it: a host opening its own
    // connection on the same SQLite file at startup must not meet a purge holding the lock.
    if (this.#lastRun === Number.NEGATIVE_INFINITY) this.#lastRun = now;
    if (now - this.#lastRun < PURGE_INTERVAL_MS) return false;
    this.#lastRun = now;
    const totals: PurgeCounts = { expired: 0, deliveries: 0, events: 0, notices: 0, hours: 0, packs: 0 };
    // One cutoff for the whole run: the work is then finite (rows that age meanwhile wait for
    // the next run), so rounds can go on until one finds nothing, even when a step takes fewer
    // than PURGE_BATCH rows to stay within its bound (deliveries with many attempts).
    const cutoff = now - periodMs;
    try {
      for (;;) {
        const round = await transient(this.#isTransient, () => store.purge({ cutoff, now: clock.now(), limit: PURGE_BATCH }));
        if (round === null) break; // another process is purging
        for (const key of Object.keys(totals) as Array<keyof PurgeCounts>) totals[key] += round[key];
        if (Object.values(round).every((n) => n === 0)) break;
        await new Promise<void>((resolve) => setImmediate(resolve)); // let emits and claims in between
      }
    } catch (error) {
      logger.error('retention failed; it runs again later', logFields(error));
    }
    this.lastCounts = totals;
    return true;
  }
}
