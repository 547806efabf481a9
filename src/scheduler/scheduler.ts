import type { Clock, TimerHandle } from '../clock.js';
import type { AttemptResult, Dispatch } from '../delivery/dispatch.js';
import type { ClaimedDelivery } from '../model.js';
import type { ClaimArgs, Store } from '../store.js';
import { transient } from '../transient.js';
import { ClaimForm } from './claim-form.js';

export interface SchedulerOptions {
  workerId: string;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** Attempts in flight at once per webhook in this process (one while the webhook is failing). */
  perEndpointConcurrency: number;
  /** Attempts in flight at once per environment (customer) in this process: its fair share. */
  perEnvironmentConcurrency: number;
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
}

export interface SchedulerDeps {
  store: Store;
  clock: Clock;
  options: SchedulerOptions;
  /** What running a claimed delivery means (see `delivery/dispatch.ts`). */
  dispatcher: {
    prepare(claimed: readonly ClaimedDelivery[], now: number): Dispatch[];
    /**
     * Attempts one delivery; `onAttempted` is told as soon as the HTTP exchange ended (the slot is
     * free from then on), the promise settles once the outcome is recorded.
     */
    deliver(dispatch: Dispatch, onAttempted?: (result: AttemptResult) => void): Promise<AttemptResult>;
  };
  onError(message: string, error: unknown): void;
  /** Background work run on the scheduler's passes (see #startChores). */
  chores?: Chore[];
}

/** Background work the scheduler runs on its passes: decides itself whether it is due. */
export interface Chore {
  /** Does its work if it is time; true when it wrote something (which may move a due time). */
  runIfDue(): Promise<boolean>;
}

/**
 * The delivery loop: it owns time and slots, nothing else. One timer, armed for the earliest due
 * delivery (or the poll interval, if sooner); `wake()` runs the loop at once. A pass claims due
 * work under a lease, keeps at most `concurrency` deliveries in dispatch (and
 * `perEndpointConcurrency` per webhook), and claims more as slots free up. What a dispatch does
 * (token, attempt, outcome, notice) is `delivery/dispatch.ts`. When nothing is due and nothing is
 * in flight, it re-arms the timer and stops.
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
  /** Tasks until their outcome is recorded (what drain and close wait for). */
  #inflight = new Set<Promise<void>>();
  /** Slots taken: attempts whose HTTP exchange has not ended. */
  #attempting = 0;
  #chores = new Set<Promise<void>>();
  #runningChores = new Set<Chore>();
  #perWebhook = new Map<string, number>();
  #perEnvironment = new Map<string, number>();
  /** Per webhook: its bound in this process (see #limitOf). */
  #webhookLimit = new Map<string, number>();
  #notify: (() => void) | null = null;
  /**
   * Claimed deliveries waiting for a slot of their webhook or of their customer (at most
   * batchSize per webhook; one for a webhook that is a one-at-a-time probe).
   */
  #waiting = new Map<string, Dispatch[]>();
  /** Per environment, its webhooks with deliveries in #waiting. */
  #waitingIn = new Map<string, Set<string>>();
  /** Set when a claim came back short: nothing more is due for the webhooks we may claim for. */
  #starved = false;
  /**
   * Set when the last fair claim (customers at their share left out) came back short: every
   * other customer's due work is claimed, so customers over their share may use idle slots.
   * Cleared by a fuller fair claim and by a wake-up (new work, perhaps someone else's).
   */
  #othersDrained = false;
  /** Wake-ups so far: a claim during which one came proves nothing about the new work. */
  #wakes = 0;
  /** Set when a held delivery could not start for its customer's share alone: claim at once to learn whether it may. */
  #shareBlocked = false;
  /**
   * What the last claim that left webhooks or customers out, and came back short, proved: nothing
   * else was due, and nothing will be before `until` (the earliest pending delivery due after
   * that claim, at most the poll interval) unless something says so: a wake-up, a delivery given
   * back here, an outcome recorded here that was not a success (each voids it, #void). Until
   * then a claim that leaves out at least as much (#proven) skips the store: otherwise every
   * refill around a busy customer reads that customer's whole due backlog in the due index to
   * find nothing, a cost that grows with the backlog.
   */
  #proof: Proof | null = null;
  /** Bumped by whatever voids a proof: a claim during which it moved proves nothing. */
  #epoch = 0;
  /**
   * Armed with a proof, for its end: a busy pass waits on its attempts, and the next of them to
   * end (which would claim again) may come much later. Only during a pass (the pass's own timer
   * is disarmed then), so the scheduler still keeps one timer at a time.
   */
  #proofTimer: TimerHandle | null = null;
  /**
   * What the last claim said of the next due time when it took nothing with no attempt in
   * flight here. The pass's end arms its timer from it instead of asking the store
   * (`Claimed.nextDueAt`: PostgreSQL reads it in the claim, so an idle pass is one round trip),
   * unless a chore wrote something since the claim began (a notice sent or retried, a purge).
   * Cleared by every claim and wake.
   */
  #nextDue: { at: number | null; choreWrites: number } | null = null;
  /** How the next claim that leaves something out finds the rest (`ClaimArgs.byWebhook`). */
  #form = new ClaimForm();
  /** Chore runs that wrote something: one that ends after a claim voids what that claim said of the next due time. */
  #choreWrites = 0;
  /** Per webhook with deliveries in flight or held here: its customer (to compare what claims leave out). */
  #environmentOf = new Map<string, string>();
  #unsubscribe: Promise<(() => Promise<void>) | null> | null = null;
  readonly #isTransient: (error: unknown) => boolean;

  constructor(private readonly deps: SchedulerDeps) {
    this.#isTransient = (error) => deps.store.isTransient(error);
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
    this.#othersDrained = false;
    this.#wakes++;
    this.#void();
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
    this.#clearProofTimer();
    this.#notify?.();
    const unsubscribe = await this.#unsubscribe;
    this.#unsubscribe = null;
    await unsubscribe?.().catch((error: unknown) => this.deps.onError('could not stop listening for wake-ups', error));
    await this.drain();
    await Promise.allSettled([...this.#inflight, ...this.#chores]);
    // Held claims go back now rather than when their lease runs out.
    const held = [...this.#waiting.values()].flat().map((w) => w.claimed.delivery.id);
    this.#waiting.clear();
    this.#waitingIn.clear();
    if (held.length > 0) {
      this.#void();
      await transient(this.#isTransient, () => this.deps.store.release(held, this.deps.options.workerId, this.deps.clock.now())).catch(
        (error: unknown) => this.deps.onError('could not give back held deliveries; their leases will expire', error),
      );
    }
  }

  #kick(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#dirty = true;
    this.#notify?.();
    if (!this.#loop) {
      // Passes run back to back while something made the last one dirty (a wake-up landing as it
      // finished): one promise covers them all, so whoever awaits this (a ManualClock firing its
      // timer, drain()) sees the work done, not a pass started behind its back.
      this.#loop = (async () => {
        do await this.#run();
        while (this.#dirty && !this.#closed);
      })().finally(() => {
        this.#loop = null;
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
      // Once per pass (a chore re-started on every turn of the loop would keep the pass alive).
      this.#startChores();
      while (!this.#closed) {
        if (this.#dirty) {
          eager = true;
          this.#starved = false;
        }
        this.#dirty = false;
        const free = this.#free();
        if (free > 0 && (eager || this.#shareBlocked || this.#attempting === 0 || (free >= refillAt && !this.#starved))) {
          this.#shareBlocked = false;
          const limit = Math.min(free, options.batchSize);
          const { claimed, started } = await this.#claim(limit);
          this.#starved = claimed < limit;
          // A full claim: maybe more is due. Unless none of it could start (it all waits for its
          // webhook's slots): then claiming again would only read past that webhook's backlog.
          if (claimed === limit && started > 0) continue;
          if (claimed === limit) this.#starved = true;
        }
        eager = false;
        if (this.#inflight.size === 0 && this.#chores.size === 0) break;
        if (!this.#dirty && !(this.#shareBlocked && this.#free() > 0)) await new Promise<void>((resolve) => (this.#notify = resolve));
        this.#notify = null;
      }
      await Promise.allSettled([...this.#inflight, ...this.#chores]);
      this.#clearProofTimer(); // the pass's own timer takes over
      await this.#arm();
    } catch (error) {
      // The store is unreachable even after in-process retries: try again after a pause.
      this.deps.onError('scheduler pass failed; retrying after the poll interval', error);
      this.#dirty = false;
      await Promise.allSettled([...this.#inflight, ...this.#chores]);
      this.#clearProofTimer();
      await this.#arm(options.pollIntervalMs);
    }
  }

  /**
   * Slots free for new attempts. A slot covers the HTTP exchange only: an outcome being recorded
   * (group commit) no longer holds one, but at most `concurrency` such outcomes may be pending, so
   * a slow database slows the attempts down instead of piling outcomes up in memory.
   */
  #free(): number {
    const { concurrency } = this.deps.options;
    return Math.min(concurrency - this.#attempting, 2 * concurrency - this.#inflight.size);
  }

  /**
   * How many attempts a webhook may have in flight here: its full bound while healthy, one (a
   * half-open probe) while it is failing. Known from its record at claim (failing_since, shared by
   * every process) and from the outcomes seen here since.
   */
  #limitOf(webhookId: string): number {
    return this.#webhookLimit.get(webhookId) ?? this.deps.options.perEndpointConcurrency;
  }

  /**
   * Whether a delivery of `environment` may take a slot now: below `bound` (its fair share in a
   * first claim, the hard bound otherwise). And while some customer is over its share (it
   * borrowed idle slots), the last `perEndpointConcurrency` slots (the reserve) go only to
   * customers with nothing in flight here: however many of them hang, each holds at most one
   * reserved slot, so the next customer's delivery still starts at once.
   */
  #canStartIn(environment: string, bound: number): boolean {
    const n = this.#perEnvironment.get(environment) ?? 0;
    if (n >= bound) return false;
    return n === 0 || !this.#reserveGuarded();
  }

  /** Only the reserve is left and a customer is over its share: new customers only. */
  #reserveGuarded(): boolean {
    const { concurrency, perEndpointConcurrency, perEnvironmentConcurrency } = this.deps.options;
    if (concurrency - this.#attempting > perEndpointConcurrency) return false;
    for (const n of this.#perEnvironment.values()) if (n > perEnvironmentConcurrency) return true;
    return false;
  }

  /**
   * Claims up to `limit` and starts what the bounds allow.
   *
   * Fair share: the first claim skips environments already at their share
   * (`perEnvironmentConcurrency`) (and, while the reserve is guarded, every environment with work
   * in flight), so every other customer's due work comes first. Only when that finds nothing more
   * do environments over their share get idle slots, and never the reserve (the last
   * `perEndpointConcurrency`): a customer whose endpoints all hang fills at most the rest, and
   * anyone else's next delivery starts at once.
   *
   * Claiming ahead: when that second claim runs because nobody else has due work, it takes a
   * full batch, not only the free slots. What cannot start at once waits here (held, like a
   * webhook's surplus; claiming ahead never takes what is held past `batchSize` in all) and
   * starts as the customer's slots free,
   * so the next claim comes a batch later rather than a few slots later: one claim's cost (a
   * statement and its commit, a round trip on PostgreSQL) spread over twice the rows.
   */
  async #claim(limit: number): Promise<{ claimed: number; started: number }> {
    const { options } = this.deps;
    const reserve = options.perEndpointConcurrency;
    const guarded = this.#reserveGuarded();
    const busy = [...this.#perEnvironment].filter(([, n]) => n >= options.perEnvironmentConcurrency || guarded).map(([env]) => env);
    const wakes = this.#wakes;
    const first = await this.#claimAndStart(limit, busy, options.perEnvironmentConcurrency);
    // (A guarded claim also left out customers below their share, and work that woke us while it
    // ran may not have been there for it to find: neither proves anything.)
    this.#othersDrained = first.claimed < limit && !guarded && this.#wakes === wakes;
    // Every other customer's due work is claimed: what waits here beyond its share may start.
    if (this.#othersDrained) for (const environment of [...this.#waitingIn.keys()]) this.#startWaitingIn(environment);
    if (first.claimed >= limit || busy.length === 0) return first;
    const room = options.concurrency - this.#attempting - reserve;
    if (room <= 0) return first;
    const ahead = this.#othersDrained ? this.#holdRoom() : 0;
    const spare = Math.min(options.batchSize, room + ahead);
    const more = await this.#claimAndStart(spare, [], options.concurrency - reserve, spare > room);
    return { claimed: first.claimed + more.claimed, started: first.started + more.started };
  }

  /** How many more claimed deliveries may wait here (`batchSize` in all; none where nothing may be held). */
  #holdRoom(): number {
    if (!this.#canHold()) return 0;
    let held = 0;
    for (const queue of this.#waiting.values()) held += queue.length;
    return Math.max(0, this.deps.options.batchSize - held);
  }

  /**
   * One claim, then each delivery started, held for its webhook's next slot, or given back.
   * `ahead`: the claim asked for more than could start (claiming ahead, see #claim), so what
   * its customer's bound stops waits here even at the hard bound.
   */
  async #claimAndStart(
    limit: number,
    excludeEnvironments: string[],
    environmentBound: number,
    ahead = false,
  ): Promise<{ claimed: number; started: number }> {
    const { store, clock, options } = this.deps;
    // Webhooks at their bound (or with claimed deliveries already waiting here) get nothing more.
    const saturated = [...this.#perWebhook].filter(([id, n]) => n >= this.#limitOf(id) || this.#waiting.has(id)).map(([id]) => id);
    const now = clock.now();
    const leavesOut = saturated.length > 0 || excludeEnvironments.length > 0;
    this.#nextDue = null;
    if (leavesOut && this.#proven(saturated, excludeEnvironments, now)) return { claimed: 0, started: 0 };
    const epoch = this.#epoch;
    const quiet = this.#inflight.size === 0;
    const choreWrites = this.#choreWrites;
    const byWebhook = leavesOut ? this.#form.next() : null;
    const t0 = performance.now();
    const args: ClaimArgs = {
      now,
      limit,
      workerId: options.workerId,
      leaseMs: options.leaseMs,
      excludeWebhookIds: saturated,
      excludeEnvironments,
    };
    if (byWebhook !== null) args.byWebhook = byWebhook;
    const claimed = await transient(this.#isTransient, () => store.claimDue(args));
    this.#form.record(performance.now() - t0, claimed.length, limit, byWebhook);
    if (quiet && claimed.length === 0 && claimed.nextDueAt !== undefined && epoch === this.#epoch)
      this.#nextDue = { at: claimed.nextDueAt, choreWrites };
    const surplus: string[] = [];
    let started = 0;
    for (const d of this.deps.dispatcher.prepare(claimed, now)) {
      const { webhook } = d.claimed;
      if (webhook.failingSince !== null) this.#webhookLimit.set(webhook.id, 1);
      else if (!this.#perWebhook.has(webhook.id)) this.#webhookLimit.delete(webhook.id); // healthy: the default bound
      if (!this.#canStartIn(webhook.environment, environmentBound)) {
        // Its customer has its share. Below the hard bound it waits here for a slot (a release
        // is a write, and the claim after it would read the same rows again); it starts once
        // its customer is back under its share or nobody else has due work (#startWaiting).
        if ((ahead || this.#canStartIn(webhook.environment, this.#hardBound())) && this.#hold(d)) continue;
        surplus.push(d.claimed.delivery.id); // back for later
        continue;
      }
      if ((this.#perWebhook.get(webhook.id) ?? 0) >= this.#limitOf(webhook.id)) {
        if (this.#hold(d)) continue;
        surplus.push(d.claimed.delivery.id);
        continue;
      }
      this.#track(d);
      started++;
    }
    if (surplus.length > 0) {
      this.#void();
      await transient(this.#isTransient, () => store.release(surplus, options.workerId, clock.now()));
    }
    if (leavesOut && claimed.length < limit) await this.#prove(saturated, excludeEnvironments, now, epoch);
    return { claimed: claimed.length, started };
  }

  /** Whether the last proof still holds at `now` and leaves out no more than these do. */
  #proven(webhookIds: string[], environments: string[], now: number): boolean {
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
   * A claim at `now` that left these out came back short: everything else due was claimed. It
   * stays true until the next pending delivery comes due (a retry, a lease that runs out), at
   * most the poll interval (the safety net for what nothing announces: another process giving
   * deliveries back, a host's transaction committed without a wake-up), unless voided first.
   */
  async #prove(webhookIds: string[], environments: string[], now: number, epoch: number): Promise<void> {
    const { store, options } = this.deps;
    if (!store.nextDueAfter || epoch !== this.#epoch) return;
    let next: number | null;
    try {
      next = await transient(this.#isTransient, () => store.nextDueAfter!(now));
    } catch (error) {
      this.deps.onError('could not read the next due time; claims are not skipped meanwhile', error);
      return; // no proof: the next claim asks the store
    }
    if (epoch !== this.#epoch) return; // something came or went back meanwhile
    const until = Math.min(now + options.pollIntervalMs, next ?? Number.POSITIVE_INFINITY);
    this.#proof = {
      until,
      environments: new Set(environments),
      webhooks: new Map(webhookIds.map((id) => [id, this.#environmentOf.get(id)])),
    };
    // A pass busy with slow attempts may see none of them end for a long time: look again when
    // the proof ends (a retry comes due, a lease runs out, or the poll interval is up).
    this.#lookAgainAt(until);
  }

  /** Something may have become due that no proof saw: the next claim asks the store. */
  #void(): void {
    this.#epoch++;
    this.#nextDue = null;
    this.#proof = null;
    this.#clearProofTimer();
  }

  /**
   * An outcome with a next attempt (or failed) is recorded: its retry may come due before any
   * proof says. Claim once more: that claim sees the retry's time (and proves until then).
   */
  #retryRecorded(): void {
    this.#void();
    this.#starved = false;
  }

  /** Claims again at `at` (the end of the proof just made, which replaced any other) if the pass is still running then. */
  #lookAgainAt(at: number): void {
    this.#clearProofTimer();
    if (this.#closed) return;
    const { clock } = this.deps;
    this.#proofTimer = clock.setTimer(
      () => {
        this.#proofTimer = null;
        void this.#kick();
      },
      Math.max(0, at - clock.now()),
    );
  }

  #clearProofTimer(): void {
    if (this.#proofTimer) this.deps.clock.clearTimer(this.#proofTimer);
    this.#proofTimer = null;
  }

  /**
   * Keeps a claimed delivery here for its webhook's next free slot instead of giving it back
   * (a release is a write, and the claim after it would read the same rows again). A healthy
   * webhook keeps what one claim brought; a failing one (a one-at-a-time probe) at most one.
   * Only when the lease covers an attempt and its record: `#startWaiting` checks again.
   */
  #hold(d: Dispatch): boolean {
    const { options } = this.deps;
    if (!this.#canHold()) return false;
    const { id } = d.claimed.webhook;
    const limit = this.#limitOf(id);
    const queue = this.#waiting.get(id) ?? [];
    if (queue.length >= (limit < options.perEndpointConcurrency ? limit : options.batchSize)) return false;
    queue.push(d);
    if (!this.#waiting.has(id)) {
      this.#waiting.set(id, queue);
      const { environment } = d.claimed.webhook;
      this.#environmentOf.set(id, environment);
      const ids = this.#waitingIn.get(environment) ?? new Set<string>();
      this.#waitingIn.set(environment, ids.add(id));
    }
    void d.token; // sign while it waits: its slot then covers the HTTP exchange only
    return true;
  }

  /** Whether anything may wait here: the lease covers an attempt and a margin, and there is room beyond the reserve. */
  #canHold(): boolean {
    const { options } = this.deps;
    if (options.timeoutMs === undefined || options.leaseMs < options.timeoutMs + HOLD_MARGIN_MS) return false;
    // No room beyond the reserve (concurrency <= perEndpointConcurrency): nothing held could start.
    return this.#hardBound() > 0;
  }

  /**
   * Background work on the same clock and passes (the notice outbox, retention): each runs when
   * it says it is due, at most one run of each at a time, beside deliveries, never blocking them.
   */
  #startChores(): void {
    for (const chore of this.deps.chores ?? []) {
      if (this.#closed || this.#runningChores.has(chore)) continue;
      this.#runningChores.add(chore);
      const task = chore
        .runIfDue()
        .then(
          (wrote) => {
            if (wrote) this.#choreWrites++;
          },
          (error: unknown) => {
            this.#choreWrites++; // it may have written before it failed
            this.deps.onError('a background task of the scheduler failed', error);
          },
        )
        .finally(() => {
          this.#chores.delete(task);
          this.#runningChores.delete(chore);
          this.#notify?.();
        });
      this.#chores.add(task);
    }
  }

  /** Starts one delivery: its slot is taken until the HTTP exchange ends; the task lasts until the outcome is recorded. */
  #track(d: Dispatch): void {
    const { id, environment } = d.claimed.webhook;
    this.#environmentOf.set(id, environment);
    bump(this.#perWebhook, id, +1);
    bump(this.#perEnvironment, environment, +1);
    this.#attempting++;
    let freed = false;
    const free = (result: AttemptResult | null) => {
      if (freed) return;
      freed = true;
      this.#attempting--;
      bump(this.#perWebhook, id, -1);
      bump(this.#perEnvironment, environment, -1);
      this.#forget(id);
      // Adapt at once: a failure of the endpoint makes the webhook a one-at-a-time probe; a
      // success restores its full bound (the default, so nothing is kept for it).
      if (result?.charged) {
        if (result.success) this.#webhookLimit.delete(id);
        else this.#webhookLimit.set(id, 1);
      }
      this.#startWaiting(id);
      // A slot of this customer freed: its other webhooks' held deliveries may start now.
      if (this.#waitingIn.has(environment)) this.#startWaitingIn(environment);
      // Claiming again is worth it only if something became claimable: this webhook (nothing of
      // it waits here and it is below its bound) or its customer (back under its share).
      // Otherwise the freed slot went to the webhook's own waiting delivery and nothing changed.
      const { perEnvironmentConcurrency } = this.deps.options;
      const webhookOpen = !this.#waiting.has(id) && (this.#perWebhook.get(id) ?? 0) < this.#limitOf(id);
      if (webhookOpen || (this.#perEnvironment.get(environment) ?? 0) === perEnvironmentConcurrency - 1) this.#starved = false;
      this.#notify?.();
    };
    const task = this.deps.dispatcher
      .deliver(d, free)
      .then(
        (result) => {
          free(result);
          if (!result.success) this.#retryRecorded();
        },
        () => {
          free(null);
          this.#retryRecorded();
        },
      )
      .finally(() => {
        this.#inflight.delete(task);
        this.#notify?.();
      });
    this.#inflight.add(task);
  }

  /** A webhook with nothing in flight or held here any more: its customer need not be kept. */
  #forget(webhookId: string): void {
    if (!this.#perWebhook.has(webhookId) && !this.#waiting.has(webhookId)) this.#environmentOf.delete(webhookId);
  }

  /** Most slots one customer may hold here: all but the reserve. */
  #hardBound(): number {
    return this.deps.options.concurrency - this.deps.options.perEndpointConcurrency;
  }

  /**
   * A slot of `webhookId` freed (or its customer's): start its waiting deliveries as far as the
   * bounds allow; the rest keep waiting for the next slot of the webhook or of its customer.
   */
  #startWaiting(webhookId: string): void {
    const queue = this.#waiting.get(webhookId);
    if (!queue || this.#closed) return;
    const environment = queue[0]!.claimed.webhook.environment; // a queue here is never empty
    const { options, clock } = this.deps;
    // Already claimed, so an environment's hard bound applies here (see #claim), and beyond its
    // share only while every other customer's due work is claimed (otherwise the slot is theirs:
    // the next claim, which leaves this customer out, finds their work).
    const hardBound = this.#hardBound();
    const bound = this.#othersDrained ? hardBound : Math.min(hardBound, options.perEnvironmentConcurrency);
    const giveBack: Dispatch[] = [];
    let stranded = false;
    while (queue.length > 0 && (this.#perWebhook.get(webhookId) ?? 0) < this.#limitOf(webhookId)) {
      const next = queue[0]!;
      // Its customer at its bound: it waits for the customer's next slot (#startWaitingIn), or
      // for a claim that finds nobody else's work due (#claim), asked for at once.
      if (!this.#canStartIn(environment, bound)) {
        if (bound < hardBound && this.#canStartIn(environment, hardBound)) this.#shareBlocked = true;
        // Nothing of its customer in flight here, and still no room: no freed slot would start it.
        else if ((this.#perEnvironment.get(environment) ?? 0) === 0) stranded = true;
        break;
      }
      queue.shift();
      // Its lease must outlast the attempt and its record; if waiting ate too much of it, back it goes.
      if (next.claimed.lease.until - clock.now() < (options.timeoutMs ?? 0) + HOLD_MARGIN_MS) giveBack.push(next);
      else this.#track(next);
    }
    // A webhook that became a one-at-a-time probe keeps no more claims than it can use.
    const limit = this.#limitOf(webhookId);
    const keep = stranded ? 0 : limit < options.perEndpointConcurrency ? limit : queue.length;
    giveBack.push(...queue.splice(keep));
    if (queue.length === 0) {
      this.#waiting.delete(webhookId);
      const ids = this.#waitingIn.get(environment);
      ids?.delete(webhookId);
      if (ids?.size === 0) this.#waitingIn.delete(environment);
      this.#forget(webhookId);
    }
    if (giveBack.length > 0) {
      this.#void();
      const ids = giveBack.map((d) => d.claimed.delivery.id);
      void transient(this.#isTransient, () => this.deps.store.release(ids, options.workerId, clock.now()))
        .catch((error: unknown) => this.deps.onError('could not give back held deliveries; their leases will expire', error))
        // A claim that ran while the release was under way (another connection) may not have
        // seen the rows come back: no proof from it stands.
        .finally(() => this.#void());
    }
  }

  /** Starts what waits here for `environment`'s webhooks, as far as its bounds allow. */
  #startWaitingIn(environment: string): void {
    for (const webhookId of [...(this.#waitingIn.get(environment) ?? [])]) {
      if (!this.#canStartIn(environment, this.#hardBound())) return;
      this.#startWaiting(webhookId);
    }
  }

  async #arm(maxDelay = this.deps.options.pollIntervalMs): Promise<void> {
    if (this.#closed) return;
    const { store, clock } = this.deps;
    let delay = maxDelay;
    // (Every chore of the pass has ended by now: one that wrote since the claim began voids it.)
    const known = this.#nextDue?.choreWrites === this.#choreWrites ? this.#nextDue : null;
    this.#nextDue = null;
    try {
      const due = known ? known.at : await transient(this.#isTransient, () => store.nextDueAt());
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

/** See Scheduler#proof. */
interface Proof {
  until: number;
  environments: Set<string>;
  /** Each webhook left out, with its customer: a later claim leaving the customer out covers it. */
  webhooks: Map<string, string | undefined>;
}

/** Room left in the lease, past two attempt deadlines, for recording the outcome. */
const HOLD_MARGIN_MS = 5_000;

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}
