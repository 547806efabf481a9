import { type Kysely, sql } from 'kysely';

/**
 * The engine's tables as the first release makes them, on either database (Kysely's schema
 * builder writes each one's DDL). Nothing was released before it, so there is no chain of
 * migrations to replay: a new database gets this in one transaction, and every change from here
 * on is a migration of its own (`migrations.ts`). PostgreSQL's stored functions are not here:
 * each lives in a file of its own (`adapters/postgres/functions/`) and is applied again whenever
 * its text changes. Why each table and index exists: ARCHITECTURE.md's "Records" and the decision
 * records it names.
 */
export async function createBaseline(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('iw_webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'bigint')
    .addColumn('failing_since', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // Endpoint options (credential header values sealed) and the pace (decision 028).
    .addColumn('headers', 'text')
    .addColumn('timeout_ms', 'integer')
    .addColumn('rate_limit_per_second', 'integer')
    .addColumn('next_start_at', 'bigint')
    .addColumn('slow_until', 'bigint')
    // The signing format and endpoint auth, their secrets sealed (decision 029).
    .addColumn('format', 'text', (c) => c.notNull().defaultTo('jwt'))
    .addColumn('signing', 'text')
    .addColumn('auth', 'text')
    // Null: `none` (decision 032).
    .addColumn('ordering', 'text')
    .execute();
  await db.schema.createIndex('iw_webhooks_env').on('iw_webhooks').columns(['environment', 'created_at']).execute();

  await db.schema
    .createTable('iw_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('event_timestamp', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('traceparent', 'text')
    // What the event is about and its user's email, lowercased, written with it (decision 038);
    // whether it is a test event.
    .addColumn('subject', 'text')
    .addColumn('email', 'text')
    .addColumn('test', 'integer')
    .execute();
  await db.schema.createIndex('iw_events_created').on('iw_events').column('created_at').execute();
  await db.schema
    .createIndex('iw_events_subject')
    .on('iw_events')
    .columns(['environment', 'subject', 'created_at', 'id'])
    .where(sql.ref('subject'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('iw_events_email')
    .on('iw_events')
    .columns(['environment', 'email', 'created_at', 'id'])
    .where(sql.ref('email'), 'is not', null)
    .execute();

  // The lease is written in place (decision 003): on PostgreSQL every page keeps room for a
  // claim's new row versions (fill factor 60), so the claim is HOT.
  let deliveries = db.schema
    .createTable('iw_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_result', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_error', 'text')
    .addColumn('claimed_due_at', 'bigint')
    // Every lookup by event reads its leading column: one index where there were two (decision 022).
    .addUniqueConstraint('iw_deliveries_event_webhook', ['event_id', 'webhook_id']);
  if (dialect === 'postgres') deliveries = deliveries.modifyEnd(sql`with (fillfactor = 60)`);
  await deliveries.execute();
  if (dialect === 'postgres') {
    // Without it PostgreSQL guesses few distinct webhooks and prefers the due index for a claim
    // that leaves some out (decision 020); a plan test guards it.
    await sql`alter table iw_deliveries alter column webhook_id set (n_distinct = -0.01)`.execute(db);
  }
  // Only pending rows are ever due: the partial indexes stay small however many are done.
  await db.schema
    .createIndex('iw_deliveries_due')
    .on('iw_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('iw_deliveries_pending')
    .on('iw_deliveries')
    .columns(['webhook_id', 'next_attempt_at'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  // The log: a webhook's deliveries by status and by event type, newest first in keyset pages.
  await db.schema
    .createIndex('iw_deliveries_log_status')
    .on('iw_deliveries')
    .columns(['webhook_id', 'status', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('iw_deliveries_log_type')
    .on('iw_deliveries')
    .columns(['webhook_id', 'event_type', 'created_at', 'id'])
    .execute();
  // Retention: finished deliveries by age.
  await db.schema
    .createIndex('iw_deliveries_finished')
    .on('iw_deliveries')
    .column('updated_at')
    .where(sql.ref('status'), 'in', [sql.lit('delivered'), sql.lit('failed')])
    .execute();

  await db.schema
    .createTable('iw_attempts')
    .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
      dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error_kind', 'text')
    .addColumn('error_message', 'text')
    .addColumn('response_excerpt', 'text')
    .addColumn('success', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('iw_attempts_delivery').on('iw_attempts').columns(['delivery_id', 'seq']).execute();

  // The notice outbox (decision 014).
  await db.schema
    .createTable('iw_notices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('sent_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('iw_notices_due')
    .on('iw_notices')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema.createIndex('iw_notices_created').on('iw_notices').columns(['status', 'created_at']).execute();

  // A delivery given back with its reserved start time (decision 028).
  await db.schema
    .createTable('iw_paced')
    .addColumn('delivery_id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('slot', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('iw_paced_webhook').on('iw_paced').column('webhook_id').execute();

  // A per-subject webhook's delivery and its place in its subject's queue (decision 032).
  await db.schema
    .createTable('iw_ordered')
    .addColumn('delivery_id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint')
    .execute();
  await db.schema
    .createIndex('iw_ordered_queue')
    .on('iw_ordered')
    .columns(['webhook_id', 'subject', 'seq'])
    .where(sql.ref('seq'), 'is not', null)
    .execute();
  await db.schema.createIndex('iw_ordered_webhook').on('iw_ordered').column('webhook_id').execute();

  // The hourly counters (decision 030) and the settled hours' packs (decision 040).
  let hours = db.schema
    .createTable('iw_webhook_hours')
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0));
  for (let i = 0; i < 10; i++) hours = hours.addColumn(`d${i}`, 'integer', (c) => c.notNull().defaultTo(0));
  await hours.addPrimaryKeyConstraint('iw_webhook_hours_pk', ['webhook_id', 'hour']).execute();
  await db.schema.createIndex('iw_webhook_hours_env').on('iw_webhook_hours').columns(['environment', 'hour']).execute();
  await db.schema.createIndex('iw_webhook_hours_hour').on('iw_webhook_hours').column('hour').execute();
  await db.schema
    .createTable('iw_hour_packs')
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('counts', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('iw_hour_packs_pk', ['environment', 'hour'])
    .execute();
  await db.schema.createIndex('iw_hour_packs_hour').on('iw_hour_packs').column('hour').execute();

  // Dashboard links and the sessions they start, by their token's SHA-256 (decision 031).
  await db.schema
    .createTable('iw_dashboard_grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('capability', 'text', (c) => c.notNull())
    .addColumn('next', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('iw_dashboard_grants_expiry').on('iw_dashboard_grants').column('expires_at').execute();

  if (dialect === 'postgres') {
    // Each stored function's text as last applied (its SHA-256), so that a changed text is applied again.
    await db.schema
      .createTable('iw_functions')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute();
  }
}
