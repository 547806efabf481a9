/**
 * What the host hands the engine: `createWebhooks`'s options and the hooks it calls back (the
 * notifier, the logger, telemetry). Re-exported by `types.ts`.
 */
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import type { EventTypeDefinition } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import type { DashboardTheme } from './dashboard/look.js';
import type { BackoffOptions } from './delivery/backoff.js';
import type { GuardOptions, Resolver } from './delivery/guard/guard.js';
import type { Transport } from './delivery/transport.js';
import type { WebhookRecord } from './model.js';
import type { SecretsKeyInput } from './secrets/seal.js';
import type { SigningKey } from './signing/keys.js';
import type { Store } from './store.js';

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
  /**
   * The keys secrets are sealed under at rest (AES-256-GCM): credential header values, signing
   * secrets, endpoint auth. One 32-byte key, or several: the first seals, all open, so a key can
   * be rotated (see docs/security.md). Without it, a webhook that needs a secret is refused with
   * `ERR_SECRETS_KEY_REQUIRED`.
   */
  secretsKey?: SecretsKeyInput | SecretsKeyInput[];
  /** Name resolution for the guard. Default: the system resolver (dns.lookup). */
  resolver?: Resolver;
  /** The host's own event types, beside the built-ins. */
  eventTypes?: EventTypeDefinition[];
  /** The durable back-off schedule of attempts after a failure. */
  backoff?: BackoffOptions;
  /** A webhook failing with no success for this long is disabled. Default 72 hours. */
  disableAfterMs?: number;
  /**
   * When true, an endpoint answering `410 Gone` disables its webhook at once (reason `gone`),
   * with the usual durable notice to its account holder. Default false: a 410 is a failed
   * attempt like any status but 200.
   */
  disableOnGone?: boolean;
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
   * OpenTelemetry metrics and traces (docs/operations.md, "Observability"). Default: the global providers,
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
    /**
     * Where the dashboard is mounted, e.g. `https://auth.example.com/settings/webhooks`: the
     * address `hooks.dashboardLink` mints links under (required for links; their session cookie
     * is `Secure` when it is https).
     */
    url?: string;
    /** How long a session started by a link lasts. Default 12 hours, at most 7 days. */
    sessionTtlMs?: number;
    /** The look: `{ name, logo, accent, mode }` (docs/dashboard.md, "Theming"). */
    theme?: DashboardTheme;
    /** A fixed locale (`en`, `fr`, `de`). Default: each request's Accept-Language. */
    locale?: 'en' | 'fr' | 'de';
  };
}

/** How this process delivers: deadlines, bounds on attempts in flight, claims and leases. */
export interface DeliveryOptions {
  /** Per-attempt deadline. Default 15 s. */
  timeoutMs?: number;
  /** Attempts in flight per process. Default 64. */
  concurrency?: number;
  /** Attempts in flight per webhook per process. Default 8 (one while the webhook is failing). */
  perWebhookConcurrency?: number;
  /**
   * An environment's fair share of this process's attempts in flight. Default: a quarter of
   * `concurrency`, at least twice `perWebhookConcurrency`. Beyond it an environment may use idle
   * slots, but never the last `perWebhookConcurrency` ones, kept for anyone else's new work.
   */
  perEnvironmentConcurrency?: number;
  /** Most deliveries taken by one claim. Default 64. */
  batchSize?: number;
  /** How long a claim is ours. Default timeoutMs + 30 s. */
  leaseMs?: number;
  /** Longest sleep between looks at the store. Default one second. */
  pollIntervalMs?: number;
}

export type AuthorizeResult = { environment: string } | null | undefined;

export interface Notifier {
  /** Called once per automatic disable; email the account holder from here. */
  webhookDisabled(info: WebhookDisabledInfo): void | Promise<void>;
}

export interface WebhookDisabledInfo {
  /**
   * Stable id of this notice, the same on every try of it: use it to deduplicate your own side
   * effects (the SMTP notifier derives the email's Message-ID from it).
   */
  noticeId: string;
  webhook: WebhookRecord;
  environment: string;
  /** `failing` (72 hours without a success), or `gone` (a 410 Gone, with `disableOnGone`). */
  reason: 'failing' | 'gone';
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
