/**
 * Records of the engine, and the words we use for them.
 *
 * - **environment**: the tenant boundary (a host's customer environment). Every record carries one;
 *   records of one environment are invisible to another.
 * - **webhook**: a customer's subscription: an endpoint URL and the event types it wants.
 *   Id `webhook_…`.
 * - **event**: something that happened in the identity server (`user.created`), written once by
 *   `emit` and never changed. Id `event_…`.
 * - **delivery**: one event owed to one webhook. Its id is the `webhook-id` header value, the same
 *   on every attempt, so receivers can deduplicate. Id `msg_…`.
 * - **attempt**: one HTTP try of a delivery, with its outcome.
 * - **lease**: a claim on a due delivery by one scheduler (`locked_by`) until `locked_until`. While
 *   leased, `next_attempt_at` holds the lease expiry, so a delivery whose process died becomes due
 *   again by itself.
 * - **key**: an RS256 private key; the first signs, all are published in the JWKS.
 *
 * All times are milliseconds since the Unix epoch, taken from the injected Clock.
 */

export type WebhookStatus = 'enabled' | 'disabled';
export type EventSource = 'admin' | 'api' | 'user';
export type DeliveryStatus = 'pending' | 'held' | 'delivered' | 'failed';

export interface WebhookRecord {
  id: string;
  environment: string;
  name: string;
  description: string | null;
  endpoint: string;
  eventTypes: string[];
  status: WebhookStatus;
  /** Why the webhook is disabled: `manual` or `failing` (auto-disabled after 72 hours). */
  disabledReason: string | null;
  disabledAt: number | null;
  /** Time of the first failed attempt since the last success; null while healthy. */
  failingSince: number | null;
  /** Last failure seen, for the notifier and the management API. */
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface EventRecord {
  id: string;
  environment: string;
  type: string;
  source: EventSource;
  data: Record<string, unknown>;
  /** When the thing happened (the host may pass it; default: emit time). */
  eventTimestamp: number;
  createdAt: number;
}

export interface DeliveryRecord {
  /** The `webhook-id` header value. */
  id: string;
  environment: string;
  webhookId: string;
  eventId: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number | null;
  lockedBy: string | null;
  lockedUntil: number | null;
  lastAttemptAt: number | null;
  /** Status code or error kind of the last attempt (`200`, `500`, `timeout`). */
  lastResult: string | null;
  createdAt: number;
  updatedAt: number;
}

export type AttemptErrorKind = 'timeout' | 'network' | 'dns' | 'blocked' | 'redirect' | 'status' | 'internal';

export interface AttemptRecord {
  id: string;
  deliveryId: string;
  webhookId: string;
  environment: string;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  /** Null on success. */
  errorKind: AttemptErrorKind | null;
  errorMessage: string | null;
  /** First bytes of the response body (bounded), for debugging a failing endpoint. */
  responseExcerpt: string | null;
  success: boolean;
}

/** A delivery handed to a scheduler by a claim, with what the attempt needs to run. */
export interface ClaimedDelivery {
  delivery: DeliveryRecord;
  webhook: WebhookRecord;
  event: EventRecord;
}
