/**
 * The public types of the engine, and the words we use for everything in it. One word per
 * concept, used in code, comments, docs and errors alike:
 *
 * - **environment**: the tenant boundary (a host's customer environment). Every record carries
 *   one; records of one environment are invisible to another.
 * - **webhook**: a customer's subscription: an endpoint URL and the event types it wants.
 *   Id `webhook_…`.
 * - **event**: something that happened in the identity server (`user.created`), written once by
 *   `emit` and never changed. Id `event_…`.
 * - **delivery**: one event owed to one webhook. Its id is the `webhook-id` header value, the same
 *   on every attempt, so receivers can deduplicate. Id `msg_…`.
 * - **attempt**: one HTTP try of a delivery, with its outcome.
 * - **claim**: a scheduler taking due deliveries for itself, in one statement.
 * - **lease**: a claim's lifetime: `locked_by` holds the delivery until `locked_until`. While
 *   leased it is not due; when the lease runs out it is due again, so a delivery whose process
 *   died is taken up by another claim (`next_attempt_at` stays where it was, and a poll finds
 *   the row once the lease has run out). Engine-internal: a claim hands it over as
 *   `ClaimedDelivery.lease`; no public record carries it.
 * - **proof**: engine-internal: what a claim that left saturated webhooks or customers at their
 *   share out, and came back short, shows: nothing else is due until the next pending delivery
 *   comes due (or the poll interval ends), unless a wake-up, a give-back or a failed outcome
 *   voids it. While it holds, claims leaving out as much skip the store.
 * - **dispatch**: what happens to one claimed delivery: token, attempt, outcome, notice.
 * - **token**: the RS256 JWT an attempt posts as its body. One per event: the deliveries of an
 *   event claimed within a second of its signing carry the same one (`delivery/dispatch.ts`);
 *   `webhook-id` is a header, so nothing in it names the webhook.
 * - **outcome**: the recorded consequence of an attempt (delivered, next try, failed, disable).
 * - **group commit**: outcomes written together, one `recordAttempts` transaction per group
 *   (`delivery/recorder.ts`); a small group gathers for up to 2 ms while outcomes keep arriving.
 * - **back-off**: the durable schedule of attempts after failures, stored per delivery
 *   (`next_attempt_at`); survives restarts. Never called "retry".
 * - **circuit**: how a webhook's attempts are paced, derived from its record (`circuit`, never
 *   stored): `closed` while healthy (up to `perEndpointConcurrency` attempts at once per
 *   process); `half_open` while failing (`failingSince` set): one attempt at a time per process,
 *   a probe, until one succeeds and closes it. There is no open state: a failing webhook's
 *   deliveries keep being tried as they come due until the 72-hour disable, and a disabled
 *   webhook shows that in its `status`.
 * - **transient retry**: an in-process retry of a database call that failed for a passing reason
 *   (connection lost, lock busy). Classified by each store adapter (`Store.isTransient`).
 * - **guard**: the SSRF rules: which addresses an endpoint may reach, checked at creation and on
 *   every attempt, with the checked addresses pinned for the connection.
 * - **notice**: a message to a webhook's account holder (today: "your webhook was disabled").
 * - **key**: an RS256 private key; the first signs, all are published in the key set (JWKS).
 *
 * **Times.** One unit per surface. The JavaScript API (records, options, `ManualClock`) uses
 * milliseconds since the Unix epoch, the Clock's unit; where a time is an argument, a `Date` is
 * accepted too (`emit`'s `eventTimestamp`, `recover`'s `since`/`until`). The HTTP API and the
 * tokens use ISO 8601 strings in UTC with milliseconds (`created_on`, `timestamp`:
 * `2026-03-01T12:00:00.000Z`). Every time comes from the injected Clock.
 */
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import type { CatalogEntry, EventTypeDefinition } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import type { GuardOptions, Resolver } from './delivery/guard/guard.js';
import type { Transport } from './delivery/transport.js';
import type {
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  EventSource,
  NoticeRecord,
  NoticeStatus,
  WebhookRecord,
} from './model.js';
import type { BackoffOptions } from './scheduler/backoff.js';
import type { SigningKey } from './signing/keys.js';
import type { KeyInfo, RotateOptions } from './signing/keyset.js';
import type { Store } from './store.js';
import type { WebhookEventMap } from './receiver/event-types.generated.js';

export interface WebhooksOptions<Tx = unknown> {
  store: Store<Tx>;
  /** Private RS256 JWKs (2048+ bits, each with a kid). The first signs; all are published. */
  keys: SigningKey[];
  /** `iss` of every token: the environment's base address (where `/.well-known/jwks` is served). */
  issuer: string | ((environment: string) => string);
  transport?: Transport;
  clock?: Clock;
  limits?: {
    /** Most webhooks per environment (a number, or per environment, e.g. from the plan). */
    maxWebhooks?: number | ((environment: string) => number | null | undefined);
    /** Largest JSON-encoded event `data`, in bytes. Default 256 KiB. */
    maxPayloadBytes?: number;
  };
  notifier?: Notifier;
  /** Allow endpoints on loopback and private networks (the guard's exception). Development and tests only. */
  allowPrivateNetworks?: GuardOptions['allowPrivateNetworks'];
  /**
   * Exceptions to the guard (see SECURITY.md): exact host names, IP addresses or CIDR blocks of
   * receivers you run yourself on a private network.
   */
  allowHosts?: string[];
  /** Name resolution for the guard. Default: the system resolver (dns.lookup). */
  resolver?: Resolver;
  /** The host's own event types, beside the built-ins. */
  eventTypes?: EventTypeDefinition[];
  /** The durable back-off schedule of attempts after a failure. */
  backoff?: BackoffOptions;
  /** @deprecated Old name of `backoff`. */
  retry?: BackoffOptions;
  /** A webhook failing with no success for this long is disabled. Default 72 hours. */
  disableAfterMs?: number;
  /**
   * How long finished records are kept: delivered and failed deliveries with their attempts,
   * events with no delivery left, sent notices. Default `{ days: 30 }`; `false` keeps everything.
   * Pending deliveries are never deleted.
   */
  retention?: { days: number } | false;
  delivery?: DeliveryOptions;
  /** Where warnings and errors go, with the same structured fields on each (see {@link Logger}). */
  logger?: Logger;
  /**
   * OpenTelemetry metrics and traces (README "Observability"). Default: the global providers,
   * i.e. the host's SDK when it registered one, a no-op otherwise.
   */
  telemetry?: TelemetryOptions;
  /**
   * Authorizes a management API request: returns the caller's environment, or null to refuse
   * (403). Without it every management route answers 403 (fail closed). The JWKS is public.
   */
  authorize?: (request: Request) => AuthorizeResult | Promise<AuthorizeResult>;
  /** Names this process in leases. Default host:pid:random. */
  workerId?: string;
  dashboard?: {
    /**
     * Origins besides the request's own that may change webhooks through the dashboard, e.g.
     * `https://auth.example.com` behind a proxy that terminates TLS (the request then arrives as
     * `http://…`). Every other cross-site write is refused with 403.
     */
    allowedOrigins?: string[];
  };
}

/** How this process delivers: deadlines, bounds on attempts in flight, claims and leases. */
export interface DeliveryOptions {
  /** Per-attempt deadline. Default 15 s. */
  timeoutMs?: number;
  /** Attempts in flight per process. Default 64. */
  concurrency?: number;
  /** Attempts in flight per webhook per process. Default 8 (one while the webhook is failing). */
  perEndpointConcurrency?: number;
  /**
   * A customer's (environment's) fair share of this process's attempts in flight. Default: a
   * quarter of `concurrency`, at least twice `perEndpointConcurrency`. Beyond it an environment may use
   * idle slots, but never the last `perEndpointConcurrency` ones, kept for anyone else's new work.
   */
  perEnvironmentConcurrency?: number;
  /** Most deliveries taken by one claim. Default 64. */
  batchSize?: number;
  /** How long a claim is ours. Default timeoutMs + 30 s. */
  leaseMs?: number;
  /** Longest sleep between looks at the store. Default 1000 ms. */
  pollIntervalMs?: number;
}

export type AuthorizeResult = { environment: string } | null | undefined;

export interface Notifier {
  /** Called once per automatic disable; email the account holder from here. */
  webhookDisabled(info: WebhookDisabledInfo): void | Promise<void>;
}

export interface WebhookDisabledInfo {
  /**
   * Stable id of this notice, the same on every retry of it: use it to deduplicate your own side
   * effects (the SMTP notifier derives the email's Message-ID from it).
   */
  noticeId: string;
  webhook: WebhookRecord;
  environment: string;
  reason: 'failing';
  /** When the failures began. */
  failingSince: number;
  disabledAt: number;
  lastError: string | null;
}

/**
 * Where warnings and errors go. Default: the console (`console.warn`, `console.error`).
 *
 * `message` is a sentence for people; `meta` carries the same fields on every call, for
 * machines: `errorKind` (a short stable code to filter and alert on: `ERR_STORE`, `SQLITE_BUSY`,
 * PostgreSQL's `57P01`, `ERR_NO_AUTHORIZE`, or an error's class name), `error` (the error's
 * message with its cause) when there is one, and the records it concerns: `webhookId`,
 * `deliveryId`, `noticeId`. Never an event's data, a token, a response body or key material.
 *
 * Any logger fits in two lines; pino takes the fields first:
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * const log = pino().child({ component: 'identity-webhooks' });
 * const hooks = createWebhooks({
 *   ...options,
 *   logger: { warn: (message, meta) => log.warn(meta, message), error: (message, meta) => log.error(meta, message) },
 * });
 * ```
 */
export interface Logger {
  warn(message: string, meta?: LogMeta): void;
  error(message: string, meta?: LogMeta): void;
}

/** The structured fields of a logged warning or error (see {@link Logger}). */
export interface LogMeta extends Record<string, unknown> {
  errorKind?: string;
  error?: string;
  webhookId?: string;
  deliveryId?: string;
  noticeId?: string;
}

/**
 * OpenTelemetry, through the API only (`@opentelemetry/api`, a peer dependency): the engine's
 * metrics and spans go to these providers, or to the global ones the host's SDK registered.
 * Register the SDK before `createWebhooks`: meters are taken once, there.
 */
export interface TelemetryOptions {
  /** Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
  /** Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /**
   * Send a W3C `traceparent` header with each attempt (the `webhooks.deliver` span's context), so
   * a receiver that traces joins the emitting request's trace. Default false: it tells every
   * receiver your trace ids.
   */
  propagateTraceContext?: boolean;
}

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
  status?: DeliveryStatus;
  eventType?: string;
  /** Page size, 1–100. Default 25. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
}

export interface DeliveryPage {
  deliveries: DeliveryRecord[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
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
     * Sends one event of `eventType` (default: the webhook's first subscribed type; any type of
     * the catalog) to this webhook only, with the type's example data plus `test: true` (so a
     * receiver can tell it from a real one) and `source: 'admin'`. It is stored and delivered like any event. Refused with `ERR_WEBHOOK_DISABLED` when disabled.
     */
    test(id: string, options?: EnvironmentOption & { eventType?: string }): Promise<{ eventId: string; deliveryId: string }>;
  };
  events: { get(id: string, options?: EnvironmentOption): Promise<EventRecord> };
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
  };
  eventTypes: { list(): CatalogEntry[] };
}

/** What the HTTP layer needs of the engine: the management functions and the public key set. */
export interface HttpApi extends Management {
  /** The public key set document. */
  jwks(): { keys: unknown[] };
}

/** The engine a host embeds. See `createWebhooks`. */
export interface Webhooks<Tx = unknown> extends HttpApi, AsyncDisposable {
  start(): Promise<void>;
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
   * `(Request) => Promise<Response>`: the webhooks page for the host's customers, mounted under
   * any prefix (`GET {prefix}` is the page; its assets and the management API live under
   * `{prefix}/`), behind the same `authorize`, refusing cross-site writes. See README "Dashboard".
   */
  dashboard: (request: Request) => Promise<Response>;
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
