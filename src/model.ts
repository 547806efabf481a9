/**
 * The records the engine stores. The words (webhook, event, delivery, attempt, lease, …) are
 * defined in the glossary (docs/concepts.md). All times are milliseconds since the Unix
 * epoch, taken from the injected Clock (the HTTP API shows them as ISO 8601: see "Times" there).
 */

export type WebhookStatus = 'enabled' | 'disabled';
export type EventSource = 'admin' | 'api' | 'user';
export type DeliveryStatus = 'pending' | 'held' | 'delivered' | 'failed';
/**
 * How a webhook's attempts are paced (see "circuit" in the glossary, docs/concepts.md): `closed`
 * while healthy (up to `delivery.perWebhookConcurrency` attempts at once per process),
 * `half_open` while failing (one attempt at a time per process, a probe, until a success).
 */
export type WebhookCircuit = 'closed' | 'half_open';

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
  /**
   * Derived from `failingSince`, never stored: `half_open` while it is set (every process sends
   * this webhook one attempt at a time until one succeeds), `closed` otherwise (up to
   * `delivery.perWebhookConcurrency` at once). A disabled webhook is attempted not at all,
   * whatever this says: `status` tells. Set on every record the management functions return
   * (see {@link withCircuit}); a Store's own records may leave it out.
   */
  circuit?: WebhookCircuit;
  // Endpoint options (docs/endpoint-options.md). Every record the store or the
  // management functions return sets them; a record built by hand may leave them out.
  /**
   * Custom request headers sent with every attempt, names as given. The values of credential
   * headers (`authorization`, `proxy-authorization`, `cookie`, `*-key`, `*-token`, `*-secret`)
   * are write-only: every read shows `••••••••` (stored sealed under `secretsKey`).
   */
  headers?: Record<string, string>;
  /** This webhook's attempt deadline in milliseconds (one to thirty seconds); null: the engine's `delivery.timeoutMs`. */
  timeoutMs?: number | null;
  /** Most attempts started per second, across every process on the database; null: no limit. */
  rateLimit?: { perSecond: number } | null;
  // --- Signing formats and endpoint auth: see src/secrets/webhook-secrets.ts ---
  /** How deliveries are signed: `jwt` (an RS256 JWT body, the default) or `standard-webhooks`. Absent: `jwt`. */
  format?: WebhookFormat;
  /**
   * The Standard Webhooks signing keys. In the store every secret here is sealed; the management
   * functions return it masked (`webhooks.secret(id)` reveals the secret). Null for `jwt`.
   */
  signing?: WebhookSigning | null;
  /** How the engine authenticates to the endpoint; secrets sealed in the store, masked on read. */
  auth?: WebhookAuth | null;
  /**
   * Ordered delivery per subject (docs/ordering.md): `none` (each delivery on its own
   * back-off) or `per-subject` (a delivery waits while an earlier one of the same subject to
   * this webhook is pending or held). Absent: `none`.
   */
  ordering?: WebhookOrdering;
}

/** A webhook's delivery order (see `WebhookRecord.ordering`). */
export type WebhookOrdering = 'none' | 'per-subject';

/** How a webhook's deliveries are signed (see `WebhookRecord.format`). */
export type WebhookFormat = 'jwt' | 'standard-webhooks';

/** A webhook's Standard Webhooks keys (secrets sealed at rest, masked on read). */
export interface WebhookSigning {
  /** The `whsec_…` secret (sealed in the store; `********` on read). */
  secret: string;
  /** The secret before the last rotation, still signing beside the new one until `previousUntil`. */
  previous: string | null;
  previousUntil: number | null;
  /**
   * Older secrets still in their grace, newest first (rotations closer together than the grace):
   * each signs beside the current one until its `until`. Absent on records written before.
   */
  retired?: Array<{ secret: string; until: number }>;
  /** The Ed25519 public key (`whpk_…`) of the `v1a` signature, published for the account holder; null without one. */
  publicKey: string | null;
  /** Its private key (`whsk_…`, sealed; `********` on read). */
  privateKey: string | null;
}

/** Endpoint auth: OAuth2 client credentials or a TLS client certificate (secrets sealed at rest, masked on read). */
export type WebhookAuth =
  | {
      type: 'oauth2_client_credentials';
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      scope?: string | null;
      audience?: string | null;
    }
  | { type: 'mtls'; certificate: string; privateKey: string; ca?: string | null };

/** The circuit a webhook's record implies: one attempt at a time while it is failing. */
export function circuitOf(webhook: Pick<WebhookRecord, 'failingSince'>): WebhookCircuit {
  return webhook.failingSince === null ? 'closed' : 'half_open';
}

/** The record with its derived fields (`circuit`), as the management functions return it. */
export function withCircuit(webhook: WebhookRecord): WebhookRecord & { circuit: WebhookCircuit } {
  return { ...webhook, circuit: circuitOf(webhook) };
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

/**
 * An event as a search by subject and the delivery log show it: what it is about (its catalog
 * subject, or null), and whether it is a test event (`data.test`), without its data.
 */
export interface EventSummary {
  id: string;
  type: string;
  source: EventSource;
  subject: string | null;
  test: boolean;
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
  lastAttemptAt: number | null;
  /** Status code or error kind of the last attempt (`200`, `500`, `timeout`). */
  lastResult: string | null;
  /** The event's type (copied from the event). */
  eventType: string;
  /** What went wrong in the last attempt, when it failed (`expected HTTP 200, got 500`); null after a success. */
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** `auth`: the endpoint's credentials could not be had (its OAuth2 token endpoint failed). */
export type AttemptErrorKind = 'timeout' | 'network' | 'dns' | 'blocked' | 'redirect' | 'status' | 'internal' | 'auth';

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

/**
 * A delivery handed to a scheduler by a claim, with what the attempt needs to run and the lease
 * the claim took. The lease is the engine's business: it lives here, never on `DeliveryRecord`.
 */
export interface ClaimedDelivery {
  delivery: DeliveryRecord;
  webhook: WebhookRecord;
  event: EventRecord;
  /** When it became due: `next_attempt_at` as the claim found it (on PostgreSQL, before the lease moved it). */
  dueAt: number;
  /** W3C traceparent stored with the event by `emit` (its `webhooks.emit` span), or null. */
  traceparent: string | null;
  /** Who holds the delivery (`workerId`) and until when (epoch ms, from the Clock). */
  lease: { workerId: string; until: number };
  /**
   * A paced webhook's reserved start time, when it is later than the claim's `now` (within a
   * second of it): the claiming process keeps the delivery until then, and its lease covers that
   * wait (adapters/kysely/pace.ts).
   */
  startAt?: number;
}

export type NoticeStatus = 'pending' | 'sent' | 'failed';

/** A notice to a webhook's account holder (today: its automatic disable), as the outbox holds it. */
export interface NoticeRecord {
  /** The same on every try of the notice: `info.noticeId` for the notifier. */
  id: string;
  environment: string;
  kind: 'webhook_disabled';
  webhookId: string;
  /** `pending` (due, or failing and waiting for its next try), `sent`, or `failed` (back-off spent). */
  status: NoticeStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  sentAt: number | null;
  createdAt: number;
  /** What the notifier is told. */
  info: { webhook: WebhookRecord; failingSince: number; disabledAt: number; lastError: string | null };
}

/**
 * Dashboard link access: a single-use link the host minted (`hooks.dashboardLink`), or
 * the session it started. Stored by the SHA-256 of its random token, never the token itself
 * (docs/decisions/031-dashboard-link-access.md).
 */
export interface DashboardGrantRecord {
  /** Hex SHA-256 of the token in the link or the session cookie. */
  id: string;
  kind: 'link' | 'session';
  environment: string;
  /** `read` (sees everything, changes nothing) or `manage`. */
  capability: 'read' | 'manage';
  /** A link's deep link (a path under the dashboard's prefix, or a `#/…` view); null on sessions. */
  next: string | null;
  expiresAt: number;
  /** When a link was opened; null until then, and on sessions. */
  usedAt: number | null;
  createdAt: number;
}
