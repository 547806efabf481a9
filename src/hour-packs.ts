import { settledBefore } from './activity.js';
import type { Clock } from './clock.js';
import { HOUR_MS, windowOf } from './stats.js';
import type { StatsStore } from './store.js';
import { transient } from './transient.js';

/**
 * How long after start the first packing run waits, and a run that failed before the next, on
 * the engine's clock: as retention's first round, the first packs are not written while a host
 * opens its own connection on the same SQLite file at startup.
 */
export const PACK_PAUSE_MS = 60_000;

export interface HourPackingDeps {
  store: StatsStore;
  clock: Clock;
}

/**
 * The packing chore (docs/decisions/040-list-stats.md): once an hour settles (`settledBefore`,
 * the list's own rule), packs its counters into one row per environment (`Store.packHours`), so
 * each list call reads a row per settled hour instead of one per webhook and hour.
 * Only the hours of the list's window are packed; each hour in its own statement, oldest first,
 * from the latest packed by any process (processes packing the same hour at once leave one
 * pack). Nothing to do costs no store call: the hours this process knows packed are kept here.
 * It writes nothing a claim reads, so a run never counts as a write for the scheduler.
 */
export class HourPacking {
  /** Every hour before this one is packed (or out of the list's window), as far as this process knows. */
  #done = Number.NEGATIVE_INFINITY;
  /** No run before this time (null until the first call: then one pause after it). */
  #notBefore: number | null = null;
  readonly #isTransient: (error: unknown) => boolean;

  constructor(private readonly deps: HourPackingDeps) {
    this.#isTransient = (error) => deps.store.isTransient(error);
  }

  async runIfDue(): Promise<boolean> {
    const { clock, store } = this.deps;
    const now = clock.now();
    const settled = settledBefore(now);
    this.#notBefore ??= now + PACK_PAUSE_MS;
    if (this.#done >= settled || now < this.#notBefore) return false;
    try {
      const last = await transient(this.#isTransient, () => store.lastPackedHour());
      let hour = Math.max(this.#done, windowOf('24h', now).since, last === null ? Number.NEGATIVE_INFINITY : last + HOUR_MS);
      for (; hour < settled; hour += HOUR_MS) {
        const since = hour;
        await transient(this.#isTransient, () => store.packHours({ since, until: since + HOUR_MS }));
        this.#done = since + HOUR_MS;
      }
      this.#done = settled;
    } catch (error) {
      this.#notBefore = now + PACK_PAUSE_MS;
      throw error;
    }
    return false;
  }
}
