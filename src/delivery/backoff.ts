/**
 * The durable back-off schedule: after the Nth failed attempt the next one is due
 * `schedule[N-1]` later (± jitter). The resulting time is stored on the delivery, so a restart
 * loses nothing. After the last entry the delivery fails.
 *
 * The default keeps trying for about 3.6 days, past the 72-hour auto-disable, so an endpoint dead
 * from its first event is disabled even if only one event was ever emitted.
 */
export const DEFAULT_BACKOFF_SCHEDULE: readonly number[] = [
  5_000, // 5 s
  60_000, // 1 min
  5 * 60_000,
  30 * 60_000,
  3600_000, // 1 h
  2 * 3600_000,
  4 * 3600_000,
  8 * 3600_000,
  12 * 3600_000, // then every 12 h: attempts at ~27.6 h, 39.6 h, 51.6 h, 63.6 h, 75.6 h, 87.6 h
  12 * 3600_000,
  12 * 3600_000,
  12 * 3600_000,
  12 * 3600_000,
  12 * 3600_000,
];

export interface BackoffOptions {
  /** Delays in ms after the 1st, 2nd, ... failed attempt. */
  schedule?: readonly number[];
  /** Fraction of each delay added or removed at random (0.1 = ±10%). Default 0.1. */
  jitter?: number;
}

export class Backoff {
  readonly schedule: readonly number[];
  readonly jitter: number;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
    name = 'backoff',
  ) {
    const schedule = options.schedule ?? DEFAULT_BACKOFF_SCHEDULE;
    if (!Array.isArray(schedule) || schedule.some((d) => !Number.isFinite(d) || d < 0)) {
      throw new TypeError(`createWebhooks: ${name}.schedule must be an array of non-negative millisecond delays`);
    }
    const jitter = options.jitter ?? 0.1;
    if (!(jitter >= 0 && jitter < 1)) throw new TypeError(`createWebhooks: ${name}.jitter must be in [0, 1)`);
    this.schedule = Object.freeze([...schedule]);
    this.jitter = jitter;
  }

  /** When to try again after `failedAttempts` failures, or null when the schedule is spent. */
  nextAttemptAt(failedAttempts: number, now: number): number | null {
    const base = this.schedule[failedAttempts - 1];
    if (base === undefined) return null;
    const spread = base * this.jitter * (this.random() * 2 - 1);
    return now + Math.max(0, Math.round(base + spread));
  }
}
