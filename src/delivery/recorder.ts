import type { DeliveryStore, RecordAttemptArgs, RecordResult } from '../store.js';
import { transient } from '../transient.js';

interface Pending {
  args: RecordAttemptArgs;
  /** Until when (`performance.now()`) this outcome's transient retry may wait out a lost database. */
  deadline: number;
  resolve(result: RecordResult): void;
  reject(error: unknown): void;
}

/** Largest group written in one transaction. */
const MAX_GROUP = 128;
/** A group this large is written at once; a smaller one may gather for {@link GATHER_MS}. */
const GATHER_TARGET = 64;
/** Longest a group waits for more outcomes, in steps of one millisecond (real time, not the engine's clock). */
const GATHER_MS = 2;

/**
 * Group commit for attempt outcomes. Outcomes that land while a write is under way, or in the
 * same turn of the event loop, are recorded together by one `recordAttempts` call: one
 * transaction and one commit (a WAL flush on PostgreSQL) per group instead of per delivery.
 * At most one write is in flight, so under load groups grow by themselves.
 *
 * A group smaller than {@link GATHER_TARGET} also waits, a millisecond at a time and at most
 * {@link GATHER_MS}, for as long as outcomes keep arriving: a millisecond that brings none ends
 * the wait, so a lone outcome waits one millisecond and a busy engine writes fewer, larger
 * groups. A write's cost is mostly the pages it dirties (every index region its rows touch, per
 * webhook), nearly the same for 36 rows as for 64, so larger groups cost less per delivery. A
 * slot covers the HTTP exchange only, so the wait holds no slot.
 */
export class OutcomeRecorder {
  #queue: Pending[] = [];
  #writing: Promise<void> | null = null;

  readonly #isTransient: (error: unknown) => boolean;

  constructor(private readonly store: DeliveryStore) {
    this.#isTransient = (error) => store.isTransient(error);
  }

  /** Records one outcome with a group; a lost database is waited out for `budgetMs` from now, once in all (the group's write and the one-by-one fallback share it). */
  record(args: RecordAttemptArgs, budgetMs: number): Promise<RecordResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ args, deadline: performance.now() + budgetMs, resolve, reject });
      this.#writing ??= this.#drain().finally(() => (this.#writing = null));
    });
  }

  /** Waits while the group is small and each millisecond brings more outcomes ({@link GATHER_MS} at most). */
  async #gather(): Promise<void> {
    for (let waited = 0; waited < GATHER_MS && this.#queue.length < GATHER_TARGET; waited++) {
      const before = this.#queue.length;
      await new Promise<void>((r) => setTimeout(r, 1));
      if (this.#queue.length === before) return;
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      await new Promise<void>((r) => setImmediate(r)); // let outcomes of this turn join
      await this.#gather();
      const group = this.#queue.splice(0, MAX_GROUP);
      const budget = Math.min(...group.map((p) => p.deadline)) - performance.now();
      try {
        const results = await transient(this.#isTransient, () => this.store.recordAttempts(group.map((p) => p.args)), budget);
        group.forEach((p, i) => {
          p.resolve(results[i]!);
        });
      } catch {
        // One bad item must not sink the others: record them one by one, each failing alone.
        for (const p of group) {
          try {
            const [result] = await transient(this.#isTransient, () => this.store.recordAttempts([p.args]), p.deadline - performance.now());
            p.resolve(result!);
          } catch (error) {
            p.reject(error);
          }
        }
      }
    }
  }
}
