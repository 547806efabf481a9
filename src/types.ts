/**
 * The public types of the engine, and the words we use for everything in it. One word per
 * concept, used in code, comments, docs and errors alike; where two words competed, the one
 * chosen is here and the retired ones are named in quotes (test/structure.test.ts refuses them
 * in src/, adapters/ and the docs).
 *
 * **Who.**
 * - **host**: the company (and its identity server) that embeds this library: it calls
 *   `createWebhooks`, mounts the handlers and runs the processes. Not a machine: a machine or
 *   an address that receives deliveries is a **server** or an **origin** (a **host name** keeps
 *   its DNS meaning, as in `allowHosts`).
 * - **environment**: the tenant boundary. Every record carries one; records of one environment
 *   are invisible to another (retired: "customer").
 * - **account holder**: the person who owns an environment's webhooks, reads their delivery log
 *   in the dashboard and gets the notices (retired: "customer"; a **user** is only the end
 *   user an event is about, `data.user`).
 * - **receiver**: the server an account holder runs behind a webhook's endpoint, and the
 *   `identity-webhooks/receiver` entry that verifies what it gets. Its peer is the **sender**
 *   (this engine).
 *
 * **What is stored.**
 * - **webhook**: an account holder's subscription: an endpoint URL and the event types it
 *   subscribes to. Id `webhook_…`. A webhook subscribes; it is never called a "subscriber"
 *   (that is only the person in Kinde's `subscriber.created` event).
 * - **event**: something that happened in the identity server (`user.created`), written once by
 *   `emit` and never changed. Id `event_…`. Its **source** says who caused it: `admin`, `api`
 *   (a management API call: Kinde's wire value) or `user`.
 * - **catalog**: the event types the engine knows (the built-ins and the host's own), each with
 *   its JSON Schema and example data; `emit` and webhook creation check against it.
 * - **delivery**: one event owed to one webhook. Its id is the `webhook-id` header value, the same
 *   on every attempt, so receivers can deduplicate. Id `msg_…`. Its stored status is `pending`,
 *   `held`, `delivered` or `failed`.
 * - **held**: ONLY that stored status: a delivery waiting while its webhook is disabled (enable
 *   resumes or drops it). Never the scheduler's in-memory queue (that is **parked**).
 * - **attempt**: one HTTP try of a delivery, with its outcome. The attempt after a failure is the
 *   **next attempt** (`next_attempt_at`).
 * - **back-off**: the durable schedule of next attempts after failures, stored per delivery
 *   (`next_attempt_at`, from `delivery/backoff.ts`); survives restarts (retired: "retry" for it).
 * - **notice**: a durable message to a webhook's account holder (today: "your webhook was
 *   disabled"), written in the transaction that disabled it and handed to the host's notifier
 *   by the **outbox** (`notices/outbox.ts`), with its own back-off.
 * - **key**: an RS256 private key; the first signs, all are published in the key set (JWKS)
 *   under the **issuer** (`iss`: the environment's base address), which receivers verify against.
 * - **resend** (one new attempt of a delivery now), **recover** (a webhook's failed deliveries
 *   queued again), **send waiting now** (a webhook's pending deliveries that wait for a later
 *   attempt made due now) and **test event** (a type's example data sent to one webhook): what
 *   an account holder does by hand, each recorded like any other attempt or event.
 * - **hourly counters**: each webhook's attempts per hour (succeeded, failed, durations in
 *   buckets), added to in the transaction that records the attempts (`stats.ts`); the
 *   dashboard's **stats** (a webhook's **activity** over the last 24 hours on the list, its
 *   **overview** over 24 hours, 7 or 30 days) read them, never the delivery log.
 * - **settled hour**: an hour that ended over an hour ago: its counters no longer change
 *   (`activity.ts`). A **pack** holds every webhook's counts of one environment's settled hour in
 *   one row, written by the **packing** chore once the hour settles (`hour-packs.ts`) and read
 *   by the list's first call instead of the hour's counters; the list reads its live hours in
 *   the same form, made from their counters as it reads them and not stored. The list's read
 *   gives them as **tables** (`HourCounts`): the packs that list the same webhooks, as one.
 * - **message**: a delivery as its receiver got it: the token's claims (the **payload**), the
 *   request headers we sent (credentials masked), and its attempts (`deliveries.message`).
 *
 * **How a delivery runs.**
 * - **claim**: a scheduler taking due deliveries for itself, in one statement. What a claim
 *   leaves out (saturated webhooks, environments at their share) decides its **claim form**:
 *   along the due index, or per webhook (`scheduler/claim-form.ts`); both give the same rows.
 * - **lease**: a claim's lifetime: `locked_by` (the process's **worker id**) holds the delivery
 *   until `locked_until`. While leased it is not due; when the lease runs out it is due again, so
 *   a delivery whose process died is taken up by another claim (`next_attempt_at` stays where it
 *   was, and a poll finds the row once the lease has run out). Engine-internal: a claim hands it
 *   over as `ClaimedDelivery.lease`; no public record carries it.
 * - **slot**: room for one HTTP exchange in this process (`scheduler/slots.ts`): `concurrency`
 *   in all. A webhook's **bound** is **earned**: one slot until an answer here proves its endpoint,
 *   one more per success up to `perWebhookConcurrency`, one again at any charged failure (a
 *   timeout included). Failing webhooks of an environment share a **probe budget**: half of its
 *   bound.
 * - **fair share**: the slots one environment may use while others have due work
 *   (`perEnvironmentConcurrency`); beyond it an environment may borrow idle slots, up to its
 *   **hard bound** (`concurrency` less the reserve).
 * - **reserve**: the last `perWebhookConcurrency` slots, kept while an environment is over its
 *   share for environments with nothing in flight here, one slot each.
 * - **parked**: engine-internal: claimed deliveries kept in this process, still leased, until a
 *   slot of their webhook or environment frees up (`scheduler/parked.ts`; retired: "held" for
 *   this queue). What is not kept is **given back** (a **give-back**: its lease released).
 * - **proof**: engine-internal: what a claim that left saturated webhooks or environments at
 *   their share out, and came back short, shows: nothing else is due until the next pending
 *   delivery comes due (or the poll interval ends), unless a wake-up, a give-back or a failed
 *   outcome voids it. While it holds, claims leaving out as much skip the store
 *   (`scheduler/proof.ts`).
 * - **wake-up**: a hint that work may be due now (`wake()`, an emit, another process's NOTIFY);
 *   a hint only: lost, it costs a poll interval, never a delivery.
 * - **chore**: background work the scheduler runs on its passes besides deliveries: the notice
 *   outbox, retention (the **purge** of finished records) and the packing of settled hours;
 *   `scheduler/chores.ts`.
 * - **dispatch**: what happens to one claimed delivery: token, attempt, outcome, notice.
 * - **token**: the RS256 JWT an attempt posts as its body. One per event: the deliveries of an
 *   event claimed within a second of its signing **carry** the same one (`delivery/dispatch.ts`);
 *   `webhook-id` is a header, so nothing in it names the webhook.
 * - **outcome**: the recorded consequence of an attempt (delivered, next attempt, failed, disable).
 *   It is **fenced** on the claim: it changes the delivery only if nobody claimed it since (same
 *   worker id and `locked_until`), however late it is recorded.
 * - **group commit**: outcomes written together, one `recordAttempts` transaction per group
 *   (`delivery/recorder.ts`); a small group gathers briefly while outcomes keep arriving.
 * - **circuit**: how a webhook's attempts are paced, derived from its record (`circuit`, never
 *   stored): `closed` while healthy (up to its earned bound, at most `perWebhookConcurrency`
 *   attempts at once per process); `half_open` while failing (`failingSince` set): one attempt at a time per process,
 *   a **probe**, until one succeeds and closes it. There is no open state: a failing webhook's
 *   deliveries keep being tried as they come due until the 72-hour disable, and a disabled
 *   webhook shows that in its `status`.
 * - **guard**: the SSRF rules: which addresses an endpoint may reach, checked at creation and on
 *   every attempt, with the checked addresses **pinned** for the connection.
 * - **endpoint options**: how a webhook's endpoint is called: custom headers (a **credential
 *   header**'s value is write-only: sealed at rest, **masked** `••••••••` on every read), its own
 *   timeout, its rate limit (docs/endpoint-options.md).
 * - **pace**: when a rate-limited or deferred webhook's next attempt may start, across every
 *   process: its row's `next_start_at`, from which a claim **reserves** start times one step
 *   apart, handed out a second (a **bucket**) at a time; a delivery whose start time is later in
 *   the claim's second is **timed**: kept, still leased, in the claiming process until then
 *   (`scheduler/timed.ts`); a **deferral** (a `Retry-After`) moves the pace later (`adapters/kysely/pace.ts`).
 * - **subject**: what an event is about, found in its `data` by its catalog entry's JSON pointer
 *   (`/user/id` for `user.*`); a webhook's **ordering** `per-subject` keeps a **queue** per
 *   subject, whose **head** is the only delivery of it that is due (docs/ordering.md).
 *
 * **The store.**
 * - **store**: the one `Store` contract the engine talks to, implemented once over Kysely
 *   (`adapters/kysely/`) for both databases.
 * - **dialect**: what differs between SQLite and PostgreSQL inside that one store
 *   (`StoreDialect`: the claim statement, locks, LISTEN/NOTIFY; retired: "flavor"). Kysely's own
 *   `Dialect` (its driver for a database) is one part of it.
 * - **transient retry**: the same database call again, in-process, after it failed for a
 *   passing reason (connection lost, lock busy); classified by each dialect
 *   (`Store.isTransient`). The only "retry" there is (besides the `Retry-After` header and the
 *   p-retry package it uses); a delivery's next attempt is never one.
 *
 * **What the host mounts.**
 * - **management**: the in-process functions on webhooks, events, deliveries and event types
 *   (`Management`, which {@link Webhooks} extends); the HTTP layer calls them by this name.
 * - **management API**: the HTTP API over them under `/api/v1`, wire-compatible with Kinde's,
 *   behind `authorize` (the only other `api` is the event source `'api'`).
 * - **dashboard**: the web page the host mounts for its account holders (`hooks.dashboard`, the
 *   `<webhooks-dashboard>` element), over the management API (retired: "portal").
 * - **dashboard link**: a single-use address into the dashboard for one environment that the host
 *   mints (`hooks.dashboardLink`); opening it starts a **dashboard session** (a cookie scoped to the
 *   dashboard, bounded in time) with a **capability**: `read` (sees everything, changes nothing) or
 *   `manage`.
 *
 * **Signing and secrets**.
 * - **format**: how a webhook's deliveries are signed: `jwt` (an RS256 JWT body) or
 *   `standard-webhooks` (a JSON body and the `webhook-signature` header).
 * - **signing secret**: a `standard-webhooks` webhook's `whsec_…` HMAC key; during a rotation's
 *   **grace** the previous one signs too.
 * - **endpoint auth**: how the engine authenticates to an endpoint (OAuth2 client credentials, mTLS).
 * - **sealed**: stored encrypted under the host's `secretsKey` (never in clear); **masked**: shown
 *   as `********` on every way out.
 *
 * **Times.** One unit per surface. The JavaScript API (records, options, `ManualClock`) uses
 * milliseconds since the Unix epoch, the Clock's unit; where a time is an argument, a `Date` is
 * accepted too (`emit`'s `eventTimestamp`, `recover`'s `since`/`until`). The HTTP API and the
 * tokens use ISO 8601 strings in UTC with milliseconds (`created_on`, `timestamp`:
 * `2026-03-01T12:00:00.000Z`). Every time comes from the injected Clock.
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
