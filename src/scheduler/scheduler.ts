import pRetry from 'p-retry';
import type { Clock, TimerHandle } from '../clock.js';
import type { AttemptRecord, ClaimedDelivery, WebhookRecord } from '../model.js';
import type { Store } from '../store.js';
import type { RetryPolicy } from './retry.js';

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
  #unsubscribe: Promise<(() => Promise<void>) | null> | null = null;

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    if (this.#closed || this.#started) return;
    this.#started = true;
    // Work emitted by other processes wakes us within milliseconds where the store can hear it;
    // the poll interval stays the safety net.
    const { store, onError } = this.deps;
    this.#unsubscribe =
      store.subscribe?.(() => this.wake()).catch((error: unknown) => {
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
    try {
      while (!this.#closed) {
        this.#dirty = false;
        const free = options.concurrency - this.#inflight.size;
        if (free > 0) {
          const limit = Math.min(free, options.batchSize);
          const got = await this.#claim(limit);
          if (got === limit) continue; // maybe more is due
        }
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
    const saturated = [...this.#perWebhook].filter(([, n]) => n >= options.perEndpointConcurrency).map(([id]) => id);
    const now = clock.now();
    const claimed = await transient(() =>
      store.claimDue({ now, limit, workerId: options.workerId, leaseMs: options.leaseMs, excludeWebhookIds: saturated }),
    );
    const surplus: string[] = [];
    const tokens = new Map<string, Promise<string>>();
    for (const c of claimed) {
      const running = this.#perWebhook.get(c.webhook.id) ?? 0;
      if (running >= options.perEndpointConcurrency) {
        surplus.push(c.delivery.id);
        continue;
      }
      this.#perWebhook.set(c.webhook.id, running + 1);
      // Every delivery of one event dispatched together carries the same claims: sign once.
      let token = tokens.get(c.event.id);
      if (!token) {
        token = this.deps.sign(c, now);
        token.catch(() => {}); // each attempt observes it
        tokens.set(c.event.id, token);
      }
      this.#track(c, token);
    }
    if (surplus.length > 0) await transient(() => store.release(surplus, options.workerId, clock.now()));
    return claimed.length;
  }

  #track(c: ClaimedDelivery, token: Promise<string>): void {
    const task = this.#attempt(c, token).finally(() => {
      this.#inflight.delete(task);
      const n = (this.#perWebhook.get(c.webhook.id) ?? 1) - 1;
      if (n <= 0) this.#perWebhook.delete(c.webhook.id);
      else this.#perWebhook.set(c.webhook.id, n);
      this.#notify?.();
    });
    this.#inflight.add(task);
  }

  async #attempt(c: ClaimedDelivery, token: Promise<string>): Promise<void> {
    const { store, clock, retry, options } = this.deps;
    const attempt = await this.deps.attempt(c, token);
    const now = clock.now();
    const retryAt = attempt.success ? null : retry.nextAttemptAt(c.delivery.attemptCount + 1, now);
    try {
      const { disabled } = await transient(() =>
        store.recordAttempt({ attempt, workerId: options.workerId, now, retryAt, disableAfterMs: options.disableAfterMs }),
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

/** In-process retries for a busy or briefly unreachable database (never for the HTTP schedule). */
function transient<T>(fn: () => Promise<T>): Promise<T> {
  return pRetry(fn, { retries: 5, minTimeout: 20, maxTimeout: 1000, factor: 3 });
}
