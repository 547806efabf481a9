import type { AttemptResult } from '../delivery/dispatch.js';

export interface SlotOptions {
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** Attempts in flight at once per webhook in this process (one while the webhook is failing). */
  perWebhookConcurrency: number;
  /** Attempts in flight at once per environment in this process: its fair share. */
  perEnvironmentConcurrency: number;
}

/** What to do with a claimed delivery (see {@link Slots.admit}). */
export type Admission = 'start' | 'park' | 'give-back';

/**
 * Slots and fair share: how many attempts run in this process, per webhook and per environment,
 * and who may take the next slot. Bookkeeping only (no I/O, no time): the scheduler's loop asks
 * and tells.
 *
 * - A **slot** covers one HTTP exchange: taken when an attempt starts, given back when the
 *   exchange ends (before its outcome is recorded).
 * - A webhook's **bound** is earned (slow start, decision 026): one attempt at a time until an
 *   answer here proves the endpoint, then one more per success, up to `perWebhookConcurrency`.
 *   A charged failure (a timeout, a refusal, a status other than 200) drops it to one at once:
 *   the webhook is then **failing** (its circuit is half open: one probe at a time), as it is
 *   when a claim's record says so. So an endpoint that hangs from its first delivery holds one
 *   slot, never `perWebhookConcurrency`, while its first attempt waits for its timeout.
 * - **Failing** webhooks (seen failing and not proven since) share a **probe budget** within
 *   their environment: half of the environment's bound. However many of an environment's
 *   webhooks time out, its other webhooks keep the other half. A webhook new here is not held by
 *   the budget (it may be the one that answers): it starts at one slot, so until their first
 *   timeouts N hanging webhooks hold N slots, not N × `perWebhookConcurrency`.
 * - An environment's **fair share** is `perEnvironmentConcurrency`. Beyond it an environment may
 *   borrow idle slots up to its **hard bound** (every slot but the reserve) only while nobody
 *   else has due work (`othersDrained`).
 * - The **reserve** is the last `perWebhookConcurrency` slots: while some environment is over its
 *   share they go only to environments with nothing in flight here, so however many of an
 *   environment's endpoints hang, the next environment's delivery still starts at once.
 * - An attempt in flight far longer than its webhook's answers here took is **overdue**
 *   ({@link overdueAfter}): its webhook is failing from then on (no new attempt of it while that
 *   one hangs), and the attempt leaves its slot and its environment's count for the **overdue
 *   pool** (at most 4 × `concurrency` attempts), so endpoints that answered and then began to hang
 *   hold their environment's slots for a moment, not until their timeouts. It still counts
 *   against its webhook's bound until it ends.
 */
export class Slots {
  #attempting = 0;
  /** Overdue attempts moved out of the slots (see the class comment). */
  #overdue = 0;
  /** Per webhook proven here: how long its successful attempts take (a moving average, ms). */
  readonly #latency = new Map<string, number>();
  readonly #perWebhook = new Map<string, number>();
  readonly #perEnvironment = new Map<string, number>();
  /**
   * Per proven webhook: its successes here since it was last failing, at most
   * `perWebhookConcurrency - 1` (its bound is one more). Absent: unproven (bound one). In the
   * order last proven, so the oldest go first past {@link KNOWN_MAX}.
   */
  readonly #proven = new Map<string, number>();
  /** Webhooks seen failing (by a claim's record or an outcome here) and not proven since: they park only their bound. */
  readonly #failing = new Set<string>();
  /** Per webhook, its attempts in flight that started while it was failing (they count against the probe budget). */
  readonly #probes = new Map<string, number>();
  /** Per environment, its attempts in flight that started while their webhook was failing. */
  readonly #probesIn = new Map<string, number>();
  /** Per webhook with attempts in flight: its environment. */
  readonly #environmentOf = new Map<string, string>();
  /**
   * Set when the last fair claim (environments at their share left out) came back short: every
   * other environment's due work is claimed, so environments over their share may use idle
   * slots. Cleared by a wake-up (new work, perhaps someone else's).
   */
  othersDrained = false;

  constructor(private readonly options: SlotOptions) {}

  /** Slots taken: attempts whose HTTP exchange has not ended. */
  get attempting(): number {
    return this.#attempting;
  }

  /**
   * Slots free for new attempts, given how many started attempts have not had their outcome
   * recorded yet: at most `concurrency` such outcomes may be pending, so a slow database slows
   * the attempts down instead of piling outcomes up in memory.
   */
  free(unrecorded: number): number {
    const { concurrency } = this.options;
    // (Overdue attempts are outside both: the overdue pool has its own bound.)
    return Math.min(concurrency - this.#attempting, 2 * concurrency - (unrecorded - this.#overdue));
  }

  /** How many attempts `webhookId` may have in flight here (see the class comment). */
  boundOf(webhookId: string): number {
    return Math.min(this.options.perWebhookConcurrency, 1 + (this.#proven.get(webhookId) ?? 0));
  }

  /** No success seen here since it was last failing, or ever: one slot at a time. */
  unproven(webhookId: string): boolean {
    return !this.#proven.has(webhookId);
  }

  /** Seen failing and not proven since: a one-at-a-time probe within its environment's probe budget, which parks no more than its bound. */
  failing(webhookId: string): boolean {
    return this.#failing.has(webhookId);
  }

  /** Attempts of failing webhooks of `environment` in flight here. */
  probesIn(environment: string): number {
    return this.#probesIn.get(environment) ?? 0;
  }

  /** Most attempts of an environment's failing webhooks at once, given its bound: half of it (at least one). */
  static probeBudget(environmentBound: number): number {
    return Math.max(1, Math.floor(environmentBound / 2));
  }

  /**
   * Whether `webhook` itself may start one more attempt, its environment having room under
   * `environmentBound`: below its bound and, while failing, within its environment's probe budget.
   */
  webhookMayStart(webhook: { id: string; environment: string }, environmentBound: number): boolean {
    if (this.inFlight(webhook.id) >= this.boundOf(webhook.id)) return false;
    return !this.failing(webhook.id) || this.probesIn(webhook.environment) < Slots.probeBudget(environmentBound);
  }

  /** Attempts of `webhookId` in flight here. */
  inFlight(webhookId: string): number {
    return this.#perWebhook.get(webhookId) ?? 0;
  }

  /** Attempts of `environment` in flight here. */
  inEnvironment(environment: string): number {
    return this.#perEnvironment.get(environment) ?? 0;
  }

  /** The environment of a webhook with attempts in flight here. */
  environmentOf(webhookId: string): string | undefined {
    return this.#environmentOf.get(webhookId);
  }

  /** Most slots one environment may hold here: all but the reserve. */
  hardBound(): number {
    return this.options.concurrency - this.options.perWebhookConcurrency;
  }

  /** The bound for starting parked deliveries: the hard bound while nobody else has due work, else the fair share. */
  parkedBound(): number {
    const hard = this.hardBound();
    return this.othersDrained ? hard : Math.min(hard, this.options.perEnvironmentConcurrency);
  }

  /**
   * Whether a delivery of `environment` may take a slot now: below `bound` (its fair share in a
   * fair claim, the hard bound otherwise), and, while the reserve is guarded, only if nothing of
   * its environment is in flight here.
   */
  canStartIn(environment: string, bound: number): boolean {
    const n = this.inEnvironment(environment);
    if (n >= bound) return false;
    return n === 0 || !this.reserveGuarded();
  }

  /** Only the reserve is left and some environment is over its share: environments new here only. */
  reserveGuarded(): boolean {
    const { concurrency, perWebhookConcurrency, perEnvironmentConcurrency } = this.options;
    if (concurrency - this.#attempting > perWebhookConcurrency) return false;
    for (const n of this.#perEnvironment.values()) if (n > perEnvironmentConcurrency) return true;
    return false;
  }

  /** The environments a fair claim leaves out: those at their share (every one with work here while the reserve is guarded). */
  busyEnvironments(guarded: boolean): string[] {
    const share = this.options.perEnvironmentConcurrency;
    return [...this.#perEnvironment].filter(([, n]) => n >= share || guarded).map(([environment]) => environment);
  }

  /** The webhooks a claim leaves out: at their bound, or with deliveries parked here already. */
  saturatedWebhooks(isParked: (webhookId: string) => boolean): string[] {
    return [...this.#perWebhook].filter(([id, n]) => n >= this.boundOf(id) || isParked(id)).map(([id]) => id);
  }

  /**
   * A claim brought a delivery of this webhook: its record says whether it is failing (a probe,
   * bound one). A record that says healthy proves nothing here (an endpoint never tried is
   * healthy on record): it only ends the probe state another process has cleared, unless an
   * attempt in flight here will tell.
   */
  observe(webhook: { id: string; failingSince: number | null }): void {
    if (webhook.failingSince !== null) {
      this.#proven.delete(webhook.id);
      this.#failing.add(webhook.id);
    } else if (!this.#perWebhook.has(webhook.id)) this.#failing.delete(webhook.id);
  }

  /**
   * A claimed delivery of `webhook`: start it now, park it (wait here for a slot of its webhook
   * or environment; if parking is refused, give it back), or give it back at once.
   * `environmentBound`: the fair share in a fair claim, the hard bound otherwise. `ahead`: the
   * claim asked for more than could start (claiming ahead), so what its environment's bound
   * stops is parked even at the hard bound.
   */
  admit(webhook: { id: string; environment: string }, environmentBound: number, ahead: boolean): Admission {
    if (!this.canStartIn(webhook.environment, environmentBound)) {
      // Below the hard bound it waits here for a slot (a release is a write, and the claim after
      // it would read the same rows again).
      return ahead || this.canStartIn(webhook.environment, this.hardBound()) ? 'park' : 'give-back';
    }
    return this.webhookMayStart(webhook, environmentBound) ? 'start' : 'park';
  }

  /**
   * After an attempt ended: whether a claim could now find something it could not before, i.e.
   * the webhook opened (nothing of it parked, below its bound) or its environment just came back
   * under its share. Otherwise the freed slot went to the webhook's own parked delivery.
   */
  reopened(webhookId: string, environment: string, parked: boolean): boolean {
    const webhookOpen = !parked && this.inFlight(webhookId) < this.boundOf(webhookId);
    return webhookOpen || this.inEnvironment(environment) === this.options.perEnvironmentConcurrency - 1;
  }

  /**
   * How long after its start an attempt of this webhook is overdue: {@link OVERDUE_FACTOR} times
   * its usual answer time, at least {@link OVERDUE_MIN_MS}. Never, for a webhook that has not
   * answered here yet (nothing is usual for it: it holds one slot until it answers anyway).
   */
  overdueAfter(webhookId: string): number {
    const usual = this.#latency.get(webhookId);
    return usual === undefined ? Number.POSITIVE_INFINITY : Math.max(OVERDUE_MIN_MS, OVERDUE_FACTOR * usual);
  }

  /**
   * An attempt in flight is overdue: its webhook is failing from now on, and the attempt leaves
   * its slot and its environment's count for the overdue pool while that has room. True when it
   * moved (then {@link end} must be told so).
   */
  overdue(webhookId: string, environment: string): boolean {
    this.#proven.delete(webhookId);
    this.#failing.add(webhookId);
    if (this.#overdue >= OVERDUE_POOL_FACTOR * this.options.concurrency) return false;
    this.#overdue++;
    this.#attempting--;
    bump(this.#perEnvironment, environment, -1);
    return true;
  }

  /** Overdue attempts moved out of the slots, still in flight. */
  get overdueCount(): number {
    return this.#overdue;
  }

  /** An attempt starts: it holds a slot of its webhook and environment until {@link end}. */
  take(webhookId: string, environment: string): void {
    this.#environmentOf.set(webhookId, environment);
    bump(this.#perWebhook, webhookId, +1);
    bump(this.#perEnvironment, environment, +1);
    if (this.failing(webhookId)) {
      bump(this.#probes, webhookId, +1);
      bump(this.#probesIn, environment, +1);
    }
    this.#attempting++;
  }

  /**
   * An attempt's HTTP exchange ended (`result` null: it failed inside the engine before one).
   * A failure of the endpoint (a timeout included) makes the webhook a one-at-a-time probe at
   * once, before its outcome is recorded; a success earns it one more slot, up to its bound.
   * (Which of a webhook's attempts in flight counted as probes does not matter: one ending
   * gives back a probe of its webhook while it has any.)
   */
  end(webhookId: string, environment: string, result: AttemptResult | null, ended: { overdue?: boolean; ms?: number } = {}): void {
    if (ended.overdue) this.#overdue--;
    else {
      this.#attempting--;
      bump(this.#perEnvironment, environment, -1);
    }
    bump(this.#perWebhook, webhookId, -1);
    if ((this.#probes.get(webhookId) ?? 0) > 0) {
      bump(this.#probes, webhookId, -1);
      bump(this.#probesIn, environment, -1);
    }
    if (!this.#perWebhook.has(webhookId)) this.#environmentOf.delete(webhookId);
    if (!result?.charged) return;
    if (result.success) {
      const earned = Math.min(this.options.perWebhookConcurrency - 1, (this.#proven.get(webhookId) ?? 0) + 1);
      this.#proven.delete(webhookId); // to the end of the order: the most recently proven
      this.#proven.set(webhookId, earned);
      this.#failing.delete(webhookId);
      if (ended.ms !== undefined) {
        const before = this.#latency.get(webhookId);
        this.#latency.delete(webhookId);
        this.#latency.set(webhookId, before === undefined ? ended.ms : before + (ended.ms - before) / 8);
        if (this.#latency.size > KNOWN_MAX) this.#latency.delete(this.#latency.keys().next().value!);
      }
      if (this.#proven.size > KNOWN_MAX) this.#proven.delete(this.#proven.keys().next().value!);
    } else {
      this.#proven.delete(webhookId);
      this.#failing.add(webhookId);
      if (this.#failing.size > KNOWN_MAX) this.#failing.delete(this.#failing.values().next().value!);
    }
  }
}

/**
 * Most webhooks whose earned bound (or failing state) is kept: past it the one proven longest ago
 * starts again from one slot, which costs it a round trip or two of its endpoint.
 */
const KNOWN_MAX = 10_000;

/**
 * The overdue pool holds this many times `concurrency`: room for every earned slot of 20
 * webhooks of one environment at the default bounds (20 × 8 = 160 of 256), so endpoints that all
 * hang at once cannot fill it and their environment's slots again. Idle sockets cost little.
 */
const OVERDUE_POOL_FACTOR = 4;
/** The least time an attempt runs before it may be overdue. */
export const OVERDUE_MIN_MS = 400;
/** How many times its webhook's usual answer time an attempt runs before it is overdue. */
const OVERDUE_FACTOR = 8;

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}
