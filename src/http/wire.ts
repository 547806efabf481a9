import type { CatalogEntry } from '../catalog/catalog.js';
import {
  type AttemptRecord,
  circuitOf,
  type DeliveryRecord,
  type EventRecord,
  type EventSummary,
  type WebhookCircuit,
  type WebhookRecord,
} from '../model.js';
import type { ActivityPoint, DeliveryMessage, EventSearchPage, WebhookActivity, WebhookOverview } from '../types.js';
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
  /** Extension (endpoint options): custom request headers; credential values read as `••••••••`. */
  headers: Record<string, string>;
  /** Extension: this webhook's attempt deadline in ms; null for the engine's. */
  timeout_ms: number | null;
  /** Extension: most attempts started per second; null for no limit. */
  rate_limit_per_second: number | null;
  // --- Signing formats and endpoint auth: see signing.ts ---
  /** Extension: `jwt` or `standard-webhooks`. */
  format: string;
  /** Extension: the Ed25519 public key, and until when a rotated secret still signs; null for `jwt`. */
  signing: { public_key: string | null; previous_secret_until: string | null } | null;
  /** Extension: endpoint auth, its secret masked; null without. */
  auth: Record<string, unknown> | null;
  /** Extension (docs/ordering.md): `none` or `per-subject`. */
  ordering: 'none' | 'per-subject';
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
    headers: { ...(w.headers ?? {}) },
    timeout_ms: w.timeoutMs ?? null,
    rate_limit_per_second: w.rateLimit?.perSecond ?? null,
    ...wireSigning(w),
    ordering: w.ordering ?? 'none',
  };
}

/** Kinde's event: `timestamp` is when it happened (the event time), `event_id` its id. */
export function wireEvent(e: EventRecord) {
  return { type: e.type, source: e.source, event_id: e.id, timestamp: iso(e.eventTimestamp), data: e.data };
}

export function wireEventType(t: CatalogEntry) {
  // `example` is ours (the dashboard's event catalog shows it); Kinde's clients ignore a field they do not know.
  // `subject` too (docs/ordering.md): the JSON pointer a per-subject webhook orders by, or null.
  return { id: t.id, code: t.code, name: t.name, origin: t.origin, schema: t.schema, example: t.example, subject: t.subject };
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

/** Extension: a row of the delivery log, with what its event is about and whether it is a test event. */
export function wireLogDelivery(d: DeliveryRecord, about: EventSummary | undefined) {
  return { ...wireDelivery(d), subject: about?.subject ?? null, test: about?.test ?? false };
}

/** Extension: an event found by its subject, with its deliveries to every webhook. */
export function wireFoundEvent(e: EventSearchPage['events'][number]) {
  return {
    event_id: e.id,
    type: e.type,
    source: e.source,
    subject: e.subject,
    test: e.test,
    timestamp: iso(e.eventTimestamp),
    created_on: iso(e.createdAt),
    deliveries: e.deliveries.map((d) => ({ webhook_id: d.webhookId, ...wireDelivery(d) })),
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

const wirePoint = (p: ActivityPoint) => ({ at: iso(p.at), succeeded: p.succeeded, failed: p.failed });

/** Extension: a webhook at a glance over the last 24 hours (the dashboard's list). */
export function wireActivity(a: WebhookActivity) {
  return {
    webhook_id: a.webhookId,
    attempts: a.attempts,
    succeeded: a.succeeded,
    failed: a.failed,
    success_rate: a.successRate,
    series: a.series.map(wirePoint),
  };
}

/** Extension: a webhook's chart over a range, with its attempt durations. */
export function wireOverview(o: WebhookOverview) {
  return {
    webhook_id: o.webhookId,
    range: o.range,
    since: iso(o.since),
    until: iso(o.until),
    step_ms: o.stepMs,
    attempts: o.attempts,
    succeeded: o.succeeded,
    failed: o.failed,
    success_rate: o.successRate,
    median_ms: o.medianMs,
    p95_ms: o.p95Ms,
    points: o.points.map(wirePoint),
  };
}

/** Extension: a delivery as its receiver got it (payload, headers sent, attempts). */
export function wireMessage(m: DeliveryMessage) {
  return {
    delivery: wireDelivery(m.delivery),
    format: m.format,
    payload: m.payload,
    headers: m.headers,
    attempts: m.attempts.map(wireAttempt),
  };
}
