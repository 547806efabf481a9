import type { Selectable } from 'kysely';
import type {
  AttemptErrorKind,
  AttemptRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  EventSource,
  WebhookAuth,
  WebhookFormat,
  WebhookRecord,
  WebhookSigning,
  WebhookStatus,
} from '../../src/model.js';
import { storable } from '../../src/validate.js';
import type { AttemptRow, DeliveryRow, EventRow, WebhookRow } from './schema.js';

export const ms = (v: number | string): number => (typeof v === 'number' ? v : Number(v));
const msOrNull = (v: number | string | null): number | null => (v === null ? null : ms(v));

export function toWebhook(r: WebhookRow): WebhookRecord {
  return {
    id: r.id,
    environment: r.environment,
    name: r.name,
    description: r.description,
    endpoint: r.endpoint,
    eventTypes: JSON.parse(r.event_types) as string[],
    status: r.status as WebhookStatus,
    disabledReason: r.disabled_reason,
    disabledAt: msOrNull(r.disabled_at),
    failingSince: msOrNull(r.failing_since),
    lastError: r.last_error,
    createdAt: ms(r.created_at),
    updatedAt: ms(r.updated_at),
    // Endpoint options (migration 17). PostgreSQL's claim brings the row as JSON: headers may come parsed.
    headers: r.headers == null ? {} : typeof r.headers === 'string' ? (JSON.parse(r.headers) as Record<string, string>) : r.headers,
    timeoutMs: r.timeout_ms == null ? null : Number(r.timeout_ms),
    rateLimit: r.rate_limit_per_second == null ? null : { perSecond: Number(r.rate_limit_per_second) },
    // Signing formats and endpoint auth (migration 18); a row read before it has none.
    format: (r.format ?? 'jwt') as WebhookFormat,
    signing: r.signing ? (JSON.parse(r.signing) as WebhookSigning) : null,
    auth: r.auth ? (JSON.parse(r.auth) as WebhookAuth) : null,
    // Ordered delivery per subject (migration 21); a row read before it has none.
    ordering: r.ordering === 'per-subject' ? 'per-subject' : 'none',
  };
}

/**
 * The endpoint options' columns (migration 17) of a patch, or of a new record (`onlySet`: those
 * that differ from the columns' defaults, so a webhook without options is the same insert as
 * before them).
 */
export function endpointColumns(w: Pick<WebhookRecord, 'headers' | 'timeoutMs' | 'rateLimit'>, onlySet = false) {
  const out: Pick<WebhookRow, 'headers' | 'timeout_ms' | 'rate_limit_per_second'> = {};
  const noHeaders = w.headers === undefined || Object.keys(w.headers).length === 0;
  if (w.headers !== undefined && !(onlySet && noHeaders)) out.headers = noHeaders ? null : JSON.stringify(w.headers);
  if (w.timeoutMs !== undefined && !(onlySet && w.timeoutMs === null)) out.timeout_ms = w.timeoutMs;
  if (w.rateLimit !== undefined && !(onlySet && w.rateLimit === null)) out.rate_limit_per_second = w.rateLimit?.perSecond ?? null;
  return out;
}

/** A JSON column's text as written (reading it undoes it exactly), null for none. */
export const jsonText = (value: object | null | undefined): string | null => (value ? JSON.stringify(value) : null);

export function fromWebhook(w: WebhookRecord): WebhookRow {
  return {
    id: w.id,
    environment: w.environment,
    name: w.name,
    description: w.description,
    endpoint: w.endpoint,
    event_types: JSON.stringify(w.eventTypes),
    status: w.status,
    disabled_reason: w.disabledReason,
    disabled_at: w.disabledAt,
    failing_since: w.failingSince,
    last_error: w.lastError,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    ...endpointColumns(w, true),
    // Signing formats and endpoint auth (migration 18): sealed by the management functions.
    format: w.format ?? 'jwt',
    signing: jsonText(w.signing),
    auth: jsonText(w.auth),
    // Only when set, so a webhook without it is the same insert as before migration 21.
    ...(w.ordering === 'per-subject' ? { ordering: 'per-subject' } : {}),
  };
}

export function toEvent(
  r: Pick<EventRow, 'id' | 'environment' | 'type' | 'source' | 'data' | 'event_timestamp' | 'created_at'>,
): EventRecord {
  return {
    id: r.id,
    environment: r.environment,
    type: r.type,
    source: r.source as EventSource,
    data: JSON.parse(r.data) as Record<string, unknown>,
    eventTimestamp: ms(r.event_timestamp),
    createdAt: ms(r.created_at),
  };
}

/**
 * An event's values in the order of the emit's insert (`id, environment, type, source, data,
 * event_timestamp, created_at, traceparent, subject, email, test`), for the statements written as text.
 */
export function eventInsertParams(
  event: EventRecord,
  options: { traceparent?: string | null; subject?: string | null; webhookIds?: readonly string[] },
): unknown[] {
  return [
    event.id,
    event.environment,
    event.type,
    event.source,
    JSON.stringify(event.data),
    event.eventTimestamp,
    event.createdAt,
    options.traceparent ?? null,
    options.subject ?? null,
    emailOf(event),
    // A test event: one sent to named webhooks (Send test event); null for every other.
    options.webhookIds === undefined ? null : 1,
  ];
}

/**
 * What a search by email finds an event by: its user's email (`data.user.email`), lowercased, or
 * null. One no database can store or index (a NUL, a lone surrogate, longer than an address can
 * be) is left out rather than failing the emit: a host's own type may not check its format.
 */
export function emailOf(event: EventRecord): string | null {
  const user = event.data.user;
  const email = user !== null && typeof user === 'object' ? (user as { email?: unknown }).email : undefined;
  return typeof email === 'string' && email !== '' && email.length <= MAX_EMAIL && storable(email) ? email.toLowerCase() : null;
}
/** The longest address RFC 5321 allows in a path. */
const MAX_EMAIL = 320;

export function toDelivery(r: DeliveryRow): DeliveryRecord {
  return {
    id: r.id,
    environment: r.environment,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    status: r.status as DeliveryStatus,
    attemptCount: Number(r.attempt_count),
    nextAttemptAt: msOrNull(r.next_attempt_at),
    lastAttemptAt: msOrNull(r.last_attempt_at),
    lastResult: r.last_result,
    eventType: r.event_type,
    lastError: r.last_error,
    createdAt: ms(r.created_at),
    updatedAt: ms(r.updated_at),
  };
}

/** The lease a claim just took on `r` (the claim sets both columns, so neither is null here). */
export function toLease(r: DeliveryRow): { workerId: string; until: number } {
  return { workerId: r.locked_by ?? '', until: msOrNull(r.locked_until) ?? 0 };
}

/** The row of a new delivery: nobody holds it yet. */
export function fromDelivery(d: DeliveryRecord): DeliveryRow {
  return {
    id: d.id,
    environment: d.environment,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    status: d.status,
    attempt_count: d.attemptCount,
    next_attempt_at: d.nextAttemptAt,
    locked_by: null,
    locked_until: null,
    last_attempt_at: d.lastAttemptAt,
    last_result: d.lastResult,
    event_type: d.eventType,
    last_error: d.lastError,
    claimed_due_at: null,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

export function toAttempt(r: Selectable<AttemptRow>): AttemptRecord {
  return {
    id: r.id,
    deliveryId: r.delivery_id,
    webhookId: r.webhook_id,
    environment: r.environment,
    startedAt: ms(r.started_at),
    durationMs: Number(r.duration_ms),
    statusCode: r.status_code === null ? null : Number(r.status_code),
    errorKind: r.error_kind as AttemptErrorKind | null,
    errorMessage: r.error_message,
    responseExcerpt: r.response_excerpt,
    success: Number(r.success) === 1,
  };
}

export function fromAttempt(a: AttemptRecord): Omit<AttemptRow, 'seq'> {
  return {
    id: a.id,
    delivery_id: a.deliveryId,
    webhook_id: a.webhookId,
    environment: a.environment,
    started_at: a.startedAt,
    duration_ms: Math.round(a.durationMs),
    status_code: a.statusCode,
    error_kind: a.errorKind,
    error_message: a.errorMessage,
    response_excerpt: a.responseExcerpt,
    success: a.success ? 1 : 0,
  };
}

/**
 * Whether these ids and environments could be stored at all. Text with NUL or a lone surrogate
 * never was (the engine refuses it on the way in), so a lookup by it finds nothing, without
 * asking the database: PostgreSQL throws on a NUL, and node-pg turns a lone surrogate into
 * U+FFFD, which would name ANOTHER record (environment `env_\ud800` would read `env_\ufffd`'s).
 * The engine checks first too (`isPlausibleId`, `environmentOf`); this keeps the Store contract
 * safe for callers that do not.
 */
export function known(...values: string[]): boolean {
  return values.every(storable);
}
