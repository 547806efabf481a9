/**
 * The public types of the engine. The words they and every comment use, one per concept, are the
 * glossary's: docs/concepts.md (the retired ones are named there, and test/structure.test.ts
 * refuses them in src/, adapters/ and the docs).
 */
import type { CatalogEntry } from './catalog/catalog.js';
import type { DashboardLinkOptions } from './dashboard-links.js';
import type {
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  EventSource,
  EventSummary,
  NoticeRecord,
  NoticeStatus,
  WebhookAuth,
  WebhookFormat,
  WebhookOrdering,
  WebhookRecord,
} from './model.js';
import type { WebhookEventMap } from './receiver/event-types.generated.js';
import type { SigningKey } from './signing/keys.js';
import type { KeyInfo, RotateOptions } from './signing/keyset.js';

export type {
  AuthorizeResult,
  DeliveryOptions,
  Logger,
  LogMeta,
  Notifier,
  TelemetryOptions,
  WebhookDisabledInfo,
  WebhooksOptions,
} from './host-options.js';

/** `data` of each built-in event type, by code (generated from the catalog's schemas). */
export type BuiltinEventData = { [K in keyof WebhookEventMap]: WebhookEventMap[K]['data'] };

/**
 * The host's own event types, code to `data` type. Empty until the host augments it, which types
 * `emit` and `webhooks.create` for the types it registers with `createWebhooks({ eventTypes })`:
 *
 * @example
 * ```ts
 * declare module 'identity-webhooks' {
 *   interface CustomEventTypes {
 *     'billing.invoice_paid': { invoice_id: string; amount: number };
 *   }
 * }
 * ```
 */
// biome-ignore lint/suspicious/noEmptyInterface: hosts augment it (declaration merging needs an interface)
export interface CustomEventTypes {}

/** Every event type `emit` accepts, code to `data`: the built-ins and the host's own. */
export type EventTypes = BuiltinEventData & CustomEventTypes;
/** An event type code (`user.created`, or one of the host's). */
export type EventType = keyof EventTypes & string;

/**
 * An event to emit: a union discriminated on `type`, each with its own `data`, so a misspelt
 * type or a wrong field is a compile error. `source` says who caused it: `admin` (someone in
 * the dashboard), `api` (a management API call) or `user` (the end user themselves).
 */
export type EmitInput = {
  [K in EventType]: {
    type: K;
    source: EventSource;
    data: EventTypes[K];
    /** When it happened (ms or Date). Default: now. */
    eventTimestamp?: number | Date;
    environment?: string;
  };
}[EventType];

/** A webhook to create (`webhooks.create`); `eventTypes` are checked against the catalog. */
export interface WebhookInput {
  name: string;
  description?: string | null;
  /** An absolute http(s) URL; must pass the guard (public addresses only, unless allowed). */
  endpoint: string;
  eventTypes: EventType[];
  environment?: string;
  // Endpoint options (docs/endpoint-options.md), each optional.
  /**
   * Custom request headers (at most 20; not ours nor HTTP's own). Credential values
   * (`authorization`, `cookie`, `*-key`, `*-token`, `*-secret`) are write-only: reads show
   * `••••••••`, which, sent back in an update, keeps the stored value. They need `secretsKey`.
   * In an update the object replaces the whole set; null clears it.
   */
  headers?: Record<string, string> | null;
  /** Attempt deadline for this webhook in milliseconds, one to thirty seconds; null: the engine's `delivery.timeoutMs`. */
  timeoutMs?: number | null;
  /** Attempts started per second at most (1-1,000), across every process; null: no limit. */
  rateLimit?: { perSecond: number } | null;
  // --- Signing formats and endpoint auth ---
  /** `jwt` (default: an RS256 JWT body) or `standard-webhooks` (JSON body, HMAC `webhook-signature`; needs `secretsKey`). */
  format?: WebhookFormat;
  /** Also sign `v1a` with an Ed25519 key of the webhook's own (standard-webhooks only); its public key is on the record. */
  asymmetric?: boolean;
  /** How the engine authenticates to the endpoint (needs `secretsKey`); null removes it. Secrets are write-only. */
  auth?: WebhookAuth | null;
  /**
   * Delivery order (docs/ordering.md). `none` (default): each delivery on its own
   * back-off, in no promised order. `per-subject`: a delivery is not attempted while an earlier
   * one of the same subject (`data.user.id` for `user.*`, …: the catalog's `subject`) to this
   * webhook is pending or held; other subjects flow. Set back to `none`, what waited goes at once.
   */
  ordering?: WebhookOrdering;
}

/** A webhook's signing secret, revealed (`webhooks.secret`, `webhooks.rotateSecret`). */
export interface WebhookSecret {
  /** `whsec_…`: what the receiver's Standard Webhooks verifier is given. */
  secret: string;
  /** The Ed25519 public key (`whpk_…`) of `v1a` signatures, or null. */
  publicKey: string | null;
  /** Until when the previous secret signs too (after a rotation), or null. */
  previousUntil: number | null;
}

export interface EmittedEvent extends EventRecord {
  /** The `webhook-id` of each delivery written. */
  deliveryIds: string[];
}

/** Every call scoped to an environment takes it here; default `'default'`. */
export type EnvironmentOption = { environment?: string };

export interface DeliveryListOptions extends EnvironmentOption {
  webhookId?: string;
  eventId?: string;
  /** One delivery by its id (its `webhook-id`). */
  deliveryId?: string;
  /** Only deliveries created at or after this time (epoch ms or a Date). */
  since?: number | Date;
  /** Only deliveries created before this time (epoch ms or a Date). */
  until?: number | Date;
  status?: DeliveryStatus;
  eventType?: string;
  /** Page size, 1–100. Default 25. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
}

export interface EventSearchOptions extends EnvironmentOption {
  /** A subject (`kp_123`, `org_acme`) or a user's email; 1–255 characters. */
  subject: string;
  /** Events per page, 1–100. Default 20. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
}

export interface EventSearchPage {
  /** Newest first, each with its deliveries (to every webhook of the environment, oldest first). */
  events: Array<EventSummary & { deliveries: DeliveryRecord[] }>;
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface DeliveryPage {
  deliveries: DeliveryRecord[];
  /** What the page's deliveries' events are about, and which are test events, by event id. */
  events: Record<string, EventSummary>;
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** The dashboard's stats: a period of a webhook's hourly counters (see "hourly counters" above). */
export type StatsRange = '24h' | '7d' | '30d';

/** Attempts in one period of a chart (an hour, six hours or a day), from the hourly counters. */
export interface ActivityPoint {
  /** The period's start (epoch ms). */
  at: number;
  succeeded: number;
  failed: number;
}

/** A webhook at a glance over the last 24 hours (`hooks.webhooks.stats`): the list's line and chart. */
export interface WebhookActivity {
  webhookId: string;
  /** Attempts in the last 24 hours (this hour and the 23 before it). */
  attempts: number;
  succeeded: number;
  failed: number;
  /** `succeeded / attempts` (0 to 1); null without attempts. */
  successRate: number | null;
  /** 24 hourly points, oldest first; the last is the current hour. */
  series: ActivityPoint[];
}

/** A webhook's chart and figures over a range (`hooks.webhooks.overview`). */
export interface WebhookOverview extends Omit<WebhookActivity, 'series'> {
  range: StatsRange;
  /** The first point's start and the last point's end (epoch ms). */
  since: number;
  until: number;
  /** Each point's length: an hour (24h), six hours (7d) or a day (30d). */
  stepMs: number;
  /** Oldest first. */
  points: ActivityPoint[];
  /** Median and 95th percentile of the attempts' durations, estimated from buckets; null without attempts. */
  medianMs: number | null;
  p95Ms: number | null;
}

/** A delivery as its receiver got it (`hooks.deliveries.message`). */
export interface DeliveryMessage {
  delivery: DeliveryRecord;
  /** The webhook's signing format as it is now, which decides the body and the headers. */
  format: 'jwt' | 'standard-webhooks';
  /**
   * The body as the receiver got it, built again from the stored event (neither tokens nor
   * requests are kept): the token's claims (JWT) or the Standard Webhooks JSON body. Its
   * `timestamp` (and `iat`) are those of the last attempt's start (the token's own were set when
   * it was signed, just before); before any attempt, of now.
   */
  payload: Record<string, unknown>;
  /**
   * The request headers the attempts send to the webhook as it is configured now (a delivery
   * keeps no copy of its request; a format or header changed since shows the new one): the
   * format's, the webhook's own, its auth's; credential values, signatures and tokens masked.
   */
  headers: Record<string, string>;
  /** Oldest first. */
  attempts: AttemptRecord[];
}

/** The in-process management functions: webhooks, events, deliveries, event types. */
export interface Management {
  webhooks: {
    create(input: WebhookInput): Promise<WebhookRecord>;
    get(id: string, options?: EnvironmentOption): Promise<WebhookRecord>;
    list(options?: EnvironmentOption): Promise<WebhookRecord[]>;
    update(id: string, patch: Partial<Omit<WebhookInput, 'environment'>>, options?: EnvironmentOption): Promise<WebhookRecord>;
    /** Deletes the webhook with its deliveries and attempts (its delivery history). Events stay. */
    delete(id: string, options?: EnvironmentOption): Promise<void>;
    disable(id: string, options?: EnvironmentOption): Promise<WebhookRecord>;
    /** Resumes held deliveries unless `resumeHeld: false` (then they fail as dropped). */
    enable(id: string, options?: EnvironmentOption & { resumeHeld?: boolean }): Promise<WebhookRecord>;
    /**
     * Queues again every `failed` delivery of the webhook whose event was emitted in
     * `[since, until)` (until: now), each with its own `webhook-id`; returns how many. Works in
     * bounded batches; safe to call twice (a delivery already queued is not queued again).
     * Refused with `ERR_WEBHOOK_DISABLED` on a disabled webhook.
     */
    recover(id: string, options: EnvironmentOption & { since: number | Date; until?: number | Date }): Promise<{ recovered: number }>;
    /**
     * "Send waiting now" (the endpoint was fixed): every pending delivery of the webhook waiting
     * for a later attempt is made due now, in bounded batches. Those in flight, and those waiting
     * behind another of their subject (ordered), are left as they are; the webhook's rate limit
     * and a `Retry-After` it was given still apply. `ERR_WEBHOOK_DISABLED` on a disabled webhook.
     */
    sendWaiting(id: string, options?: EnvironmentOption): Promise<{ sent: number }>;
    /**
     * What waits on the webhook: its pending and held deliveries, the pending ones `sendWaiting`
     * would send now (`sendable`: waiting for a later attempt, not in flight, not behind another
     * of their subject), and when it will be disabled if it keeps failing (`failingSince +
     * disableAfterMs`, at the earliest now; null when it is not failing or nothing is pending).
     */
    waiting(
      id: string,
      options?: EnvironmentOption,
    ): Promise<{ pending: number; held: number; sendable: number; disablesAt: number | null }>;
    /**
     * Sends one event of `eventType` (default: the webhook's first subscribed type; any type of
     * the catalog) to this webhook only, with the type's example data plus `test: true` (so a
     * receiver can tell it from a real one) and `source: 'admin'`. It is stored and delivered like any event. Refused with `ERR_WEBHOOK_DISABLED` when disabled.
     */
    test(id: string, options?: EnvironmentOption & { eventType?: string }): Promise<{ eventId: string; deliveryId: string }>;
    /**
     * Every webhook's activity over the last 24 hours (attempts, success rate, an hourly series),
     * from the hourly counters: one read of at most 24 rows per webhook. In `list()` order.
     */
    stats(options?: EnvironmentOption): Promise<WebhookActivity[]>;
    /** One webhook's chart over `range` (default `24h`) with its median and 95th percentile attempt durations. */
    overview(id: string, options?: EnvironmentOption & { range?: StatsRange }): Promise<WebhookOverview>;
    // --- Signing formats and endpoint auth ---
    /** The signing secret of a `standard-webhooks` webhook, in clear: for whoever may manage the webhook. */
    secret(id: string, options?: EnvironmentOption): Promise<WebhookSecret>;
    /**
     * A new signing secret; the current one keeps signing beside it (both signatures sent,
     * space-separated) for `graceMs` (default 24 hours, at most 7 days; 0: at once).
     */
    rotateSecret(id: string, options?: EnvironmentOption & { graceMs?: number }): Promise<WebhookSecret>;
    /**
     * Seals every stored secret of every environment again under the first `secretsKey` (after
     * putting a new key first), so the old key can be dropped. Returns how many webhooks changed.
     */
    resealSecrets(): Promise<{ resealed: number }>;
  };
  events: {
    get(id: string, options?: EnvironmentOption): Promise<EventRecord>;
    /**
     * What was sent about a user or an organization: the environment's events whose subject is
     * `subject` (a user's id, an organization's code: the catalog's subject) or whose user's
     * email is `subject` (any case), newest first, each with its deliveries to every webhook.
     */
    search(options: EventSearchOptions): Promise<EventSearchPage>;
  };
  deliveries: {
    /** One page of the delivery log, newest first; pass `nextCursor` back as `cursor` for the next. */
    list(filter?: DeliveryListOptions): Promise<DeliveryPage>;
    get(id: string, options?: EnvironmentOption): Promise<DeliveryRecord>;
    /** The attempt log of a delivery, oldest first. */
    attempts(id: string, options?: EnvironmentOption): Promise<AttemptRecord[]>;
    /**
     * One new attempt now, in any state, with the same `webhook-id` (the same message; receivers
     * dedupe on it) and a fresh `timestamp`; recorded as another attempt of this delivery. A
     * delivery already in flight is left to that attempt. `ERR_WEBHOOK_DISABLED` when disabled.
     */
    resend(id: string, options?: EnvironmentOption): Promise<DeliveryRecord>;
    /** The delivery as its receiver got it: the payload, the headers we sent (credentials masked), every attempt. */
    message(id: string, options?: EnvironmentOption): Promise<DeliveryMessage>;
  };
  eventTypes: { list(): CatalogEntry[] };
  /** What a receiver needs to verify an environment's deliveries: `iss` and where its keys are served. */
  verification: { get(options?: EnvironmentOption): { issuer: string; jwksUrl: string } };
}

/** The engine a host embeds. See `createWebhooks`. */
export interface Webhooks<Tx = unknown> extends Management, AsyncDisposable {
  start(): Promise<void>;
  /** The public key set document (what `/.well-known/jwks` serves). */
  jwks(): { keys: unknown[] };
  /**
   * Stores the event and a delivery per subscribed enabled webhook, in one transaction (the
   * host's own when `transaction` is given: the rows commit or roll back with the host's change).
   */
  emit(event: EmitInput, options?: { transaction?: Tx }): Promise<EmittedEvent>;
  /**
   * `(Request) => Promise<Response>`: the management API under `/api/v1` (behind `authorize`), its
   * OpenAPI document at `/api/v1/openapi.json`, and the JWKS at `/.well-known/jwks(.json)`.
   */
  handler: (request: Request) => Promise<Response>;
  /**
   * `(Request) => Promise<Response>`: the webhooks page for the host's account holders, mounted under
   * any prefix (`GET {prefix}` is the page; its assets and the management API live under
   * `{prefix}/`), behind the same `authorize`, refusing cross-site writes. See docs/dashboard.md.
   */
  dashboard: (request: Request) => Promise<Response>;
  /**
   * A single-use link into the dashboard for one environment, under `dashboard.url`: opening it
   * starts a session (a cookie scoped to the dashboard, 12 hours by default) and lands on `next`.
   * A used, expired or forged link answers 403. See docs/dashboard.md, "Links".
   *
   * @example
   * ```ts
   * const url = await hooks.dashboardLink({ environment: 'org_123', capabilities: ['read'], next: '#/catalog' });
   * ```
   */
  dashboardLink(options: DashboardLinkOptions): Promise<string>;
  /** Signing keys: rotation and what is published (public facts only). See SECURITY.md. */
  keys: {
    /** Publishes `newKey` now, signs with it after the overlap, unpublishes the old key once its tokens are stale. */
    rotate(newKey: SigningKey, options?: RotateOptions): Promise<KeyInfo>;
    list(): KeyInfo[];
  };
  /** The notice outbox, for an operator (the management API exposes nothing of it). */
  notices: {
    /** Newest first; every environment unless `environment` is given; at most `limit` (default 100, 1-1000). */
    list(filter?: { status?: NoticeStatus; environment?: string; limit?: number }): Promise<NoticeRecord[]>;
  };
  /** Looks for due work now (e.g. after committing a transaction that emitted). */
  wake(): void;
  /** Resolves when nothing is in flight and nothing is due (tests, graceful shutdown). */
  drain(): Promise<void>;
  close(): Promise<void>;
}
