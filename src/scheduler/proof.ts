/**
 * What a claim that came back short proves, so that the next claims may skip the store.
 *
 * - A **proof**: a claim at `now` that left out some webhooks (at their bound, or with parked
 *   deliveries) and some environments (at their fair share), and came back short, shows that
 *   nothing else was due, and that nothing will be before `until` (the earliest pending delivery
 *   due after that claim, at most the poll interval) unless something says so: a wake-up, a
 *   delivery given back, an outcome recorded here that was not a success. Each of those voids
 *   it. A success of an ordered webhook that made the next of a subject due voids only a proof
 *   that did not leave that webhook out (`madeDue`). Until then a claim that leaves out at least as much skips the store: otherwise every
 *   refill around a busy environment reads that environment's whole due backlog in the due
 *   index to find nothing, a cost that grows with the backlog.
 * - The **next due time** a claim that took nothing (with nothing in flight) read in the same
 *   statement (`Claimed.nextDueAt`): an idle pass arms its timer from it instead of asking the
 *   store, unless a chore wrote since the claim began.
 *
 * Both are stamped with an **epoch**, bumped by whatever voids them: a claim during which it
 * moved proves nothing. Bookkeeping only: the loop reads the store and arms the timers.
 */
export class Proofs {
  #proof: Proof | null = null;
  #epoch = 0;
  #nextDue: { at: number | null; choreWrites: number } | null = null;
  /** Webhooks that `madeDue` named since the last claim began: its proof must leave them out. */
  #madeDue: Array<readonly [string, string]> = [];

  /** The current epoch: take it before a claim, hand it back with what the claim found. */
  get epoch(): number {
    return this.#epoch;
  }

  /** Something may have become due that nothing proven saw. */
  void(): void {
    this.#epoch++;
    this.#nextDue = null;
    this.#proof = null;
  }

  /**
   * Whether the proof still holds at `now` for a claim leaving out these webhooks and
   * environments: it must leave out no less than the claim that made the proof.
   */
  proven(webhookIds: readonly string[], environments: readonly string[], now: number): boolean {
    const proof = this.#proof;
    if (!proof || now >= proof.until) return false;
    const envs = new Set(environments);
    for (const environment of proof.environments) if (!envs.has(environment)) return false;
    const webhooks = new Set(webhookIds);
    for (const [id, environment] of proof.webhooks)
      if (!webhooks.has(id) && !(environment !== undefined && envs.has(environment))) return false;
    return true;
  }

  /**
   * A claim made in `epoch` at `now`, leaving out these webhooks (each with its environment) and
   * environments, came back short, and the next pending delivery is due at `next` (null: none).
   * Returns the proof's end, or null when the epoch moved meanwhile (no proof).
   */
  prove(
    webhooks: ReadonlyMap<string, string | undefined>,
    environments: readonly string[],
    now: number,
    next: number | null,
    pollIntervalMs: number,
    epoch: number,
  ): number | null {
    if (epoch !== this.#epoch) return null;
    for (const [id, environment] of this.#madeDue) if (!webhooks.has(id) && !environments.includes(environment)) return null;
    const until = Math.min(now + pollIntervalMs, next ?? Number.POSITIVE_INFINITY);
    this.#proof = { until, environments: new Set(environments), webhooks: new Map(webhooks) };
    return until;
  }

  /** When the proof in force ends (null: none). */
  get until(): number | null {
    return this.#proof?.until ?? null;
  }

  /** A claim began: what an earlier one said of the next due time is stale. */
  claimBegins(): void {
    this.#nextDue = null;
    this.#madeDue = [];
  }

  /**
   * Something became due for this webhook only (a record made the next delivery of one of its
   * subjects due). A proof that left the webhook out, or its environment, still holds: what it
   * says of everything else is still true. Any other proof is void, and so is the proof of a
   * claim under way now unless that claim too leaves the webhook out. Around one busy ordered
   * webhook, every record releases something: voiding every proof would send each refill to
   * the store for a claim that leaves that webhook out and finds nothing. True when it voided.
   */
  madeDue(webhookId: string, environment: string): boolean {
    this.#nextDue = null;
    const proof = this.#proof;
    if (proof && !proof.webhooks.has(webhookId) && !proof.environments.has(environment)) {
      this.void();
      return true;
    }
    this.#madeDue.push([webhookId, environment]);
    return false;
  }

  /** A claim made in `epoch` took nothing with nothing in flight and said when the next delivery is due. */
  nextDueSaid(at: number | null, epoch: number, choreWrites: number): void {
    if (epoch === this.#epoch) this.#nextDue = { at, choreWrites };
  }

  /**
   * The next due time as the last claim said it, if no chore wrote since that claim began
   * (`choreWrites` is the count now); undefined when the store must be asked. Consumed.
   */
  takeNextDue(choreWrites: number): { at: number | null } | undefined {
    const known = this.#nextDue?.choreWrites === choreWrites ? this.#nextDue : undefined;
    this.#nextDue = null;
    return known;
  }
}

interface Proof {
  until: number;
  environments: Set<string>;
  /** Each webhook left out, with its environment: a later claim leaving the environment out covers it. */
  webhooks: Map<string, string | undefined>;
}
