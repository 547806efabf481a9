/**
 * How long, once the store answers again after a claim could not reach it, this process's claims
 * leave alone the leases that ran out since it last reached it. Their owners kept the outcomes of
 * those attempts through the outage (`OUTCOME_PATIENCE_MS`) and record them within a second or
 * two of the database's return; a claim that took such a delivery first would fence that record
 * out and send again what was delivered. A process that died during the outage has its
 * deliveries taken this much later.
 */
export const RECLAIM_GRACE_MS = 10_000;

/**
 * The hold after an outage (see {@link RECLAIM_GRACE_MS}). Decisions only: the loop asks it for
 * each claim's `reclaimBefore` and tells it whether the claim reached the store.
 */
export class ReclaimHold {
  /** When a claim last reached the store (its `now`). */
  #reached: number | null = null;
  /**
   * Since a claim could not reach the store: leases that ran out after `before` stay with their
   * owners until `until` (infinite until a claim reaches the store again).
   */
  #hold: { before: number; until: number } | null = null;

  /** The `reclaimBefore` of a claim at `now` (`clockNow`: the clock as it is tried), if any. */
  reclaimBefore(now: number, clockNow: number): number | undefined {
    if (this.#hold && clockNow >= this.#hold.until) this.#hold = null;
    return this.#hold ? Math.min(this.#hold.before, now) : undefined;
  }

  /** A claim at `now` reached the store: an outage's hold now ends a grace after `clockNow`. */
  reached(now: number, clockNow: number): void {
    this.#reached = now;
    if (this.#hold?.until === Number.POSITIVE_INFINITY) this.#hold.until = clockNow + RECLAIM_GRACE_MS;
  }

  /** A claim at `now` could not reach the store. */
  missed(now: number): void {
    this.#hold = { before: this.#hold?.before ?? this.#reached ?? now, until: Number.POSITIVE_INFINITY };
  }
}
