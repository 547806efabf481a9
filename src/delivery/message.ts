import type { EventRecord } from '../model.js';
import { buildClaims, type WebhookClaims } from '../signing/token.js';
import { USER_AGENT } from './attempt.js';

/**
 * A delivery's message as its receiver got it, for the dashboard's message view
 * (`hooks.deliveries.message`): what `attempt.ts` sends, built again from stored records, since
 * neither tokens nor requests are kept.
 */

/**
 * The claims of the token: the same `buildClaims` the dispatcher signs, at `at` (the last
 * attempt's start: the token's own `timestamp` was set when it was signed, just before).
 */
export function messagePayload(event: EventRecord, issuer: string, at: number): WebhookClaims {
  return buildClaims(event, issuer, at);
}

/** What a credential header's value shows instead of itself. */
export const MASKED = '••••••••';

/**
 * The request headers of every attempt of a delivery (`runAttempt` in attempt.ts), names in lower
 * case. `extra`: a webhook's own headers (custom credential headers, when a webhook has them):
 * their names shown, their values masked, since they are secrets an account holder set once and
 * a log is read by more people than set it. A `traceparent` is sent only when the host propagates
 * trace context, and differs per attempt: it is left out.
 */
export function messageHeaders(deliveryId: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of Object.keys(extra)) headers[name.toLowerCase()] = MASKED;
  headers['content-type'] = 'application/jwt';
  headers['webhook-id'] = deliveryId;
  headers['user-agent'] = USER_AGENT;
  return headers;
}
