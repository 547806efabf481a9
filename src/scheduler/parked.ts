import type { Dispatch } from '../delivery/dispatch.js';
import type { Slots } from './slots.js';

export interface ParkedOptions {
  /** Most deliveries claimed by one statement: also the most parked here in all. */
  batchSize: number;
  perWebhookConcurrency: number;
  leaseMs: number;
  /** The per-attempt deadline; without it nothing is parked (a parked delivery's lease must outlast its attempt). */
  timeoutMs?: number | undefined;
}

/** Room left in a parked delivery's lease, past its attempt's deadline, for recording the outcome. */
export const PARK_MARGIN_MS = 5_000;

/** What {@link Parked.unpark} decided: start these (their slots are taken), give those back. */
export interface Unparked {
  start: Dispatch[];
  giveBack: Dispatch[];
  /** A delivery could not start for its environment's fair share alone: a claim would tell whether nobody else has due work. */
  shareBlocked: boolean;
}

/**
 * Parked deliveries: claimed, but waiting in this process for a slot of their webhook or of
 * their environment, instead of being given back (a give-back is a write, and the claim after it
 * would read the same rows again). Not to be confused with the stored status `held` (a disabled
 * webhook's deliveries). Decisions only: the loop starts and gives back what they name.
 *
 * A healthy webhook keeps what one claim brought; a failing one (a one-at-a-time probe) at most
 * its bound; nothing is parked unless its lease covers an attempt and its record.
 */
export class Parked {
  readonly #queues = new Map<string, Dispatch[]>();
  /** Per environment, its webhooks with parked deliveries. */
  readonly #byEnvironment = new Map<string, Set<string>>();

  constructor(private readonly options: ParkedOptions) {}

  /** Whether anything may be parked: the lease covers an attempt and the margin, and there is room beyond the reserve. */
  canPark(slots: Slots): boolean {
    const { timeoutMs, leaseMs } = this.options;
    if (timeoutMs === undefined || leaseMs < timeoutMs + PARK_MARGIN_MS) return false;
    return slots.hardBound() > 0;
  }

  /** Parks `d` if its webhook's queue has room; false when it must be given back instead. */
  park(d: Dispatch, slots: Slots): boolean {
    if (!this.canPark(slots)) return false;
    const { id, environment } = d.claimed.webhook;
    const queue = this.#queues.get(id) ?? [];
    if (queue.length >= (slots.failing(id) ? slots.boundOf(id) : this.options.batchSize)) return false;
    queue.push(d);
    if (!this.#queues.has(id)) {
      this.#queues.set(id, queue);
      const ids = this.#byEnvironment.get(environment) ?? new Set<string>();
      this.#byEnvironment.set(environment, ids.add(id));
    }
    return true;
  }

  /** How many more deliveries may be parked (`batchSize` in all; none where nothing may be parked). */
  room(slots: Slots): number {
    if (!this.canPark(slots)) return 0;
    let parked = 0;
    for (const queue of this.#queues.values()) parked += queue.length;
    return Math.max(0, this.options.batchSize - parked);
  }

  has(webhookId: string): boolean {
    return this.#queues.has(webhookId);
  }

  /** The environment of a webhook with parked deliveries. */
  environmentOf(webhookId: string): string | undefined {
    return this.#queues.get(webhookId)?.[0]?.claimed.webhook.environment;
  }

  hasEnvironment(environment: string): boolean {
    return this.#byEnvironment.has(environment);
  }

  environments(): string[] {
    return [...this.#byEnvironment.keys()];
  }

  /** Takes every parked delivery of `webhookId` (its endpoint asked to wait: they go back). */
  take(webhookId: string): Dispatch[] {
    const queue = this.#queues.get(webhookId);
    if (!queue) return [];
    this.#queues.delete(webhookId);
    const environment = queue[0]!.claimed.webhook.environment;
    const ids = this.#byEnvironment.get(environment);
    ids?.delete(webhookId);
    if (ids?.size === 0) this.#byEnvironment.delete(environment);
    return queue;
  }

  /** Empties every queue (closing): what was parked goes back. */
  takeAll(): Dispatch[] {
    const all = [...this.#queues.values()].flat();
    this.#queues.clear();
    this.#byEnvironment.clear();
    return all;
  }

  /**
   * A slot of `webhookId` (or of its environment) freed: its parked deliveries start as far as
   * the bounds allow (their slots are taken here), the rest keep waiting. Given back: those
   * whose lease no longer covers an attempt and its record, and what a webhook that became a
   * one-at-a-time probe cannot use.
   */
  unpark(webhookId: string, slots: Slots, now: number): Unparked {
    const out: Unparked = { start: [], giveBack: [], shareBlocked: false };
    const queue = this.#queues.get(webhookId);
    if (!queue) return out;
    const environment = queue[0]!.claimed.webhook.environment; // a queue here is never empty
    const hard = slots.hardBound();
    const bound = slots.parkedBound();
    let stranded = false;
    const webhook = { id: webhookId, environment };
    while (queue.length > 0 && slots.inFlight(webhookId) < slots.boundOf(webhookId)) {
      // Its environment at its bound: it waits for the environment's next slot, or for a claim
      // that finds nobody else's work due (asked for at once through shareBlocked).
      if (!slots.canStartIn(environment, bound)) {
        if (bound < hard && slots.canStartIn(environment, hard)) out.shareBlocked = true;
        // Nothing of its environment in flight here, and still no room: no freed slot would start it.
        else if (slots.inEnvironment(environment) === 0) stranded = true;
        break;
      }
      // A failing webhook past its environment's probe budget: it waits for a probe to end.
      if (!slots.webhookMayStart(webhook, bound)) break;
      const next = queue.shift()!;
      if (next.claimed.lease.until - now < (this.options.timeoutMs ?? 0) + PARK_MARGIN_MS) out.giveBack.push(next);
      else {
        slots.take(webhookId, environment);
        out.start.push(next);
      }
    }
    // A webhook that became a one-at-a-time probe keeps no more claims than it can use.
    const keep = stranded ? 0 : slots.failing(webhookId) ? slots.boundOf(webhookId) : queue.length;
    out.giveBack.push(...queue.splice(keep));
    if (queue.length === 0) {
      this.#queues.delete(webhookId);
      const ids = this.#byEnvironment.get(environment);
      ids?.delete(webhookId);
      if (ids?.size === 0) this.#byEnvironment.delete(environment);
    }
    return out;
  }

  /** A slot of `environment` freed: its webhooks' parked deliveries start as far as its hard bound allows. */
  unparkIn(environment: string, slots: Slots, now: number): Unparked {
    const out: Unparked = { start: [], giveBack: [], shareBlocked: false };
    for (const webhookId of [...(this.#byEnvironment.get(environment) ?? [])]) {
      if (!slots.canStartIn(environment, slots.hardBound())) break;
      const one = this.unpark(webhookId, slots, now);
      out.start.push(...one.start);
      out.giveBack.push(...one.giveBack);
      out.shareBlocked ||= one.shareBlocked;
    }
    return out;
  }
}
