import type { ClaimedDelivery } from '../model.js';

/** The longest a Retry-After defers a webhook's attempts. */
export const MAX_WAIT_MS = 3_600_000;
/** How long a 429 without Retry-After halves a rate-limited webhook's pace. */
export const SLOW_FOR_MS = 60_000;

/**
 * What an answer asks of the webhook's next attempts: `deferUntil` (a 429 or 503 with
 * Retry-After: none of its attempts starts before then), `slowUntil` (a 429 without one: its
 * pace is halved until then), `gone` (a 410).
 */
export interface SlowDown {
  deferUntil?: number;
  slowUntil?: number;
  gone?: boolean;
}

/**
 * A Retry-After value as a time: delay-seconds (`120`) or an HTTP date, capped at one hour from
 * `now`; null when absent, unreadable or already past.
 */
export function waitUntilOf(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  let at: number;
  if (/^\d+$/.test(text)) at = now + Math.min(Number(text) * 1000, MAX_WAIT_MS);
  else {
    const date = Date.parse(text);
    if (!/[a-z]/i.test(text) || Number.isNaN(date)) return null;
    at = date;
  }
  at = Math.min(at, now + MAX_WAIT_MS);
  return at > now ? at : null;
}

/**
 * What a failed answer asks for, and the words the attempt log shows for it (empty when nothing).
 * `disableOnGone`: the host's option, whether a 410 disables the webhook.
 */
export function slowDownOf(
  claimed: ClaimedDelivery,
  status: number,
  wait: string | undefined,
  now: number,
  disableOnGone: boolean,
): { slowDown: SlowDown | null; note: string } {
  if (status === 410 && disableOnGone) return { slowDown: { gone: true }, note: ' (410 Gone: the webhook is disabled)' };
  if (status !== 429 && status !== 503) return { slowDown: null, note: '' };
  const at = waitUntilOf(wait, now);
  if (at !== null)
    return {
      slowDown: { deferUntil: at },
      note: ` (Retry-After: this webhook's next attempts wait until ${new Date(at).toISOString()})`,
    };
  if (status === 429 && claimed.webhook.rateLimit)
    return { slowDown: { slowUntil: now + SLOW_FOR_MS }, note: ` (slow down: this webhook's pace is halved for ${SLOW_FOR_MS / 1000} s)` };
  return { slowDown: null, note: '' };
}
