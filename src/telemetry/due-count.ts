/** How long a count of due deliveries serves further collections (several readers collecting at once). */
export const DUE_COUNT_MAX_AGE_MS = 1000;

/**
 * The value behind the `webhooks.deliveries.due` gauge: one count query per collection, shared by
 * collections that overlap or come within {@link DUE_COUNT_MAX_AGE_MS} of it (two readers, or a
 * pull and a push exporter, cost one query). Aged on the wall clock, not the engine's Clock: it
 * bounds load on the real database. A failed count observes nothing (the gauge has a gap rather
 * than a wrong value) and is not kept.
 */
export class DueCount {
  #value: number | null = null;
  #at = Number.NEGATIVE_INFINITY;
  #pending: Promise<number | null> | null = null;

  constructor(private readonly count: () => Promise<number>) {}

  read(): Promise<number | null> {
    if (performance.now() - this.#at < DUE_COUNT_MAX_AGE_MS) return Promise.resolve(this.#value);
    this.#pending ??= this.count()
      .then(
        (n) => {
          this.#value = n;
          this.#at = performance.now();
          return n;
        },
        () => null,
      )
      .finally(() => {
        this.#pending = null;
      });
    return this.#pending;
  }
}
