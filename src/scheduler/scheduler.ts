import type { Clock, TimerHandle } from '../clock.js';
import type { AttemptRecord, ClaimedDelivery, WebhookRecord } from '../model.js';
import type { Store } from '../store.js';
import type { RetryPolicy } from './retry.js';
import { transient } from './transient.js';
import { OutcomeRecorder } from './recorder.js';

export interface SchedulerOptions {
  workerId: string;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** Attempts in flight at once per webhook in this process. */
  perEndpointConcurrency: number;
  /** Most deliveries claimed by one statement. */
  batchSize: number;
  /** How long a claim is ours; must exceed the HTTP timeout. */
  leaseMs: number;
  /**
   * The per-attempt deadline. When the lease covers two of them (plus a margin), deliveries
   * claimed beyond their webhook's bound wait here for its next free slot instead of being given
   * back at once; without it they are always given back.
   */
  timeoutMs?: number;
  /** Longest sleep between looks at the store (the safety net behind wake-ups). */
  pollIntervalMs: number;
  disableAfterMs: number;
}

export interface SchedulerDeps {
  store: Store;
  clock: Clock;
  retry: RetryPolicy;
  options: SchedulerOptions;
  /** Signs one token for the deliveries of one event dispatched together. */
  sign(claimed: ClaimedDelivery, now: number): Promise<string>;
  attempt(claimed: ClaimedDelivery, token: Promise<string>): Promise<AttemptRecord>;
  onDisabled(webhook: WebhookRecord, attempt: AttemptRecord): void;
  onError(message: string, error: unknown): void;
}

/**
 * The delivery loop. One timer, armed for the earliest due delivery (or the poll interval, if
 * sooner); `wake()` runs the loop at once. A pass claims due work under a lease, keeps at most
 * `concurrency` attempts in flight (and `perEndpointConcurrency` per webhook), records each
 * outcome as it lands, and claims more as slots free up. When nothing is due and nothing is in
 * flight, it re-arms the timer and stops.
 *
 * The promise of a pass settles only when the pass is idle, so a `ManualClock` that awaits its
 * timers sees every attempt of a due time finish before time moves on.
 */
export class Scheduler {
  #loop: Promise<void> | null = null;
  #dirty = false;
  #closed = false;
  #started = false;
  #timer: TimerHandle | null = null;
  #inflight = new Set<Promise<void>>();
  #perWebhook = new Map<string, number>();
  #notify: (() => void) | null = null;
  /** Claimed deliveries waiting for a slot of their webhook (at most perEndpointConcurrency each). */
  #waiting = new Map<string, Array<{ claimed: ClaimedDelivery; token: Promise<string> }>>();
  /** Set when a claim came back short: nothing more is due for the webhooks we may claim for. */
  #starved = false;
  #unsubscribe: Promise<(() => Promise<void>) | null> | null = null;

  #recorder: OutcomeRecorder;

  constructor(private readonly deps: SchedulerDeps) {
    this.#recorder = new OutcomeRecorder(deps.store);
  }

  start(): void {
    if (this.#closed || this.#started) return;
    this.#started = true;
    // Work emitted by other processes wakes us within milliseconds where the store can hear it;
    // the poll interval stays the safety net.
    const { store, onError } = this.deps;
    this.#unsubscribe =
      store
        .subscribe?.(() => this.wake())
        .catch((error: unknown) => {
          onError('could not listen for wake-ups; polling only', error);
          return null;
        }) ?? null;
    void this.#kick();
  }

  /** Something may be due now (an emit, an enable): look at once. */
  wake(): void {
    if (this.#started) void this.#kick();
  }

  /** Resolves when no pass is running and no attempt is in flight. */
  async drain(): Promise<void> {
    while (this.#loop) await this.#loop;
  }

  /** Stops claiming, waits for attempts in flight to be recorded, disarms the timer. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#disarm();
    this.#notify?.();
    const unsubscribe = await this.#unsubscribe;
    this.#unsubscribe = null;
    await unsubscribe?.().catch((error: unknown) => this.deps.onError('could not stop listening for wake-ups', error));
    await this.drain();
    await Promise.allSettled([...this.#inflight]);
    // Held claims go back now rather than when their lease runs out.
    const held = [...this.#waiting.values()].flat().map((w) => w.claimed.delivery.id);
    this.#waiting.clear();
    if (held.length > 0) {
      await transient(() => this.deps.store.release(held, this.deps.options.workerId, this.deps.clock.now())).catch((error: unknown) =>
        this.deps.onError('could not give back held deliveries; their leases will expire', error),
      );
    }
  }

  get inflight(): number {
    return this.#inflight.size;
  }

  #kick(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#dirty = true;
    this.#notify?.();
    if (!this.#loop) {
      this.#loop = this.#run().finally(() => {
        this.#loop = null;
        if (this.#dirty && !this.#closed) void this.#kick();
      });
    }
    return this.#loop;
  }

  async #run(): Promise<void> {
    this.#disarm();
    const { options } = this.deps;
    // Refill in batches, not slot by slot: a claim per freed slot costs a statement (and a
    // scan) per delivery, and splits an event's fan-out over many claims, each signing its own
    // token. So top up when half the slots are free; at once after a wake (new work: latency
    // matters), after a full claim (more is due), or when nothing runs.
    const refillAt = Math.max(1, Math.min(options.batchSize, Math.ceil(options.concurrency / 2)));
    let eager = true;
    try {
      while (!this.#closed) {
        if (this.#dirty) {
          eager = true;
          this.#starved = false;
        }
        this.#dirty = false;
        const free = options.concurrency - this.#inflight.size;
        if (free > 0 && (eager || this.#inflight.size === 0 || (free >= refillAt && !this.#starved))) {
          const limit = Math.min(free, options.batchSize);
          const got = await this.#claim(limit);
          this.#starved = got < limit;
          if (got === limit) continue; // maybe more is due
        }
        eager = false;
        if (this.#inflight.size === 0) break;
        if (!this.#dirty) await new Promise<void>((resolve) => (this.#notify = resolve));
        this.#notify = null;
      }
      await Promise.allSettled([...this.#inflight]);
      await this.#arm();
    } catch (error) {
      // The store is unreachable even after in-process retries: try again after a pause.
      this.deps.onError('scheduler pass failed; retrying after the poll interval', error);
      this.#dirty = false;
      await Promise.allSettled([...this.#inflight]);
      await this.#arm(options.pollIntervalMs);
    }
  }

  /** Claims up to `limit` and starts what the per-webhook bound allows; returns how many were claimed. */
  async #claim(limit: number): Promise<number> {
    const { store, clock, options } = this.deps;
    // Webhooks at their bound, or with claimed deliveries already waiting here, get nothing more.
    const saturated = [...this.#perWebhook]
      .filter(([id, n]) => n >= options.perEndpointConcurrency || this.#waiting.has(id))
      .map(([id]) => id);
    const now = clock.now();
    const claimed = await transient(() =>
      store.claimDue({ now, limit, workerId: options.workerId, leaseMs: options.leaseMs, excludeWebhookIds: saturated }),
    );
    const surplus: string[] = [];
    const tokens = new Map<string, Promise<string>>();
    // A held delivery starts within one attempt's deadline (its webhook's running attempts all
    // end by then) and must be recorded before its lease ends: hold only when the lease allows.
    const canHold = options.timeoutMs !== undefined && options.leaseMs >= 2 * options.timeoutMs + HOLD_MARGIN_MS;
    // Every delivery of one event dispatched together carries the same claims: sign once.
    const tokenFor = (c: ClaimedDelivery) => {
      let token = tokens.get(c.event.id);
      if (!token) {
        token = this.deps.sign(c, now);
        token.catch(() => {}); // each attempt observes it
        tokens.set(c.event.id, token);
      }
      return token;
    };
    for (const c of claimed) {
      const running = this.#perWebhook.get(c.webhook.id) ?? 0;
      if (running >= options.perEndpointConcurrency) {
        const queue = this.#waiting.get(c.webhook.id) ?? [];
        if (canHold && queue.length < options.perEndpointConcurrency) {
          queue.push({ claimed: c, token: tokenFor(c) });
          this.#waiting.set(c.webhook.id, queue);
        } else surplus.push(c.delivery.id);
        continue;
      }
      this.#perWebhook.set(c.webhook.id, running + 1);
      this.#track(c, tokenFor(c));
    }
    if (surplus.length > 0) await transient(() => store.release(surplus, options.workerId, clock.now()));
    return claimed.length;
  }

  #track(c: ClaimedDelivery, token: Promise<string>): void {
    const task = this.#attempt(c, token).finally(() => {
      this.#inflight.delete(task);
      const id = c.webhook.id;
      // The freed slot goes to a delivery of the same webhook already claimed and waiting.
      const next = this.#closed ? undefined : this.#waiting.get(id)?.shift();
      if (next) {
        if (this.#waiting.get(id)!.length === 0) this.#waiting.delete(id);
        this.#track(next.claimed, next.token);
      } else {
        const n = (this.#perWebhook.get(id) ?? 1) - 1;
        if (n <= 0) this.#perWebhook.delete(id);
        else this.#perWebhook.set(id, n);
        this.#starved = false; // this webhook may be claimed for again
      }
      this.#notify?.();
    });
    this.#inflight.add(task);
  }

  async #attempt(c: ClaimedDelivery, token: Promise<string>): Promise<void> {
    const { clock, retry, options } = this.deps;
    const attempt = await this.deps.attempt(c, token);
    const now = clock.now();
    const retryAt = attempt.success ? null : retry.nextAttemptAt(c.delivery.attemptCount + 1, now);
    try {
      // Until our lease ends nobody else sends this delivery, so keep trying that long.
      const leaseLeft = (c.delivery.lockedUntil ?? now) - clock.now();
      const { disabled } = await this.#recorder.record(
        { attempt, workerId: options.workerId, now, retryAt, disableAfterMs: options.disableAfterMs },
        leaseLeft,
      );
      if (disabled) this.deps.onDisabled(disabled, attempt);
    } catch (error) {
      // Not recorded: the lease runs out and the delivery is attempted again (same webhook-id).
      this.deps.onError(`could not record attempt of delivery ${c.delivery.id}`, error);
    }
  }

  async #arm(maxDelay = this.deps.options.pollIntervalMs): Promise<void> {
    if (this.#closed) return;
    const { store, clock } = this.deps;
    let delay = maxDelay;
    try {
      const due = await transient(() => store.nextDueAt());
      if (due !== null) delay = Math.min(delay, Math.max(0, due - clock.now()));
      if (due !== null && due <= clock.now()) this.#dirty = true; // became due while we finished: go again
    } catch (error) {
      this.deps.onError('could not read the next due time', error);
    }
    if (this.#closed || this.#dirty) return;
    this.#disarm();
    this.#timer = clock.setTimer(() => this.#kick(), delay);
  }

  #disarm(): void {
    if (this.#timer) this.deps.clock.clearTimer(this.#timer);
    this.#timer = null;
  }
}

/** Room left in the lease, past two attempt deadlines, for recording the outcome. */
const HOLD_MARGIN_MS = 5_000;
