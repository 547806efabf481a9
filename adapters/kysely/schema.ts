import type { Generated } from 'kysely';

/**
 * Table shapes shared by the SQL adapters. Times are integer milliseconds (bigint in PostgreSQL,
 * which `pg` hands back as strings: rows.ts converts). JSON is stored as text so both databases
 * read and write it the same way.
 */
export interface EngineTables {
  iw_webhooks: WebhookRow;
  iw_events: EventRow;
  iw_deliveries: DeliveryRow;
  iw_attempts: AttemptRow;
  iw_notices: NoticeRow;
  /** The dashboard's stats: attempts per webhook and hour (migration 19). */
  iw_webhook_hours: WebhookHourRow;
  /** The settled hours' packs (migration 24, adapters/kysely/packs.ts): every webhook's counts of an environment's hour. */
  iw_hour_packs: { environment: string; hour: Millis; counts: string };
  iw_migrations: { version: number; name: string; applied_at: number | string };
  /** Deliveries given back to a reserved start time (migration 17, adapters/kysely/pace.ts). */
  iw_paced: { delivery_id: string; webhook_id: string; slot: Millis };
  iw_dashboard_grants: DashboardGrantRow;
  /** Ordered delivery per subject (migration 21, adapters/kysely/ordering.ts): a delivery's place in its subject's queue. */
  iw_ordered: { delivery_id: string; webhook_id: string; subject: string; seq: Millis | null };
}

type Millis = number | string;

export interface WebhookRow {
  id: string;
  environment: string;
  name: string;
  description: string | null;
  endpoint: string;
  event_types: string;
  status: string;
  disabled_reason: string | null;
  disabled_at: Millis | null;
  failing_since: Millis | null;
  last_error: string | null;
  created_at: Millis;
  updated_at: Millis;
  // Endpoint options (migration 17): headers as JSON (credential values sealed), the pace.
  headers?: string | null;
  timeout_ms?: number | null;
  rate_limit_per_second?: number | null;
  next_start_at?: Millis | null;
  slow_until?: Millis | null;
  // Signing formats and endpoint auth (migration 18): JSON text, every secret in it sealed.
  format?: string;
  signing?: string | null;
  auth?: string | null;
  // Ordered delivery per subject (migration 21): null is `none`.
  ordering?: string | null;
}

export interface EventRow {
  id: string;
  environment: string;
  type: string;
  source: string;
  data: string;
  event_timestamp: Millis;
  created_at: Millis;
  /** W3C traceparent of the emit span, or null (migration 4). */
  traceparent: string | null;
  /** What the event is about (the catalog's subject), or null (migration 25). */
  subject: string | null;
  /** Its user's email (`data.user.email`), lowercased, or null (migration 25). */
  email: string | null;
  /** 1 for a test event (Send test event), else null (migration 25). */
  test: number | null;
}

export interface DeliveryRow {
  id: string;
  environment: string;
  webhook_id: string;
  event_id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Millis | null;
  locked_by: string | null;
  locked_until: Millis | null;
  last_attempt_at: Millis | null;
  last_result: string | null;
  /** The event's type, copied at insert (migration 2). */
  event_type: string;
  /** The last failed attempt's message; null after a success (migration 2). */
  last_error: string | null;
  /**
   * `next_attempt_at` as the last claim found it, before a PostgreSQL lease moved it (migration
   * 4; on SQLite the two agree while leased).
   */
  claimed_due_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

/**
 * A claimed row; PostgreSQL's claim adds the claimed webhooks and events (first row only) and,
 * when it took nothing, one row of nulls carrying the next due times (`next_delivery`,
 * `next_notice`: what NEXT_DUE_SQL reads).
 */
export type ClaimRow = DeliveryRow & {
  webhooks?: WebhookRow[] | null;
  events?: EventRow[] | null;
  next_delivery?: number | string | null;
  next_notice?: number | string | null;
};

export interface AttemptRow {
  id: string;
  delivery_id: string;
  webhook_id: string;
  environment: string;
  started_at: Millis;
  duration_ms: number;
  status_code: number | null;
  error_kind: string | null;
  error_message: string | null;
  response_excerpt: string | null;
  success: number;
  seq: Generated<number>;
}

/** A notice to an account holder, delivered to the host's notifier through this outbox (migration 3). */
export interface NoticeRow {
  id: string;
  environment: string;
  kind: string;
  webhook_id: string;
  /** JSON: what the notifier is told (the webhook as it was disabled, failing since, last error). */
  payload: string;
  /** `pending` (due, or waiting for its next try), `sent`, or `failed` (its back-off spent). */
  status: string;
  attempt_count: number;
  next_attempt_at: Millis | null;
  locked_by: string | null;
  locked_until: Millis | null;
  last_error: string | null;
  sent_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

/** Dashboard link access (migration 20): a minted link or the session it started, by token hash. */
export interface DashboardGrantRow {
  id: string;
  kind: string;
  environment: string;
  capability: string;
  next: string | null;
  expires_at: Millis;
  used_at: Millis | null;
  created_at: Millis;
}

/**
 * One webhook's attempts in one hour (migration 19), added to with every recorded attempt:
 * `d0` … `d9` count them per duration bucket (`DURATION_BOUNDS` in src/stats.ts).
 */
export interface WebhookHourRow {
  webhook_id: string;
  hour: Millis;
  environment: string;
  succeeded: number;
  failed: number;
  d0: number;
  d1: number;
  d2: number;
  d3: number;
  d4: number;
  d5: number;
  d6: number;
  d7: number;
  d8: number;
  d9: number;
}
