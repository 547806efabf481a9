import { isCredentialHeader } from '../endpoint-options.js';
import type { EventRecord, WebhookRecord } from '../model.js';
import { standardBody } from '../signing/standard-webhooks.js';
import { buildClaims } from '../signing/token.js';
import { USER_AGENT } from './attempt.js';

/**
 * A delivery's message as its receiver got it, for the dashboard's message view
 * (`hooks.deliveries.message`): what `attempt.ts` sends, built again from stored records, since
 * neither tokens nor requests are kept.
 */

/**
 * The body as the receiver got it: the token's claims (JWT, the same `buildClaims` the dispatcher
 * signs) or the Standard Webhooks JSON body, at `at` (the last attempt's start: the token's own
 * `timestamp` was set when it was signed, just before).
 */
export function messagePayload(event: EventRecord, issuer: string, at: number, webhook?: WebhookRecord): Record<string, unknown> {
  if (webhook?.format === 'standard-webhooks') return JSON.parse(standardBody(event, at)) as Record<string, unknown>;
  return buildClaims(event, issuer, at) as unknown as Record<string, unknown>;
}

/** What a credential header's value shows instead of itself. */
export const MASKED = '••••••••';

/**
 * The request headers of a delivery's attempts as `runAttempt` (attempt.ts) sends them to
 * `webhook`, names in lower case: the format's, ours, the webhook's own (a credential's value
 * masked, since a log is read by more people than set it), and its auth's. Per-attempt values
 * (`webhook-timestamp` of the last attempt, a signature, a token) are shown as their attempt made
 * them where known, masked where secret. A `traceparent` is sent only when the host propagates
 * trace context, and differs per attempt: it is left out.
 */
export function messageHeaders(deliveryId: string, webhook?: WebhookRecord, at?: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const standard = webhook?.format === 'standard-webhooks';
  for (const [name, value] of Object.entries(webhook?.headers ?? {})) {
    headers[name.toLowerCase()] = isCredentialHeader(name) ? MASKED : value;
  }
  headers['content-type'] = standard ? 'application/json' : 'application/jwt';
  headers['webhook-id'] = deliveryId;
  headers['user-agent'] = USER_AGENT;
  if (standard) {
    if (at !== undefined) headers['webhook-timestamp'] = String(Math.floor(at / 1000));
    headers['webhook-signature'] = `v1,${MASKED}`;
  }
  if (webhook?.auth?.type === 'oauth2_client_credentials') headers.authorization = `Bearer ${MASKED}`;
  return headers;
}
