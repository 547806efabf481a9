import type { Clock, TimerHandle } from '../clock.js';

/** One timer on the clock at a time: arming it again replaces it. */
export class OneTimer {
  #handle: TimerHandle | null = null;

  constructor(private readonly clock: Clock) {}

  /** Fires `fire` after `delay` (what it returns is handed to the clock: a `ManualClock` awaits it). */
  arm(delay: number, fire: () => unknown): void {
    this.clear();
    this.#handle = this.clock.setTimer(() => {
      this.#handle = null;
      return fire();
    }, delay);
  }

  clear(): void {
    if (this.#handle) this.clock.clearTimer(this.#handle);
    this.#handle = null;
  }
}
