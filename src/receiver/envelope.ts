import type { EventSource } from '../model.js';

/**
 * The claims of every webhook token, around the event's `data`. `timestamp` is the time of this
 * delivery attempt (it changes on every attempt); `event_timestamp` is when the event happened.
 *
 * @example
 * ```ts
 * type InvoicePaid = WebhookEnvelope<'billing.invoice_paid', { invoice_id: string }>;
 * ```
 */
export interface WebhookEnvelope<T extends string = string, D = Record<string, unknown>> {
  type: T;
  /** `event_…`: the same for every webhook and every attempt of this event. */
  event_id: string;
  /** ISO 8601 UTC: when the event happened. */
  event_timestamp: string;
  /** ISO 8601 UTC with milliseconds: when this attempt was signed. */
  timestamp: string;
  /** Who caused the event. Open-ended: a newer sender may add values. */
  source: EventSource | (string & {});
  data: D;
  /** The issuer (the environment's base address). */
  iss: string;
  /** Seconds since the epoch: when this attempt was signed. */
  iat: number;
}

/**
 * Event types by code, each mapped to its envelope. The built-ins are `WebhookEventMap`; a host
 * that registers its own event types extends it, and the verifier and handlers follow.
 *
 * @example
 * ```ts
 * type Events = WebhookEventMap & {
 *   'billing.invoice_paid': WebhookEnvelope<'billing.invoice_paid', { invoice_id: string }>;
 * };
 * const receive = createReceiver<Events>({
 *   verifier: createVerifier<Events>({ issuer }),
 *   on: { 'billing.invoice_paid': (event) => markPaid(event.data.invoice_id) },
 * });
 * ```
 */
export type EventMap = { [type: string]: WebhookEnvelope<string, unknown> };
