import type { WebhookRecord } from '../model.js';
import type { RecordAttemptArgs, Store } from '../store.js';
import { transient } from '../transient.js';

interface Pending {
  args: RecordAttemptArgs;
  /** How long this outcome may keep retrying a lost database (the rest of its lease). */
  budgetMs: number;
  resolve(result: { disabled: WebhookRecord | null }): void;
  reject(error: unknown): void;
}

/** Largest group written in one transaction. */
const MAX_GROUP = 128;

/**
 * Group commit for attempt outcomes. Outcomes that land while a write is under way, or in the
 * same turn of the event loop, are recorded together by one `recordAttempts` call: one
 * transaction and one commit (a WAL flush on PostgreSQL) per group instead of per delivery.
 * At most one write is in flight, so under load groups grow by themselves; alone, an outcome
 * waits only for the next turn of the event loop (no timer, so fake clocks are unaffected).
 */
export class OutcomeRecorder {
  #queue: Pending[] = [];
  #writing: Promise<void> | null = null;

  readonly #isTransient: (error: unknown) => boolean;

  constructor(private readonly store: Store) {
    this.#isTransient = (error) => store.isTransient(error);
  }

  record(args: RecordAttemptArgs, budgetMs: number): Promise<{ disabled: WebhookRecord | null }> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ args, budgetMs, resolve, reject });
      this.#writing ??= this.#drain().finally(() => (this.#writing = null));
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      await new Promise<void>((r) => setImmediate(r)); // let outcomes of this turn join
      const group = this.#queue.splice(0, MAX_GROUP);
      const budget = Math.min(...group.map((p) => p.budgetMs));
      try {
        const results = await transient(this.#isTransient, () => this.store.recordAttempts(group.map((p) => p.args)), budget);
        group.forEach((p, i) => {
          p.resolve(results[i]!);
        });
      } catch {
        // One bad item must not sink the others: record them one by one, each failing alone.
        for (const p of group) {
          try {
            const [result] = await transient(this.#isTransient, () => this.store.recordAttempts([p.args]), p.budgetMs);
            p.resolve(result!);
          } catch (error) {
            p.reject(error);
          }
        }
      }
    }
  }
}
