/** Background work the scheduler runs on its passes (the notice outbox, retention): it decides itself whether it is due. */
export interface Chore {
  /** Does its work if it is time; true when it wrote something (which may move a due time). */
  runIfDue(): Promise<boolean>;
}

/**
 * The chores' runs: each chore runs at most once at a time, beside deliveries, never blocking
 * them; a run that wrote (or failed: it may have written before it did) voids what a claim said
 * of the next due time, so the runs that wrote are counted.
 */
export class Chores {
  readonly #running = new Set<Chore>();
  readonly #runs = new Set<Promise<void>>();
  #writes = 0;

  constructor(
    private readonly all: readonly Chore[],
    private readonly onError: (message: string, error: unknown) => void,
  ) {}

  /** Chore runs that wrote something (or failed) so far. */
  get writes(): number {
    return this.#writes;
  }

  /** Runs under way (each settles, never rejects). */
  get runs(): ReadonlySet<Promise<void>> {
    return this.#runs;
  }

  /** Starts every chore not running yet; `ended` is told as each run ends. */
  start(ended: () => void): void {
    for (const chore of this.all) {
      if (this.#running.has(chore)) continue;
      this.#running.add(chore);
      const run = chore
        .runIfDue()
        .then(
          (wrote) => {
            if (wrote) this.#writes++;
          },
          (error: unknown) => {
            this.#writes++;
            this.onError('a background task of the scheduler failed', error);
          },
        )
        .finally(() => {
          this.#running.delete(chore);
          this.#runs.delete(run);
          ended();
        });
      this.#runs.add(run);
    }
  }
}
