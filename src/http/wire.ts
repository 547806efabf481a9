import type { CatalogEntry } from '../catalog/catalog.js';
import { type AttemptRecord, circuitOf, type DeliveryRecord, type EventRecord, type WebhookCircuit, type WebhookRecord } from '../model.js';
import { wireSigning } from './signing.js';

/**
 * Records as the management API shows them: Kinde's fields and names first, our extensions after
 * (Kinde's clients ignore fields they do not know). Times are ISO 8601, as Kinde's `created_on`.
 */

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export interface WireWebhook {
  id: string;
  name: string;
  endpoint: string;
  description: string | null;
  event_types: string[];
  created_on: string;
  /** Extension: `enabled` or `disabled`. */
  status: string;
  /** Extension: `manual` or `failing` (disabled automatically after failing for 72 hours). */
  disabled_reason: string | null;
  disabled_on: string | null;
  /** Extension: first failure since the last success; null while healthy. */
  failing_since: string | null;
  last_error: string | null;
  updated_on: string;
  /**
   * Extension: `closed`, or `half_open` while failing (one attempt at a time per process until a
   * success); derived from `failing_since`.
   */
  circuit: WebhookCircuit;
  // --- Signing formats and endpoint auth (issue 37): see signing.ts ---
  /** Extension: `jwt` or `standard-webhooks`. */
  format: string;
  /** Extension: the Ed25519 public key, and until when a rotated secret still signs; null for `jwt`. */
  signing: { public_key: string | null; previous_secret_until: string | null } | null;
  /** Extension: endpoint auth, its secret masked; null without. */
  auth: Record<string, unknown> | null;
}

export function wireWebhook(w: WebhookRecord): WireWebhook {
  return {
    id: w.id,
    name: w.name,
    endpoint: w.endpoint,
    description: w.description,
    event_types: [...w.eventTypes],
    created_on: iso(w.createdAt),
    status: w.status,
    disabled_reason: w.disabledReason,
    disabled_on: isoOrNull(w.disabledAt),
    failing_since: isoOrNull(w.failingSince),
    last_error: w.lastError,
    updated_on: iso(w.updatedAt),
    circuit: circuitOf(w),
    ...wireSigning(w),
  };
}

/** Kinde's event: `timestamp` is when it happened (the event time), `event_id` its id. */
export function wireEvent(e: EventRecord) {
  return { type: e.type, source: e.source, event_id: e.id, timestamp: iso(e.eventTimestamp), data: e.data };
}

export function wireEventType(t: CatalogEntry) {
  return { id: t.id, code: t.code, name: t.name, origin: t.origin, schema: t.schema };
}

/**
 * Extension: a delivery in the log. `id` is its `webhook-id`. `next_attempt_on` is set only while
 * it is pending (during an attempt: when the lease ends, when it would be tried again if this
 * process died); `last_status_code` is the HTTP status of the last attempt, null when none was
 * received (not yet tried, timeout, network error, dropped on enable).
 */
export function wireDelivery(d: DeliveryRecord) {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempt_count: d.attemptCount,
    created_on: iso(d.createdAt),
    next_attempt_on: isoOrNull(d.nextAttemptAt),
    last_attempt_on: isoOrNull(d.lastAttemptAt),
    last_status_code: d.lastResult !== null && /^\d{3}$/.test(d.lastResult) ? Number(d.lastResult) : null,
    last_error: d.lastError,
  };
}

/** Extension: one HTTP try of a delivery. */
export function wireAttempt(a: AttemptRecord) {
  return {
    id: a.id,
    started_on: iso(a.startedAt),
    duration_ms: a.durationMs,
    status_code: a.statusCode,
    error_kind: a.errorKind,
    error: a.errorMessage,
    response_excerpt: a.responseExcerpt,
    success: a.success,
  };
}
