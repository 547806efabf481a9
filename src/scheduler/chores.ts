/** Background work the scheduler runs on its passes (the notice outbox, retention): it decides itself whether it is due. */
export interface Chore {
  /** Does its work if it is time; true when it wrote something (which may move a due time). */
  runIfDue(): Promise<boolean>;
}

/**
 * Which chores run, and whether any wrote. Each chore runs at most once at a time, beside
 * deliveries, never blocking them; a run that wrote (or failed: it may have written before it
 * did) voids what a claim said of the next due time. Bookkeeping only: the loop runs them.
 */
export class Chores {
  readonly #running = new Set<Chore>();
  #writes = 0;

  constructor(private readonly all: readonly Chore[]) {}

  /** Chore runs that wrote something (or failed) so far. */
  get writes(): number {
    return this.#writes;
  }

  /** The chores to start now (those not running), marked running. */
  toStart(): Chore[] {
    const start = this.all.filter((chore) => !this.#running.has(chore));
    for (const chore of start) this.#running.add(chore);
    return start;
  }

  /** A run ended: `wrote` true if it wrote something or failed. */
  ended(chore: Chore, wrote: boolean): void {
    this.#running.delete(chore);
    if (wrote) this.#writes++;
  }
}
