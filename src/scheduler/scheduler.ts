import type { Clock } from '../clock.js';
import type { AttemptResult, Delivering, Dispatch } from '../delivery/dispatch.js';
import type { ClaimedDelivery } from '../model.js';
import type { ClaimArgs, Claimed, Store } from '../store.js';
import { transient } from '../transient.js';
import { type Chore, Chores } from './chores.js';
import { ClaimForm, leftOutKeys } from './claim-form.js';
import { Parked, type ParkedOptions, type Unparked } from './parked.js';
import { Proofs } from './proof.js';
import { type SlotOptions, Slots } from './slots.js';
import { Timed } from './timed.js';
import { OneTimer } from './timer.js';

export type { Chore } from './chores.js';

/** Most webhooks remembered as deferred by a Retry-After here; past it the oldest is forgotten (its stored pace still holds it). */
const DEFERRED_MAX = 1_000;

/** An attempt whose HTTP exchange is under way. */
interface Running {
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
 * How long, once the store answers again after a claim could not reach it, this process's claims
 * leave alone the leases that ran out since it last reached it. Their owners kept the outcomes of
 * those attempts through the outage (`OUTCOME_PATIENCE_MS`) and record them within a second or
 * two of the database's return; a claim that took such a delivery first would fence that record
 * out and send again what was delivered. A process that died during the outage has its
 * deliveries taken this much later.
 */
export const RECLAIM_GRACE_MS = 10_000;

export interface SchedulerOptions extends SlotOptions, ParkedOptions {
  workerId: string;
  /** How long a claim is ours; must exceed the HTTP timeout. */
  leaseMs: number;
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
    deliver(dispatch: Dispatch): Delivering;
  };
  onError(message: string, error: unknown): void;
  /** Background work run on the scheduler's passes. */
  chores?: Chore[];
}

/**
 * The delivery loop: it owns time and slots, and does all of the scheduler's I/O (the timer, the
 * claims, the give-backs, starting deliveries and chores). What it decides, it asks small
 * modules that do no I/O: `slots.ts` (slots and fair share), `parked.ts` (claimed deliveries
 * waiting here for a slot), `timed.ts` (claimed deliveries waiting here for their start time),
 * `proof.ts` (when a claim may skip the store), `chores.ts`,
 * `claim-form.ts` (the form of a claim that leaves something out). What a delivery does (token,
 * attempt, outcome, notice) is `delivery/dispatch.ts`.
 *
 * Modes: **idle** (no pass; one timer armed for the earliest due delivery or the poll interval,
 * whichever is sooner), **passing** (claim what the free slots can take, start it, wait for a
 * slot to free or a wake-up, claim again), **closed**. `wake()` starts a pass at once.
 *
 * The promise of a pass settles only when the pass is idle, so a `ManualClock` that awaits its
 * timers sees every attempt of a due time finish before time moves on.
 */
export class Scheduler {
  readonly #slots: Slots;
  readonly #parked: Parked;
  readonly #timed: Timed;
  /** Timed deliveries of a webhook whose endpoint asked to slow down: given back once that attempt's outcome is recorded. */
  readonly #withdrawn = new Map<string, string[]>();
  readonly #proofs = new Proofs();
  /**
   * Webhooks whose endpoint answered with a Retry-After, until when, while that outcome is being
   * recorded: left out of every claim here meanwhile; once the record has written the pace, the
   * store holds them everywhere and the entry goes.
   */
  readonly #deferred = new Map<string, number>();
  /** Webhooks a claim left out since their last attempt here ended. */
  readonly #leftOutSince = new Set<string>();
  readonly #chores: Chores;
  /** How the next claim that leaves something out finds the rest (`ClaimArgs.byWebhook`). */
  readonly #form = new ClaimForm();
  readonly #isTransient: (error: unknown) => boolean;

  #loop: Promise<void> | null = null;
  /** Set by whatever may have made work due since the pass last looked (a wake-up, a timer). */
  #dirty = false;
  #closed = false;
  #started = false;
  /** Idle: armed for the next due delivery or the poll interval. */
  readonly #timer: OneTimer;
  /** Armed during a pass for the end of the last proof (a busy pass may see no attempt end for a long time). */
  readonly #proofTimer: OneTimer;
  /** Armed for the earliest timed delivery's start time. */
  readonly #timedTimer: OneTimer;
  /** Armed for the earliest time an attempt under way becomes overdue (`Slots.overdue`). */
  readonly #overdueTimer: OneTimer;
  #overdueArmedAt = Number.POSITIVE_INFINITY;
  /** Attempts whose HTTP exchange is under way: when each started and when it becomes overdue. */
  readonly #running = new Set<Running>();
  /** Deliveries started and not yet recorded (what drain and close wait for). */
  readonly #inflight = new Set<Promise<void>>();
  /** Resolves the pass's wait for a slot to free or a wake-up. */
  #notify: (() => void) | null = null;
  /** Set when a claim came back short: nothing more is due for the webhooks we may claim for. */
  #starved = false;
  /** Set when a parked delivery could not start for its environment's share alone: claim at once to learn whether it may. */
  #shareBlocked = false;
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
  /** When a claim last reached the store (its `now`). */
  #reached: number | null = null;
  /**
   * Since a claim could not reach the store: leases that ran out after `before` stay with their
   * owners until `until` (infinite until a claim reaches the store again; see {@link RECLAIM_GRACE_MS}).
   */
  #hold: { before: number; until: number } | null = null;

  constructor(private readonly deps: SchedulerDeps) {
    this.#slots = new Slots(deps.options);
    this.#parked = new Parked(deps.options);
    this.#timed = new Timed(deps.options);
    this.#chores = new Chores(deps.chores ?? [], deps.onError);
    this.#isTransient = (error) => deps.store.isTransient(error);
    this.#timer = new OneTimer(deps.clock);
    this.#proofTimer = new OneTimer(deps.clock);
    this.#timedTimer = new OneTimer(deps.clock);
    this.#overdueTimer = new OneTimer(deps.clock);
  }

  start(): void {
    if (this.#closed || this.#started) return;
    this.#started = true;
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
    this.#slots.othersDrained = false;
    this.#wakes++;
    this.#void();
    if (this.#started) void this.#kick();
  }

  /** Resolves when no pass is running and no attempt is in flight. */
  async drain(): Promise<void> {
    while (this.#loop) await this.#loop;
  }

  /** Stops claiming, waits for attempts in flight to be recorded, gives back what is parked or timed, disarms the timers. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer.clear();
    this.#proofTimer.clear();
    this.#timedTimer.clear();
    this.#overdueTimer.clear();
    this.#notify?.();
    const unsubscribe = await this.#unsubscribe;
    this.#unsubscribe = null;
    await unsubscribe?.().catch((error: unknown) => this.deps.onError('could not stop listening for wake-ups', error));
    await this.drain();
    await this.#settled();
    // Parked claims go back now rather than when their lease runs out.
    const parked = [
      ...this.#parked.takeAll().map((d) => d.claimed.delivery.id),
      ...this.#timed.takeAll().map((c) => c.delivery.id),
      ...[...this.#withdrawn.values()].flat(),
    ];
    this.#withdrawn.clear();
    if (parked.length > 0) {
      this.#void();
      await this.#release(parked).catch((error: unknown) =>
        this.deps.onError('could not give back parked deliveries; their leases will expire', error),
      );
    }
  }

  /** Runs a pass (`claim`: one that looks at the store at once; false: one that only sees timed deliveries through). */
  #kick(claim = true): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (claim) this.#dirty = true;
    this.#notify?.();
    if (!this.#loop) {
      // Passes run back to back while something made the last one dirty (a wake-up landing as it
      // finished): one promise covers them all, so whoever awaits this (a ManualClock firing its
      // timer, drain()) sees the work done, not a pass started behind its back.
      this.#loop = (async () => {
        let eager = claim;
        do {
          await this.#pass(eager);
          eager = true;
        } while (this.#dirty && !this.#closed);
      })().finally(() => {
        this.#loop = null;
      });
    }
    return this.#loop;
  }

  /** One pass: claim and start until nothing more can be, wait for what runs, then arm the timer. */
  async #pass(claimFirst = true): Promise<void> {
    this.#timer.clear();
    const { options } = this.deps;
    // Refill in batches, not slot by slot: a claim per freed slot costs a statement (and a
    // scan) per delivery, and splits an event's fan-out over many claims, each signing its own
    // token. So top up when half the slots are free; at once after a wake (new work: latency
    // matters), after a full claim (more is due), or when nothing runs.
    const refillAt = Math.max(1, Math.min(options.batchSize, Math.ceil(options.concurrency / 2)));
    let eager = claimFirst;
    try {
      // Chores once per pass (started again on every turn of the loop, they would keep the pass alive).
      if (!this.#closed) this.#chores.start(() => this.#notify?.());
      while (!this.#closed) {
        if (this.#dirty) {
          eager = true;
          this.#starved = false;
        }
        this.#dirty = false;
        const free = this.#slots.free(this.#inflight.size);
        const attempting = this.#slots.attempting;
        if (free > 0 && (eager || this.#shareBlocked || attempting === 0 || (free >= refillAt && !this.#starved))) {
          this.#shareBlocked = false;
          const limit = Math.min(free, options.batchSize);
          const { claimed, started } = await this.#claim(limit);
          this.#starved = claimed < limit;
          // A full claim: maybe more is due. Unless none of it could start (it is all parked for
          // its webhook's slots): then claiming again would only read past that webhook's backlog.
          if (claimed === limit && started > 0) continue;
          if (claimed === limit) this.#starved = true;
        }
        eager = false;
        if (this.#inflight.size === 0 && this.#chores.runs.size === 0) break;
        if (!this.#dirty && !(this.#shareBlocked && this.#slots.free(this.#inflight.size) > 0))
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
    const slots = this.#slots;
    const guarded = slots.reserveGuarded();
    const busy = slots.busyEnvironments(guarded);
    const wakes = this.#wakes;
    const first = await this.#claimAndStart(limit, busy, options.perEnvironmentConcurrency);
    // (A guarded claim also left out environments below their share, and work that woke us while
    // it ran may not have been there for it to find: neither proves anything.)
    slots.othersDrained = first.claimed < limit && !guarded && this.#wakes === wakes;
    // Every other environment's due work is claimed: what is parked beyond its share may start.
    if (slots.othersDrained) for (const environment of this.#parked.environments()) this.#unparkIn(environment);
    if (first.claimed >= limit || busy.length === 0) return first;
    const room = options.concurrency - slots.attempting - options.perWebhookConcurrency;
    if (room <= 0) return first;
    const ahead = slots.othersDrained ? this.#parked.room(slots) : 0;
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
    const slots = this.#slots;
    const parked = this.#parked;
    const proofs = this.#proofs;
    const saturated = slots.saturatedWebhooks((id) => parked.has(id));
    for (const id of this.#timed.fullWebhooks()) if (!saturated.includes(id)) saturated.push(id);
    const now = clock.now();
    for (const [id, until] of this.#deferred)
      if (until <= now) this.#deferred.delete(id);
      else if (!saturated.includes(id)) saturated.push(id);
    for (const id of saturated) this.#leftOutSince.add(id);
    const leavesOut = saturated.length > 0 || excludeEnvironments.length > 0;
    proofs.claimBegins();
    const epoch = proofs.epoch;
    if (leavesOut && proofs.proven(saturated, excludeEnvironments, now)) {
      this.#shortLook = { at: now, epoch };
      return { claimed: 0, started: 0 };
    }
    const quiet = this.#inflight.size === 0;
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
    // A paced webhook's deliveries whose start time comes later in this second wait here for it.
    const startNow: ClaimedDelivery[] = [];
    for (const c of claimed) {
      if (c.startAt !== undefined && c.startAt > now) this.#timed.add(c);
      else startNow.push(c);
    }
    if (startNow.length < claimed.length) this.#armTimed();
    const { started, giveBack } = this.#admit(startNow, now, environmentBound, ahead);
    if (giveBack.length > 0) {
      this.#void();
      await this.#release(giveBack);
    }
    if (leavesOut && claimed.length < limit) {
      this.#shortLook = { at: now, epoch };
      await this.#prove(saturated, excludeEnvironments, now, epoch);
    }
    return { claimed: claimed.length, started };
  }

  /** One try of a claim: after an outage, leases that ran out during it are left to their owners for a while (see {@link RECLAIM_GRACE_MS}). */
  async #claimDue(args: ClaimArgs): Promise<Claimed> {
    const { store, clock } = this.deps;
    if (this.#hold && clock.now() >= this.#hold.until) this.#hold = null;
    if (this.#hold) args.reclaimBefore = Math.min(this.#hold.before, args.now);
    else delete args.reclaimBefore;
    try {
      const claimed = await store.claimDue(args);
      this.#reached = args.now;
      if (this.#hold?.until === Number.POSITIVE_INFINITY) this.#hold.until = clock.now() + RECLAIM_GRACE_MS;
      return claimed;
    } catch (error) {
      this.#hold = { before: this.#hold?.before ?? this.#reached ?? args.now, until: Number.POSITIVE_INFINITY };
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
    const left = new Map(
      webhookIds.map((id) => [id, this.#slots.environmentOf(id) ?? this.#parked.environmentOf(id) ?? this.#timed.environmentOf(id)]),
    );
    const until = this.#proofs.prove(left, environments, now, next, options.pollIntervalMs, epoch);
    // A pass busy with slow attempts may see none of them end for a long time: look again when
    // the proof ends (a delivery comes due, a lease runs out, or the poll interval is up).
    if (until !== null) this.#lookAgainAt(until);
  }

  /** Each claimed delivery started (its slot taken), parked for a slot, or named to be given back (see `Slots.admit`). */
  #admit(claimed: readonly ClaimedDelivery[], now: number, environmentBound: number, ahead: boolean) {
    const slots = this.#slots;
    const giveBack: string[] = [];
    let started = 0;
    for (const d of this.deps.dispatcher.prepare(claimed, now)) {
      const { webhook } = d.claimed;
      // (Claimed while its endpoint's Retry-After was on its way to the store: it goes back after
      // that record, which writes the pace every process reads, as the parked ones do.)
      if ((this.#deferred.get(webhook.id) ?? 0) > now) {
        this.#withdraw(webhook.id, [d.claimed.delivery.id]);
        continue;
      }
      slots.observe(webhook);
      const admission = slots.admit(webhook, environmentBound, ahead);
      if (admission === 'start') {
        slots.take(webhook.id, webhook.environment);
        this.#launch(d);
        started++;
      } else if (admission === 'park' && this.#parked.park(d, slots)) {
        void d.startSigning(); // sign while it waits: its slot then covers the HTTP exchange only
      } else {
        giveBack.push(d.claimed.delivery.id);
      }
    }
    return { started, giveBack };
  }

  /** Arms the timer for the earliest timed delivery (none: disarmed). */
  #armTimed(): void {
    const at = this.#timed.earliest();
    if (at === undefined || this.#closed) this.#timedTimer.clear();
    else this.#timedTimer.arm(Math.max(0, at - this.deps.clock.now()), () => this.#startTimed());
  }

  /**
   * Timed deliveries whose start time has come start as a claim's would (fair share unless nobody
   * else has due work; parked or given back when they cannot). A running pass sees them through;
   * otherwise a pass that makes no claim of its own does (a pace's steps cost no claim).
   */
  #startTimed(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const { clock, options } = this.deps;
    const now = clock.now();
    const full = this.#timed.fullWebhooks();
    const due = this.#timed.due(now);
    // A webhook left out for what waited here is claimed for again (more of its second may be due).
    if (full.length > this.#timed.fullWebhooks().length) this.#starved = false;
    this.#armTimed();
    if (due.length === 0) return Promise.resolve();
    const slots = this.#slots;
    const bound = slots.othersDrained ? slots.hardBound() : options.perEnvironmentConcurrency;
    const { giveBack } = this.#admit(due, now, bound, false);
    if (giveBack.length > 0) this.#giveBack(giveBack);
    if (!this.#loop) return this.#kick(false);
    this.#notify?.();
    return Promise.resolve();
  }

  /** Gives back in the background (a lease that is not cleared runs out). */
  #giveBack(ids: string[]): void {
    this.#void();
    void this.#release(ids)
      .catch((error: unknown) => this.deps.onError('could not give back deliveries; their leases will expire', error))
      // A claim that ran while the release was under way (another connection) may not have
      // seen the rows come back: no proof from it stands.
      .finally(() => this.#void());
  }

  /** Deliveries of this webhook to give back once its attempt's outcome (which paces them) is recorded. */
  #withdraw(webhookId: string, ids: readonly string[]): void {
    const list = this.#withdrawn.get(webhookId);
    if (list) list.push(...ids);
    else this.#withdrawn.set(webhookId, [...ids]);
  }

  /** The outcome of an attempt of this webhook is recorded: what was withdrawn from its timed deliveries goes back, to be paced again. */
  #returnWithdrawn(webhookId: string): void {
    const ids = this.#withdrawn.get(webhookId);
    if (!ids) return;
    this.#withdrawn.delete(webhookId);
    this.#giveBack(ids);
  }

  /** Starts one delivery whose slot is taken: the slot frees when the HTTP exchange ends, the task lasts until the outcome is recorded. */
  #launch(d: Dispatch): void {
    const { id, environment } = d.claimed.webhook;
    const at = this.deps.clock.now();
    const running: Running = { webhookId: id, environment, at, overdueAt: at + this.#slots.overdueAfter(id), overdue: false };
    this.#running.add(running);
    if (running.overdueAt < this.#overdueArmedAt) this.#armOverdue(running.overdueAt);
    const { attempted, recorded } = this.deps.dispatcher.deliver(d);
    void attempted.then(
      (result) => this.#attemptEnded(d.claimed, result, running),
      () => this.#attemptEnded(d.claimed, null, running),
    );
    const task = recorded
      .then(
        (outcome) => {
          // A failure's next attempt may come due before any proof says, and a record that
          // ended an ordered delivery made the next of its subject due now: the next claim asks
          // (at the next refill, not at once: a busy engine still claims in batches), unless a
          // proof left out the webhook it became due for.
          if (!outcome.success) this.#nextAttemptRecorded();
          else if (outcome.released) this.#madeDue(id, environment);
          // The record disabled the webhook and wrote a notice: a pass runs the outbox.
          if (outcome.noticeWritten) this.wake();
          // The record wrote the pace of a Retry-After: the store holds the webhook from now on.
          if (outcome.slowDown) this.#deferred.delete(id);
          // (After the record, which wrote what the endpoint asked: a claim then paces them by it.)
          this.#returnWithdrawn(id);
        },
        () => {
          this.#nextAttemptRecorded();
          this.#returnWithdrawn(id);
        },
      )
      .finally(() => {
        this.#inflight.delete(task);
        this.#notify?.();
      });
    this.#inflight.add(task);
  }

  /** An attempt's HTTP exchange ended: its slot frees, and what is parked for it or its environment may start. */
  #attemptEnded({ webhook }: ClaimedDelivery, result: AttemptResult | null, running: Running): void {
    const { id: webhookId, environment } = webhook;
    const slots = this.#slots;
    this.#running.delete(running);
    if (this.#running.size === 0) this.#armOverdue(Number.POSITIVE_INFINITY);
    // Its endpoint asked to slow down (a Retry-After, a 429, a 410): none of its timed deliveries
    // starts at the time reserved before that.
    if (result?.deferUntil !== undefined) {
      this.#deferred.set(webhookId, Math.max(result.deferUntil, this.#deferred.get(webhookId) ?? 0));
      if (this.#deferred.size > DEFERRED_MAX) this.#deferred.delete(this.#deferred.keys().next().value!);
    }
    if (result?.slowDown) {
      // (A Retry-After: what is parked for it waits too, rather than take the slot this attempt frees.)
      const parked = result.deferUntil === undefined ? [] : this.#parked.take(webhookId).map((d) => d.claimed.delivery.id);
      const back = [...this.#timed.take(webhookId).map((c) => c.delivery.id), ...parked];
      if (back.length > 0) {
        this.#withdraw(webhookId, back);
        this.#armTimed();
      }
    }
    slots.end(webhookId, environment, result, { overdue: running.overdue, ms: this.deps.clock.now() - running.at });
    this.#unpark(webhookId);
    // A slot of this environment freed: its other webhooks' parked deliveries may start now.
    if (this.#parked.hasEnvironment(environment)) this.#unparkIn(environment);
    // (A rate-limited webhook reopens nothing unless a claim left it out meanwhile: its next
    // deliveries come due at their second, not when a slot frees, and the claim then takes them.)
    const leftOut = this.#leftOutSince.delete(webhookId);
    if ((!webhook.rateLimit || leftOut) && slots.reopened(webhookId, environment, this.#parked.has(webhookId))) this.#starved = false;
    this.#notify?.();
  }

  /** Arms the overdue timer for `at`, the earliest time an attempt under way becomes overdue. */
  #armOverdue(at: number): void {
    this.#overdueArmedAt = at;
    if (this.#closed || at === Number.POSITIVE_INFINITY) this.#overdueTimer.clear();
    else this.#overdueTimer.arm(Math.max(0, at - this.deps.clock.now()), () => this.#overdueNow());
  }

  /**
   * Attempts under way past their time are overdue (`Slots.overdue`): what they leave of their
   * environment's slots may start now, and the next claim may take more of it.
   */
  #overdueNow(): void {
    const now = this.deps.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const running of this.#running) {
      if (running.overdue || running.overdueAt === Number.POSITIVE_INFINITY) continue;
      if (running.overdueAt > now) {
        next = Math.min(next, running.overdueAt);
        continue;
      }
      running.overdue = this.#slots.overdue(running.webhookId, running.environment);
      running.overdueAt = Number.POSITIVE_INFINITY; // looked at once: the pool was full, or it moved
      if (!running.overdue) continue;
      if (this.#parked.hasEnvironment(running.environment)) this.#unparkIn(running.environment);
      this.#starved = false;
    }
    this.#armOverdue(next);
    this.#notify?.();
  }

  /** A slot of this webhook freed: start its parked deliveries as far as the bounds allow. */
  #unpark(webhookId: string): void {
    if (!this.#closed) this.#act(this.#parked.unpark(webhookId, this.#slots, this.deps.clock.now()));
  }

  /** A slot of this environment freed (or nobody else has due work): start its webhooks' parked deliveries. */
  #unparkIn(environment: string): void {
    if (!this.#closed) this.#act(this.#parked.unparkIn(environment, this.#slots, this.deps.clock.now()));
  }

  /** Starts and gives back what an unpark decided. */
  #act({ start, giveBack, shareBlocked }: Unparked): void {
    if (shareBlocked) this.#shareBlocked = true;
    for (const d of start) this.#launch(d);
    if (giveBack.length > 0) this.#giveBack(giveBack.map((d) => d.claimed.delivery.id));
  }

  /** A failure's outcome is recorded: its next attempt may come due before any proof says. Claim once more. */
  #nextAttemptRecorded(): void {
    this.#void();
    this.#starved = false;
  }

  /** A success released the next delivery of one of this webhook's subjects: due now. */
  #madeDue(webhookId: string, environment: string): void {
    if (this.#proofs.madeDue(webhookId, environment)) this.#proofTimer.clear();
    this.#starved = false;
  }

  #release(deliveryIds: string[]): Promise<void> {
    const { store, options, clock } = this.deps;
    return transient(this.#isTransient, () => store.release(deliveryIds, options.workerId, clock.now()));
  }

  /** Every delivery started has been recorded and every chore run has ended. */
  async #settled(): Promise<void> {
    await Promise.allSettled([...this.#inflight, ...this.#chores.runs]);
  }

  /** Something may have become due that no proof saw: the next claim asks the store. */
  #void(): void {
    this.#proofs.void();
    this.#proofTimer.clear();
  }

  /** Claims again at `at` (the end of the proof just made, which replaced any other) if the pass is still running then. */
  #lookAgainAt(at: number): void {
    this.#proofTimer.clear();
    if (this.#closed) return;
    this.#proofTimer.arm(Math.max(0, at - this.deps.clock.now()), () => {
      void this.#kick();
    });
  }

  /** Idle: one timer for the next due delivery or notice, at most `maxDelay` away. */
  async #arm(maxDelay = this.deps.options.pollIntervalMs): Promise<void> {
    if (this.#closed) return;
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
    if (this.#closed || this.#dirty) return;
    this.#timer.arm(delay, () => this.#kick());
  }
}
