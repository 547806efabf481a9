/**
 * All time in the engine comes from a Clock: every timestamp written, every "now" passed into a
 * query, every timer the scheduler arms. Tests swap in {@link ManualClock} and move through 72
 * hours of back-off in milliseconds while the database sees the same "now".
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once, `ms` from now. The callback may return a promise (ManualClock awaits it). */
  setTimer(fn: () => unknown, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

/** Node's real time. Timers are unref'd: a pending timer never keeps the host process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    // setTimeout clamps to a signed 32-bit delay; longer waits re-arm in steps.
    const MAX = 2_147_483_647;
    const due = Date.now() + ms;
    const handle: SystemTimer = { id: ++systemSeq, t: undefined };
    const arm = () => {
      handle.t = setTimeout(() => (Date.now() < due ? arm() : void fn()), Math.max(0, Math.min(MAX, due - Date.now())));
      handle.t.unref?.();
    };
    arm();
    return handle;
  },
  clearTimer(handle) {
    const t = (handle as SystemTimer).t;
    if (t) clearTimeout(t);
  },
};
interface SystemTimer extends TimerHandle {
  t: NodeJS.Timeout | undefined;
}
let systemSeq = 0;

interface ManualTimer extends TimerHandle {
  at: number;
  seq: number;
  fn: () => unknown;
}

/**
 * A clock that moves only when told. `advance(ms)` walks forward timer by timer: each due timer
 * fires with `now()` equal to its due time, and its returned promise is awaited before time moves
 * on, so work scheduled by a timer (a next attempt 5 s later) fires inside the same advance.
 *
 * @example
 * ```ts
 * const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
 * const hooks = createWebhooks({ store, keys, clock });
 * await clock.advance(72 * 3600_000); // every attempt due in those 72 hours runs, in order
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers = new Set<ManualTimer>();

  constructor(start: number | Date = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.#now = typeof start === 'number' ? start : start.getTime();
    if (!Number.isFinite(this.#now)) throw new TypeError('ManualClock: start must be a finite time');
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => unknown, ms: number): TimerHandle {
    const timer: ManualTimer = { id: ++this.#seq, seq: this.#seq, at: this.#now + Math.max(0, ms), fn };
    this.#timers.add(timer);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers.delete(handle as ManualTimer);
  }

  /** How many timers are armed (a scheduler keeps at most one). */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing and awaiting every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new TypeError('ManualClock.advance: ms must be >= 0');
    const target = this.#now + ms;
    for (;;) {
      const next = this.#earliest(target);
      if (!next) break;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.at);
      await next.fn();
    }
    this.#now = target;
  }

  /** Sets the time (forward only), firing due timers like {@link advance}. */
  async set(time: number | Date): Promise<void> {
    const t = typeof time === 'number' ? time : time.getTime();
    await this.advance(Math.max(0, t - this.#now));
  }

  #earliest(limit: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.#timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
