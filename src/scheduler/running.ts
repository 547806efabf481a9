/** An attempt whose HTTP exchange is under way. */
export interface Running {
  webhookId: string;
  environment: string;
  /** When it started, on the clock. */
  at: number;
  /** When it becomes overdue (`Slots.overdueAfter`); infinite once looked at. */
  overdueAt: number;
  /** Moved out of the slots as overdue. */
  overdue: boolean;
}

/**
 * The attempts whose HTTP exchange is under way, and when the next of them becomes overdue
 * (`Slots.overdue`). Decisions only: the loop arms one timer for {@link armAt} and asks
 * {@link overdueNow} when it fires.
 */
export class RunningAttempts {
  readonly #all = new Set<Running>();
  /** What the loop's overdue timer is armed for (infinite: disarmed). */
  armedAt = Number.POSITIVE_INFINITY;

  /** An attempt started at `at`: true when the timer must be armed earlier, for its `overdueAt`. */
  add(running: Running): boolean {
    this.#all.add(running);
    return running.overdueAt < this.armedAt;
  }

  /** Its exchange ended: true when none is left (the timer can be disarmed). */
  end(running: Running): boolean {
    this.#all.delete(running);
    return this.#all.size === 0;
  }

  /**
   * Each attempt past its time at `now` is looked at once: `moveOut` says whether it moved out of
   * its environment's slots (and acts on it). Answers when the next becomes overdue.
   */
  overdueNow(now: number, moveOut: (running: Running) => boolean): number {
    let next = Number.POSITIVE_INFINITY;
    for (const running of this.#all) {
      if (running.overdue || running.overdueAt === Number.POSITIVE_INFINITY) continue;
      if (running.overdueAt > now) {
        next = Math.min(next, running.overdueAt);
        continue;
      }
      running.overdue = moveOut(running);
      running.overdueAt = Number.POSITIVE_INFINITY; // looked at once: the pool was full, or it moved
    }
    return next;
  }
}
