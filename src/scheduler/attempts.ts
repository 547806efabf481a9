import type { Clock } from '../clock.js';
import type { AttemptResult, Delivering, Dispatch } from '../delivery/dispatch.js';
import type { ClaimedDelivery } from '../model.js';
import { Parked, type ParkedOptions, type Unparked } from './parked.js';
import { type Running, RunningAttempts } from './running.js';
import { type SlotOptions, Slots } from './slots.js';
import { SlowDowns } from './slow-downs.js';
import { Timed } from './timed.js';
import { OneTimer } from './timer.js';

/**
 * Why something may be due that the last look at the store did not see: the loop's one entrance
 * (`Scheduler.mayBeDue`) takes one of these.
 *
 * - `woken`: new work (an emit, an enable, a wake-up from another process, a notice written).
 * - `timer`: the idle timer fired, or a proof ended.
 * - `failed`: a failure's outcome is recorded: its next attempt may come due before any proof says.
 * - `released`: a success released the next delivery of one of the webhook's ordered subjects.
 * - `reopened`: a slot freed (an attempt ended or went overdue, a timed webhook emptied) for a
 *   webhook or environment a claim left out.
 * - `gave-back`: deliveries went back to the store.
 */
export type MayBeDue = 'woken' | 'timer' | 'failed' | 'released' | 'reopened' | 'gave-back';

/** What the attempts tell the loop. */
export interface AttemptsLoop {
  mayBeDue(why: MayBeDue, webhook?: { id: string; environment: string }): void;
  /** Gives these back to the store in the background. */
  giveBack(ids: string[]): void;
  /** A slot freed or an outcome was recorded: a pass waiting for one goes on. */
  notify(): void;
  /** Timed deliveries started: a running pass sees them through, or one that makes no claim. */
  timedStarted(): Promise<void>;
  closed(): boolean;
}

export interface AttemptsDeps {
  clock: Clock;
  options: SlotOptions & ParkedOptions;
  dispatcher: {
    prepare(claimed: readonly ClaimedDelivery[], now: number): Dispatch[];
    deliver(dispatch: Dispatch): Delivering;
  };
  loop: AttemptsLoop;
}

/**
 * What this process claimed, from the claim until its outcome is recorded: started (its slot
 * taken), parked for a slot, timed for its start time, or withdrawn for an endpoint that asked
 * to slow down. The decisions are the small modules' (`slots.ts`, `parked.ts`, `timed.ts`,
 * `running.ts`, `slow-downs.ts`); this starts what they allow, arms the timers of timed and
 * overdue attempts, and tells the loop what may have become due. What one delivery does (token,
 * attempt, outcome, notice) is `delivery/dispatch.ts`.
 */
export class Attempts {
  readonly slots: Slots;
  readonly parked: Parked;
  readonly timed: Timed;
  readonly #slowDowns = new SlowDowns();
  readonly #running = new RunningAttempts();
  /** Webhooks a claim left out since their last attempt here ended. */
  readonly #leftOutSince = new Set<string>();
  /** Deliveries started and not yet recorded (what drain and close wait for). */
  readonly inflight = new Set<Promise<void>>();
  /** Armed for the earliest timed delivery's start time. */
  readonly #timedTimer: OneTimer;
  /** Armed for the earliest time an attempt under way becomes overdue (`Slots.overdue`). */
  readonly #overdueTimer: OneTimer;
  /** Set when a parked delivery could not start for its environment's share alone: claim at once to learn whether it may. */
  shareBlocked = false;

  constructor(private readonly deps: AttemptsDeps) {
    this.slots = new Slots(deps.options);
    this.parked = new Parked(deps.options);
    this.timed = new Timed(deps.options);
    this.#timedTimer = new OneTimer(deps.clock);
    this.#overdueTimer = new OneTimer(deps.clock);
  }

  /** The webhooks a claim at `now` leaves out: at their bound, with a claim's worth timed, or deferred by a Retry-After. */
  leftOut(now: number): string[] {
    const saturated = this.slots.saturatedWebhooks((id) => this.parked.has(id));
    for (const id of this.timed.fullWebhooks()) if (!saturated.includes(id)) saturated.push(id);
    for (const id of this.#slowDowns.deferredAt(now)) if (!saturated.includes(id)) saturated.push(id);
    for (const id of saturated) this.#leftOutSince.add(id);
    return saturated;
  }

  environmentOf(webhookId: string): string | undefined {
    return this.slots.environmentOf(webhookId) ?? this.parked.environmentOf(webhookId) ?? this.timed.environmentOf(webhookId);
  }

  /**
   * What a claim at `now` brought: a paced webhook's deliveries whose start time comes later wait
   * here for it; the rest start, park or are named to be given back (see {@link admit}).
   */
  take(claimed: readonly ClaimedDelivery[], now: number, environmentBound: number, ahead: boolean) {
    const startNow: ClaimedDelivery[] = [];
    for (const c of claimed) {
      if (c.startAt !== undefined && c.startAt > now) this.timed.add(c);
      else startNow.push(c);
    }
    if (startNow.length < claimed.length) this.#armTimed();
    return this.#admit(startNow, now, environmentBound, ahead);
  }

  /** Nobody else has due work: what is parked beyond its environment's share may start. */
  othersDrained(): void {
    for (const environment of this.parked.environments()) this.#unparkIn(environment);
  }

  /** Closing: no timer of theirs fires any more. */
  disarm(): void {
    this.#timedTimer.clear();
    this.#overdueTimer.clear();
  }

  /** Closed and settled: what is parked, timed or withdrawn, to be given back. */
  takeAll(): string[] {
    return [
      ...this.parked.takeAll().map((d) => d.claimed.delivery.id),
      ...this.timed.takeAll().map((c) => c.delivery.id),
      ...this.#slowDowns.takeAllWithdrawn(),
    ];
  }

  /** Each claimed delivery started (its slot taken), parked for a slot, or named to be given back (see `Slots.admit`). */
  #admit(claimed: readonly ClaimedDelivery[], now: number, environmentBound: number, ahead: boolean) {
    const slots = this.slots;
    const giveBack: string[] = [];
    let started = 0;
    for (const d of this.deps.dispatcher.prepare(claimed, now)) {
      const { webhook } = d.claimed;
      // (Claimed while its endpoint's Retry-After was on its way to the store: it goes back after
      // that record, which writes the pace every process reads, as the parked ones do.)
      if (this.#slowDowns.isDeferred(webhook.id, now)) {
        this.#slowDowns.withdraw(webhook.id, [d.claimed.delivery.id]);
        continue;
      }
      slots.observe(webhook);
      const admission = slots.admit(webhook, environmentBound, ahead);
      if (admission === 'start') {
        slots.take(webhook.id, webhook.environment);
        this.#launch(d);
        started++;
      } else if (admission === 'park' && this.parked.park(d, slots)) {
        void d.startSigning(); // sign while it waits: its slot then covers the HTTP exchange only
      } else {
        giveBack.push(d.claimed.delivery.id);
      }
    }
    return { started, giveBack };
  }

  /** Arms the timer for the earliest timed delivery (none: disarmed). */
  #armTimed(): void {
    const at = this.timed.earliest();
    if (at === undefined || this.deps.loop.closed()) this.#timedTimer.clear();
    else this.#timedTimer.arm(Math.max(0, at - this.deps.clock.now()), () => this.#startTimed());
  }

  /**
   * Timed deliveries whose start time has come start as a claim's would (fair share unless nobody
   * else has due work; parked or given back when they cannot). A running pass sees them through;
   * otherwise a pass that makes no claim of its own does (a pace's steps cost no claim).
   */
  #startTimed(): Promise<void> {
    const { clock, options, loop } = this.deps;
    if (loop.closed()) return Promise.resolve();
    const now = clock.now();
    const full = this.timed.fullWebhooks();
    const due = this.timed.due(now);
    // A webhook left out for what waited here is claimed for again (more of its second may be due).
    if (full.length > this.timed.fullWebhooks().length) loop.mayBeDue('reopened');
    this.#armTimed();
    if (due.length === 0) return Promise.resolve();
    const bound = this.slots.othersDrained ? this.slots.hardBound() : options.perEnvironmentConcurrency;
    const { giveBack } = this.#admit(due, now, bound, false);
    if (giveBack.length > 0) loop.giveBack(giveBack);
    return loop.timedStarted();
  }

  /** Starts one delivery whose slot is taken: the slot frees when the HTTP exchange ends, the task lasts until the outcome is recorded. */
  #launch(d: Dispatch): void {
    const { loop, clock } = this.deps;
    const { webhook } = d.claimed;
    const at = clock.now();
    const running: Running = {
      webhookId: webhook.id,
      environment: webhook.environment,
      at,
      overdueAt: at + this.slots.overdueAfter(webhook.id),
      overdue: false,
    };
    if (this.#running.add(running)) this.#armOverdue(running.overdueAt);
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
          if (!outcome.success) loop.mayBeDue('failed');
          else if (outcome.released) loop.mayBeDue('released', webhook);
          // The record disabled the webhook and wrote a notice: a pass runs the outbox.
          if (outcome.noticeWritten) loop.mayBeDue('woken');
          // The record wrote the pace of a Retry-After: the store holds the webhook from now on.
          if (outcome.slowDown) this.#slowDowns.paced(webhook.id);
          // (After the record, which wrote what the endpoint asked: a claim then paces them by it.)
          this.#returnWithdrawn(webhook.id);
        },
        () => {
          loop.mayBeDue('failed');
          this.#returnWithdrawn(webhook.id);
        },
      )
      .finally(() => {
        this.inflight.delete(task);
        loop.notify();
      });
    this.inflight.add(task);
  }

  /** The outcome of an attempt of this webhook is recorded: what was withdrawn from its timed deliveries goes back, to be paced again. */
  #returnWithdrawn(webhookId: string): void {
    const ids = this.#slowDowns.takeWithdrawn(webhookId);
    if (ids.length > 0) this.deps.loop.giveBack(ids);
  }

  /** An attempt's HTTP exchange ended: its slot frees, and what is parked for it or its environment may start. */
  #attemptEnded({ webhook }: ClaimedDelivery, result: AttemptResult | null, running: Running): void {
    const { id: webhookId, environment } = webhook;
    const slots = this.slots;
    if (this.#running.end(running)) this.#armOverdue(Number.POSITIVE_INFINITY);
    // Its endpoint asked to slow down (a Retry-After, a 429, a 410): none of its timed deliveries
    // starts at the time reserved before that.
    if (result?.deferUntil !== undefined) this.#slowDowns.defer(webhookId, result.deferUntil);
    if (result?.slowDown) {
      // (A Retry-After: what is parked for it waits too, rather than take the slot this attempt frees.)
      const parked = result.deferUntil === undefined ? [] : this.parked.take(webhookId).map((d) => d.claimed.delivery.id);
      const back = [...this.timed.take(webhookId).map((c) => c.delivery.id), ...parked];
      if (back.length > 0) {
        this.#slowDowns.withdraw(webhookId, back);
        this.#armTimed();
      }
    }
    slots.end(webhookId, environment, result, { overdue: running.overdue, ms: this.deps.clock.now() - running.at });
    if (!this.deps.loop.closed()) this.#act(this.parked.unpark(webhookId, slots, this.deps.clock.now()));
    // A slot of this environment freed: its other webhooks' parked deliveries may start now.
    if (this.parked.hasEnvironment(environment)) this.#unparkIn(environment);
    // (A rate-limited webhook reopens nothing unless a claim left it out meanwhile: its next
    // deliveries come due at their second, not when a slot frees, and the claim then takes them.)
    const leftOut = this.#leftOutSince.delete(webhookId);
    if ((!webhook.rateLimit || leftOut) && slots.reopened(webhookId, environment, this.parked.has(webhookId)))
      this.deps.loop.mayBeDue('reopened');
    this.deps.loop.notify();
  }

  /** Arms the overdue timer for `at`, the earliest time an attempt under way becomes overdue. */
  #armOverdue(at: number): void {
    this.#running.armedAt = at;
    if (this.deps.loop.closed() || at === Number.POSITIVE_INFINITY) this.#overdueTimer.clear();
    else this.#overdueTimer.arm(Math.max(0, at - this.deps.clock.now()), () => this.#overdueNow());
  }

  /**
   * Attempts under way past their time are overdue (`Slots.overdue`): what they leave of their
   * environment's slots may start now, and the next claim may take more of it.
   */
  #overdueNow(): void {
    const next = this.#running.overdueNow(this.deps.clock.now(), (running) => {
      if (!this.slots.overdue(running.webhookId, running.environment)) return false;
      if (this.parked.hasEnvironment(running.environment)) this.#unparkIn(running.environment);
      this.deps.loop.mayBeDue('reopened');
      return true;
    });
    this.#armOverdue(next);
    this.deps.loop.notify();
  }

  /** A slot of this environment freed (or nobody else has due work): start its webhooks' parked deliveries. */
  #unparkIn(environment: string): void {
    if (!this.deps.loop.closed()) this.#act(this.parked.unparkIn(environment, this.slots, this.deps.clock.now()));
  }

  /** Starts and gives back what an unpark decided. */
  #act({ start, giveBack, shareBlocked }: Unparked): void {
    if (shareBlocked) this.shareBlocked = true;
    for (const d of start) this.#launch(d);
    if (giveBack.length > 0) this.deps.loop.giveBack(giveBack.map((d) => d.claimed.delivery.id));
  }
}
