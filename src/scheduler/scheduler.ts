import type { Clock } from '../clock.js';
import type { Delivering, Dispatch } from '../delivery/dispatch.js';
import type { ClaimedDelivery } from '../model.js';
import type { ClaimArgs, Claimed, DeliveryStore } from '../store.js';
import { transient } from '../transient.js';
import { Attempts, type MayBeDue } from './attempts.js';
import { type Chore, Chores } from './chores.js';
import { ClaimForm, leftOutKeys } from './claim-form.js';
import type { ParkedOptions } from './parked.js';
import { Proofs } from './proof.js';
import { ReclaimHold } from './reclaim-hold.js';
import type { SlotOptions } from './slots.js';
import { OneTimer } from './timer.js';

export type { MayBeDue } from './attempts.js';
export type { Chore } from './chores.js';

export interface SchedulerOptions extends SlotOptions, ParkedOptions {
  workerId: string;
  /** How long a claim is ours; must exceed the HTTP timeout. */
  leaseMs: number;
  /** Longest sleep between looks at the store (the safety net behind wake-ups). */
  pollIntervalMs: number;
}

export interface SchedulerDeps {
  store: DeliveryStore;
  clock: Clock;
  options: SchedulerOptions;
  /** What running a claimed delivery means (see `delivery/dispatch.ts`). */
  dispatcher: {
    prepare(claimed: readonly ClaimedDelivery[], now: number): Dispatch[];
    deliver(dispatch: Dispatch): Delivering;
  };
  onError(message: string, error: unknown): void;
  /** Background work run on the scheduler's passes. */
  chores?: Chore[];
}

/**
 * The loop's mode: **new** (not started), **idle** (no pass; one timer armed for the earliest due
 * delivery or the poll interval, whichever is sooner), **passing** (claim what the free slots can
 * take, start it, wait for a slot to free or for something to become due, claim again), **closed**.
 */
export type Mode = 'new' | 'idle' | 'passing' | 'closed';

/**
 * The delivery loop: it owns time and the looks at the store, and does the scheduler's I/O with
 * the store (the claims, the give-backs, the next due time) and its timers. What it decides, it
 * asks small modules that do no I/O: `proof.ts` (when a claim may skip the store),
 * `claim-form.ts` (the form of a claim that leaves something out), `reclaim-hold.ts` (after an
 * outage), `chores.ts`. What it claims, `attempts.ts` starts, parks or times, and follows until
 * recorded; what one delivery does (token, attempt, outcome, notice) is `delivery/dispatch.ts`.
 *
 * Whatever may have made work due that the last look did not see comes in through one entrance,
 * {@link Scheduler.mayBeDue}, with its reason ({@link MayBeDue}).
 *
 * The promise of a pass settles only when the pass is idle, so a `ManualClock` that awaits its
 * timers sees every attempt of a due time finish before time moves on.
 */
export class Scheduler {
  #mode: Mode = 'new';
  readonly #attempts: Attempts;
  readonly #proofs = new Proofs();
  readonly #hold = new ReclaimHold();
  readonly #chores: Chores;
  /** How the next claim that leaves something out finds the rest (`ClaimArgs.byWebhook`). */
  readonly #form = new ClaimForm();
  readonly #isTransient = (error: unknown) => this.deps.store.isTransient(error);
  /** The passes under way (back to back), while the mode is passing: what drain and a timer await. */
  #loop: Promise<void> | null = null;
  /** Set by whatever may have made work due since the pass last looked (a wake-up, a timer). */
  #dirty = false;
  /** Idle: armed for the next due delivery or the poll interval. */
  readonly #timer: OneTimer;
  /** Armed during a pass for the end of the last proof (a busy pass may see no attempt end for a long time). */
  readonly #proofTimer: OneTimer;
  /** Resolves the pass's wait for a slot to free or a wake-up. */
  #notify: (() => void) | null = null;
  /** Set when a claim came back short: nothing more is due for the webhooks we may claim for. */
  #starved = false;
  /** Wake-ups so far: a claim during which one came proves nothing about the new work. */
  #wakes = 0;
  /**
   * The last claim that left something out and came back short (or was skipped by a proof): its
   * time and the proofs' epoch then. Work due by then that the store still shows is what that
   * claim left out (a webhook at its bound, a claim's worth timed, an environment at its share):
   * only an event frees it (a slot, a start time, a wake-up, a give-back), never asking again at once.
   */
  #shortLook: { at: number; epoch: number } | null = null;
  #unsubscribe: Promise<(() => Promise<void>) | null> | null = null;

  constructor(private readonly deps: SchedulerDeps) {
    this.#chores = new Chores(deps.chores ?? [], deps.onError);
    this.#timer = new OneTimer(deps.clock);
    this.#proofTimer = new OneTimer(deps.clock);
    this.#attempts = new Attempts({
      clock: deps.clock,
      options: deps.options,
      dispatcher: deps.dispatcher,
      loop: {
        mayBeDue: (why, webhook) => void this.mayBeDue(why, webhook),
        giveBack: (ids) => this.#giveBack(ids),
        notify: () => this.#notify?.(),
        timedStarted: () => {
          if (this.#mode !== 'passing') return this.#kick(false);
          this.#notify?.();
          return Promise.resolve();
        },
        closed: () => this.#mode === 'closed',
      },
    });
  }

  start(): void {
    if (this.#mode !== 'new') return;
    this.#mode = 'idle';
    // Work emitted by other processes wakes us within milliseconds where the store can hear it;
    // the poll interval stays the safety net.
    const { store, onError } = this.deps;
    this.#unsubscribe =
      store
        .subscribe?.(() => this.wake(), this.deps.options.workerId)
        .catch((error: unknown) => {
          onError('could not listen for wake-ups; polling only', error);
          return null;
        }) ?? null;
    void this.#kick();
  }

  /** Something may be due now (an emit, an enable): look at once. */
  wake(): void {
    void this.mayBeDue('woken');
  }

  /**
   * The one entrance for "something may be due that the last look did not see". Answers the
   * pass it started or joined, if it looks at once.
   */
  mayBeDue(why: MayBeDue, webhook?: { id: string; environment: string }): Promise<void> | undefined {
    switch (why) {
      case 'woken':
        // New work: nobody else is known to be drained, and nothing proven stands.
        this.#attempts.slots.othersDrained = false;
        this.#wakes++;
        this.#void();
        return this.#mode === 'new' ? undefined : this.#kick();
      case 'timer':
        return this.#kick();
      case 'failed':
        this.#void();
        this.#starved = false;
        return undefined;
      case 'released':
        if (webhook && this.#proofs.madeDue(webhook.id, webhook.environment)) this.#proofTimer.clear();
        this.#starved = false;
        return undefined;
      case 'reopened':
        this.#starved = false;
        return undefined;
      case 'gave-back':
        this.#void();
        return undefined;
    }
  }

  /** Resolves when no pass is running and no attempt is in flight. */
  async drain(): Promise<void> {
    while (this.#loop) await this.#loop;
  }

  /** Stops claiming, waits for attempts in flight to be recorded, gives back what is parked or timed, disarms the timers. */
  async close(): Promise<void> {
    this.#mode = 'closed';
    this.#timer.clear();
    this.#proofTimer.clear();
    this.#attempts.disarm();
    this.#notify?.();
    const unsubscribe = await this.#unsubscribe;
    this.#unsubscribe = null;
    await unsubscribe?.().catch((error: unknown) => this.deps.onError('could not stop listening for wake-ups', error));
    await this.drain();
    await this.#settled();
    // Parked claims go back now rather than when their lease runs out.
    const parked = this.#attempts.takeAll();
    if (parked.length > 0) {
      void this.mayBeDue('gave-back');
      await this.#release(parked).catch((error: unknown) =>
        this.deps.onError('could not give back parked deliveries; their leases will expire', error),
      );
    }
  }

  /** Runs a pass (`claim`: one that looks at the store at once; false: one that only sees timed deliveries through). */
  #kick(claim = true): Promise<void> {
    if (this.#mode === 'closed') return Promise.resolve();
    if (claim) this.#dirty = true;
    this.#notify?.();
    if (this.#mode !== 'passing') {
      // Passes run back to back while something made the last one dirty (a wake-up landing as it
      // finished): one promise covers them all, so whoever awaits this (a ManualClock firing its
      // timer, drain()) sees the work done, not a pass started behind its back.
      this.#mode = 'passing';
      this.#loop = (async () => {
        let eager = claim;
        do {
          await this.#pass(eager);
          eager = true;
        } while (this.#dirty && this.#mode !== 'closed');
      })().finally(() => {
        this.#loop = null;
        if (this.#mode === 'passing') this.#mode = 'idle';
      });
    }
    return this.#loop!;
  }

  /** One pass: claim and start until nothing more can be, wait for what runs, then arm the timer. */
  async #pass(claimFirst = true): Promise<void> {
    this.#timer.clear();
    const { options } = this.deps;
    const attempts = this.#attempts;
    // Refill in batches, not slot by slot: a claim per freed slot costs a statement (and a
    // scan) per delivery, and splits an event's fan-out over many claims, each signing its own
    // token. So top up when half the slots are free; at once after a wake (new work: latency
    // matters), after a full claim (more is due), or when nothing runs.
    const refillAt = Math.max(1, Math.min(options.batchSize, Math.ceil(options.concurrency / 2)));
    let eager = claimFirst;
    try {
      // Chores once per pass (started again on every turn of the loop, they would keep the pass alive).
      if (this.#mode !== 'closed') this.#chores.start(() => this.#notify?.());
      while (this.#mode !== 'closed') {
        if (this.#dirty) {
          eager = true;
          this.#starved = false;
        }
        this.#dirty = false;
        const free = attempts.slots.free(attempts.inflight.size);
        if (free > 0 && (eager || attempts.shareBlocked || attempts.slots.attempting === 0 || (free >= refillAt && !this.#starved))) {
          attempts.shareBlocked = false;
          const limit = Math.min(free, options.batchSize);
          const { claimed, started } = await this.#claim(limit);
          this.#starved = claimed < limit;
          // A full claim: maybe more is due. Unless none of it could start (it is all parked for
          // its webhook's slots): then claiming again would only read past that webhook's backlog.
          if (claimed === limit && started > 0) continue;
          if (claimed === limit) this.#starved = true;
        }
        eager = false;
        if (attempts.inflight.size === 0 && this.#chores.runs.size === 0) break;
        if (!this.#dirty && !(attempts.shareBlocked && attempts.slots.free(attempts.inflight.size) > 0))
          await new Promise<void>((resolve) => (this.#notify = resolve));
        this.#notify = null;
      }
      await this.#settled();
      this.#proofTimer.clear(); // the pass's own timer takes over
      await this.#arm();
    } catch (error) {
      // The store is unreachable even after transient retries: try again after a pause.
      this.deps.onError('scheduler pass failed; trying again after the poll interval', error);
      this.#dirty = false;
      await this.#settled();
      this.#proofTimer.clear();
      await this.#arm(options.pollIntervalMs);
    }
  }

  /**
   * Claims up to `limit` and starts what the bounds allow.
   *
   * Fair share: the first claim leaves out environments already at their share (and, while the
   * reserve is guarded, every environment with work in flight), so every other environment's due
   * work comes first. Only when that finds nothing more do environments over their share get
   * idle slots, and never the reserve: an environment whose endpoints all hang fills at most the
   * rest, and anyone else's next delivery starts at once.
   *
   * Claiming ahead: when that second claim runs because nobody else has due work, it takes a full
   * batch, not only the free slots. What cannot start at once is parked and starts as the
   * environment's slots free, so the next claim comes a batch later rather than a few slots later.
   */
  async #claim(limit: number): Promise<{ claimed: number; started: number }> {
    const { options } = this.deps;
    const slots = this.#attempts.slots;
    const guarded = slots.reserveGuarded();
    const busy = slots.busyEnvironments(guarded);
    const wakes = this.#wakes;
    const first = await this.#claimAndStart(limit, busy, options.perEnvironmentConcurrency);
    // (A guarded claim also left out environments below their share, and work that woke us while
    // it ran may not have been there for it to find: neither proves anything.)
    slots.othersDrained = first.claimed < limit && !guarded && this.#wakes === wakes;
    // Every other environment's due work is claimed: what is parked beyond its share may start.
    if (slots.othersDrained) this.#attempts.othersDrained();
    if (first.claimed >= limit || busy.length === 0) return first;
    const room = options.concurrency - slots.attempting - options.perWebhookConcurrency;
    if (room <= 0) return first;
    const ahead = slots.othersDrained ? this.#attempts.parked.room(slots) : 0;
    const spare = Math.min(options.batchSize, room + ahead);
    const more = await this.#claimAndStart(spare, [], slots.hardBound(), spare > room);
    return { claimed: first.claimed + more.claimed, started: first.started + more.started };
  }

  /**
   * One claim, then each delivery started, parked for a slot, or given back (see
   * `Slots.admit`). `ahead`: the claim asked for more than could start (claiming ahead).
   */
  async #claimAndStart(
    limit: number,
    excludeEnvironments: string[],
    environmentBound: number,
    ahead = false,
  ): Promise<{ claimed: number; started: number }> {
    const { clock, options } = this.deps;
    const proofs = this.#proofs;
    const now = clock.now();
    const saturated = this.#attempts.leftOut(now);
    const leavesOut = saturated.length > 0 || excludeEnvironments.length > 0;
    proofs.claimBegins();
    const epoch = proofs.epoch;
    if (leavesOut && proofs.proven(saturated, excludeEnvironments, now)) {
      this.#shortLook = { at: now, epoch };
      return { claimed: 0, started: 0 };
    }
    const quiet = this.#attempts.inflight.size === 0;
    const choreWrites = this.#chores.writes;
    const leftOut = leavesOut ? leftOutKeys(saturated, excludeEnvironments) : undefined;
    const byWebhook = leavesOut ? this.#form.next(leftOut) : null;
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
    const claimed = await transient(this.#isTransient, () => this.#claimDue(args));
    this.#form.record(performance.now() - t0, claimed.length, limit, byWebhook, leftOut);
    if (quiet && claimed.length === 0 && claimed.nextDueAt !== undefined) proofs.nextDueSaid(claimed.nextDueAt, epoch, choreWrites);
    const { started, giveBack } = this.#attempts.take(claimed, now, environmentBound, ahead);
    if (giveBack.length > 0) {
      void this.mayBeDue('gave-back');
      await this.#release(giveBack);
    }
    if (leavesOut && claimed.length < limit) {
      this.#shortLook = { at: now, epoch };
      await this.#prove(saturated, excludeEnvironments, now, epoch);
    }
    return { claimed: claimed.length, started };
  }

  /** One try of a claim: after an outage, leases that ran out during it are left to their owners for a while (`reclaim-hold.ts`). */
  async #claimDue(args: ClaimArgs): Promise<Claimed> {
    const { store, clock } = this.deps;
    const reclaimBefore = this.#hold.reclaimBefore(args.now, clock.now());
    if (reclaimBefore === undefined) delete args.reclaimBefore;
    else args.reclaimBefore = reclaimBefore;
    try {
      const claimed = await store.claimDue(args);
      this.#hold.reached(args.now, clock.now());
      return claimed;
    } catch (error) {
      this.#hold.missed(args.now);
      throw error;
    }
  }

  /**
   * A claim at `now` that left these out came back short: everything else due was claimed, until
   * the next pending delivery comes due (a back-off, a lease that runs out), at most the poll
   * interval (the safety net for what nothing announces: another process giving deliveries back,
   * a host's transaction committed without a wake-up), unless voided first.
   */
  async #prove(webhookIds: string[], environments: string[], now: number, epoch: number): Promise<void> {
    const { store, options } = this.deps;
    if (!store.nextDueAfter || epoch !== this.#proofs.epoch) return;
    let next: number | null;
    try {
      next = await transient(this.#isTransient, () => store.nextDueAfter!(now));
    } catch (error) {
      this.deps.onError('could not read the next due time; claims are not skipped meanwhile', error);
      return; // no proof: the next claim asks the store
    }
    const left = new Map(webhookIds.map((id) => [id, this.#attempts.environmentOf(id)]));
    const until = this.#proofs.prove(left, environments, now, next, options.pollIntervalMs, epoch);
    // A pass busy with slow attempts may see none of them end for a long time: look again when
    // the proof ends (a delivery comes due, a lease runs out, or the poll interval is up).
    if (until === null) return;
    this.#proofTimer.clear();
    if (this.#mode !== 'closed') this.#proofTimer.arm(Math.max(0, until - this.deps.clock.now()), () => void this.mayBeDue('timer'));
  }

  /** Gives back in the background (a lease that is not cleared runs out). */
  #giveBack(ids: string[]): void {
    void this.mayBeDue('gave-back');
    void this.#release(ids)
      .catch((error: unknown) => this.deps.onError('could not give back deliveries; their leases will expire', error))
      // A claim that ran while the release was under way (another connection) may not have
      // seen the rows come back: no proof from it stands.
      .finally(() => void this.mayBeDue('gave-back'));
  }

  #release(deliveryIds: string[]): Promise<void> {
    const { store, options, clock } = this.deps;
    return transient(this.#isTransient, () => store.release(deliveryIds, options.workerId, clock.now()));
  }

  /** Every delivery started has been recorded and every chore run has ended. */
  async #settled(): Promise<void> {
    await Promise.allSettled([...this.#attempts.inflight, ...this.#chores.runs]);
  }

  /** Something may have become due that no proof saw: the next claim asks the store (only through {@link mayBeDue}). */
  #void(): void {
    this.#proofs.void();
    this.#proofTimer.clear();
  }

  /** Idle: one timer for the next due delivery or notice, at most `maxDelay` away. */
  async #arm(maxDelay = this.deps.options.pollIntervalMs): Promise<void> {
    if (this.#mode === 'closed') return;
    const { store, clock } = this.deps;
    let delay = maxDelay;
    // (Every chore of the pass has ended by now: one that wrote since the claim began voids it.)
    const known = this.#proofs.takeNextDue(this.#chores.writes);
    try {
      const due = known ? known.at : await transient(this.#isTransient, () => store.nextDueAt());
      const now = clock.now();
      if (due !== null && due > now) delay = Math.min(delay, due - now);
      // Became due while we finished: go again. Unless our last look could have seen it and left
      // it out (it waits for an event, not for time): going again would find the same nothing,
      // at once and forever (on SQLite a loop of settled promises that no timer can interrupt).
      const look = this.#shortLook;
      const leftOut = look !== null && look.epoch === this.#proofs.epoch && due !== null && due <= look.at;
      if (due !== null && due <= now && !leftOut) this.#dirty = true;
      const until = leftOut ? this.#proofs.until : null;
      if (until !== null && until > now) delay = Math.min(delay, until - now);
    } catch (error) {
      this.deps.onError('could not read the next due time', error);
    }
    if ((this.#mode as Mode) === 'closed' || this.#dirty) return;
    this.#timer.arm(delay, () => this.mayBeDue('timer'));
  }
}
