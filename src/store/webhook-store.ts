import type {
  AttemptRecord,
  DashboardGrantRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  EventSummary,
  WebhookAuth,
  WebhookFormat,
  WebhookOrdering,
  WebhookRecord,
  WebhookSigning,
} from '../model.js';
import type { StoreErrors } from './store-errors.js';

/**
 * What the management functions and the dashboard read and write: webhooks, the log (events,
 * deliveries, attempts; resend, recover, send what waits; search), and the dashboard's links.
 * Methods scoped to an environment never return or change another environment's rows.
 */
export interface WebhookStore extends StoreErrors {
  /** Inserts a webhook unless the environment already has `maxWebhooks` (atomically). */
  createWebhook(record: WebhookRecord, options: { maxWebhooks: number | null }): Promise<void>;
  getWebhook(environment: string, id: string): Promise<WebhookRecord | null>;
  /** Oldest first. */
  listWebhooks(environment: string): Promise<WebhookRecord[]>;
  /** The ids of the environment's webhooks, in `listWebhooks`' order (the list's stats need no more). */
  listWebhookIds(environment: string): Promise<string[]>;
  /**
   * Applies the patch; returns the new record, or null when there is no such webhook (or, with
   * `patch.expect`, when its sealed columns have changed since they were read).
   */
  updateWebhook(environment: string, id: string, patch: WebhookPatch, now: number): Promise<WebhookRecord | null>;
  /** Deletes the webhook with its deliveries and attempts. Events stay. */
  deleteWebhook(environment: string, id: string): Promise<boolean>;
  /** Disables and holds its pending deliveries. Null when not found. */
  disableWebhook(environment: string, id: string, reason: string, now: number): Promise<WebhookRecord | null>;
  /**
   * Enables, clears `failing_since`, and either resumes held deliveries (due `now`) or fails them.
   * Null when not found.
   */
  enableWebhook(environment: string, id: string, now: number, resumeHeld: boolean): Promise<WebhookRecord | null>;
  /**
   * Signing formats and endpoint auth: the webhooks of every environment that hold a
   * sealed secret (`signing` or `auth` set, or a sealed credential header), in id order after
   * `after`, at most `limit`: the pages `webhooks.resealSecrets()` walks.
   */
  listWebhooksWithSecrets(after: string | null, limit: number): Promise<WebhookRecord[]>;
  // (Idempotent by event id: inserting an event already stored writes nothing and returns its deliveries.)
  getEvent(environment: string, id: string): Promise<EventRecord | null>;
  /**
   * One page of deliveries, newest first (`created_at`, then id, descending), after the cursor
   * when given: keyset pagination, stable while new deliveries arrive. `next` is the cursor of
   * the following page, null on the last.
   */
  listDeliveries(environment: string, filter: DeliveryFilter): Promise<{ deliveries: DeliveryRecord[]; next: DeliveryCursor | null }>;
  getDelivery(environment: string, id: string): Promise<DeliveryRecord | null>;
  /** Oldest first. */
  listAttempts(environment: string, deliveryId: string): Promise<AttemptRecord[]>;
  /**
   * Makes a delivery in any state due `now` again, with its id (its `webhook-id`) unchanged. A
   * delivery in flight under a live lease is left alone (its attempt is the one asked for).
   * Null when not found; throws WebhookDisabledError when its webhook is disabled.
   */
  resendDelivery(environment: string, id: string, now: number): Promise<DeliveryRecord | null>;
  /**
   * One bounded batch of a recover: up to `limit` `failed` deliveries of the webhook created in
   * `[since, until)`, after `after` (ascending), made due `now`. Only rows still `failed` change,
   * so concurrent recovers queue each delivery once. Null when the webhook is not found; throws
   * WebhookDisabledError when it is disabled. `last` is where the next batch starts (null: done).
   */
  recoverFailed(
    environment: string,
    webhookId: string,
    args: { since: number; until: number; now: number; limit: number; after: DeliveryCursor | null },
  ): Promise<{ recovered: number; last: DeliveryCursor | null } | null>;
  /**
   * One bounded batch of "send waiting now": up to `limit` of the webhook's pending deliveries
   * waiting for a later attempt (not in flight, not waiting behind another of their subject, last
   * attempted before `now`) made due `now`, soonest first; made due, they do not match the next
   * batch. `more`: a full batch was read. Null when the webhook is not found; throws
   * WebhookDisabledError when it is disabled.
   */
  sendWaiting(
    environment: string,
    webhookId: string,
    args: { now: number; limit: number },
  ): Promise<{ sent: number; more: boolean } | null>;
  /**
   * How many of the webhook's deliveries are pending and held, and how many pending ones
   * `sendWaiting` would take at `now`; null when the webhook is not found.
   */
  countWaiting(environment: string, webhookId: string, now: number): Promise<{ pending: number; held: number; sendable: number } | null>;
  /**
   * The environment's events about `key`, newest first: those whose subject is `key`, or whose
   * user's email is `key` (compared lowercased). Up to `limit` of them, created before `before`
   * (exclusive, by time then id), with every delivery of each, to every webhook. By an index of
   * (environment, key, time): the cost does not grow with the environment's other events.
   */
  searchEvents(
    environment: string,
    args: { key: string; limit: number; before: EventCursor | null },
  ): Promise<{ events: EventSummary[]; deliveries: DeliveryRecord[] }>;
  /** What these events of the environment are about, and whether each is a test event: for the log's rows. */
  summarizeEvents(environment: string, ids: readonly string[]): Promise<EventSummary[]>;
  // Dashboard link access (migration 20). Optional: a store without them cannot mint
  // links (`hooks.dashboardLink` throws), and the dashboard then knows only the host's `authorize`.
  /** Stores a minted link; also deletes up to 100 grants that expired before `now`. */
  insertDashboardGrant?(grant: DashboardGrantRecord, now: number): Promise<void>;
  /**
   * In one transaction: marks the link `linkId` used if it is unused and unexpired at `now`, and
   * stores `session` (environment and capability copied from the link). Null when the link is
   * unknown, used or expired: nothing is written then.
   */
  redeemDashboardLink?(
    linkId: string,
    session: Pick<DashboardGrantRecord, 'id' | 'expiresAt'>,
    now: number,
  ): Promise<DashboardGrantRecord | null>;
  /** The session `id` when it exists and has not expired at `now`. */
  getDashboardSession?(id: string, now: number): Promise<DashboardGrantRecord | null>;
}

export interface WebhookPatch {
  name?: string;
  description?: string | null;
  endpoint?: string;
  eventTypes?: string[];
  // Endpoint options: headers as stored (credential values sealed), replacing the whole set.
  headers?: Record<string, string>;
  timeoutMs?: number | null;
  rateLimit?: { perSecond: number } | null;
  // Signing formats and endpoint auth: secrets already sealed by the caller.
  format?: WebhookFormat;
  signing?: WebhookSigning | null;
  auth?: WebhookAuth | null;
  /**
   * Apply the patch only while the webhook's sealed columns are still as the caller read them
   * (else {@link Store.updateWebhook} answers null, and the caller reads again): a rotation, a
   * re-seal and an update that keeps masked values never overwrite one another's secrets.
   */
  expect?: Pick<WebhookRecord, 'signing' | 'auth' | 'headers'>;
  /** Ordered delivery per subject. Set to `none`, what waited behind an earlier delivery becomes due. */
  ordering?: WebhookOrdering;
}

/** A position in a search by subject: the last event of a page. */
export interface EventCursor {
  createdAt: number;
  id: string;
}

/** A position in the delivery log: the last row of a page. */
export interface DeliveryCursor {
  createdAt: number;
  id: string;
}

export interface DeliveryFilter {
  webhookId?: string;
  eventId?: string;
  /** One delivery by its id (its `webhook-id`): a page of it or of nothing. */
  deliveryId?: string;
  /** Created at or after (epoch ms). */
  since?: number;
  /** Created before (epoch ms). */
  until?: number;
  status?: DeliveryStatus;
  eventType?: string;
  /** Page size. Default 25. */
  limit?: number;
  /** Start after this position (the `next` of the previous page). */
  after?: DeliveryCursor | null;
}
