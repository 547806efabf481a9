import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { EngineTables } from './schema.js';

export interface Migration {
  version: number;
  name: string;
  up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void>;
}

/**
 * Forward-only migrations, one schema for both databases (Kysely's schema builder emits the
 * dialect's DDL). Never edit a released migration: append a new one.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    async up(db, dialect) {
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
        .execute();

      await db.schema
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
        .addUniqueConstraint('iw_deliveries_webhook_event', ['webhook_id', 'event_id'])
        .execute();
      // Only pending rows are ever due: the partial index stays small however many are done,
      // and an idle tick reads one index entry.
      await db.schema
        .createIndex('iw_deliveries_due')
        .on('iw_deliveries')
        .column('next_attempt_at')
        .where(sql.ref('status'), '=', sql.lit('pending'))
        .execute();
      await db.schema.createIndex('iw_deliveries_webhook').on('iw_deliveries').columns(['webhook_id', 'status']).execute();
      await db.schema.createIndex('iw_deliveries_event').on('iw_deliveries').column('event_id').execute();

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
      await db.schema.createIndex('iw_attempts_webhook').on('iw_attempts').column('webhook_id').execute();
    },
  },
  {
    version: 2,
    name: 'delivery log',
    async up(db) {
      // The log lists a webhook's deliveries newest first, filtered by status or event type, in
      // pages keyed on (created_at, id): both orders come straight from an index, whatever the
      // backlog. The type and the last error are copied onto the delivery (both are fixed or
      // replaced whole), so a page is one index range with no join and no lookup per row.
      await db.schema
        .alterTable('iw_deliveries')
        .addColumn('event_type', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema.alterTable('iw_deliveries').addColumn('last_error', 'text').execute();
      await sql`update iw_deliveries set event_type = (select e.type from iw_events e where e.id = iw_deliveries.event_id)`.execute(db);
      await sql`update iw_deliveries set last_error = (select a.error_message from iw_attempts a where a.delivery_id = iw_deliveries.id order by a.seq desc limit 1) where last_attempt_at is not null`.execute(
        db,
      );
      await db.schema.dropIndex('iw_deliveries_webhook').execute();
      await db.schema.createIndex('iw_deliveries_log').on('iw_deliveries').columns(['webhook_id', 'created_at', 'id']).execute();
      await db.schema
        .createIndex('iw_deliveries_log_status')
        .on('iw_deliveries')
        .columns(['webhook_id', 'status', 'created_at', 'id'])
        .execute();
    },
  },
  {
    version: 3,
    name: 'notices and retention',
    async up(db) {
      // The notice outbox: written in the transaction that disables a webhook, delivered to the
      // notifier under a lease like a delivery, so a crash or a mail outage cannot lose it.
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
      // Retention reads the oldest finished deliveries and the oldest events from an index, a
      // bounded batch at a time, however large the tables are.
      await sql`create index iw_deliveries_finished on iw_deliveries (updated_at) where status in ('delivered', 'failed')`.execute(db);
      await db.schema.createIndex('iw_events_created').on('iw_events').column('created_at').execute();
    },
  },
  {
    version: 4,
    name: 'telemetry',
    async up(db) {
      // The W3C traceparent of the `webhooks.emit` span, written with the event, so every attempt
      // (in any process, hours later) continues the trace of the request that emitted it.
      await db.schema.alterTable('iw_events').addColumn('traceparent', 'text').execute();
      // The due time the last claim found, before its lease moved `next_attempt_at`: how late the
      // attempt started (the `webhooks.delivery.lag` histogram).
      await db.schema.alterTable('iw_deliveries').addColumn('claimed_due_at', 'bigint').execute();
    },
  },
  {
    version: 5,
    name: 'delivery log by event type',
    async up(db) {
      // The log filtered by event type: migration 2's indexes have the type as a filter, not a
      // key, so a rare type (1 delivery in 1,000) made a page walk the webhook's whole log. Keyed
      // on it, a page is one backward range again, like the status filter's.
      await db.schema
        .createIndex('iw_deliveries_log_type')
        .on('iw_deliveries')
        .columns(['webhook_id', 'event_type', 'created_at', 'id'])
        .execute();
    },
  },
  {
    version: 6,
    name: 'attempts without the webhook index',
    async up(db) {
      // Only deleting a webhook read attempts by webhook, and it can find them through the
      // webhook's deliveries (iw_deliveries_log, then iw_attempts_delivery). Every recorded
      // attempt paid for this index: a quarter of an attempt insert on SQLite (its ten-odd
      // distinct keys take inserts all over the tree), an index entry and its WAL on PostgreSQL.
      await db.schema.dropIndex('iw_attempts_webhook').ifExists().execute();
    },
  },
  {
    version: 7,
    name: 'pending deliveries by webhook',
    async up(db, dialect) {
      // A claim that leaves a saturated webhook or an environment at its share out reads each other
      // webhook's oldest due rows from here (`due.ts`), instead of reading past every due row of
      // what it leaves out in iw_deliveries_due: its cost no longer grows with a busy environment's
      // backlog. Partial like the due index: only pending rows, so it stays small.
      await db.schema
        .createIndex('iw_deliveries_pending')
        .on('iw_deliveries')
        .columns(['webhook_id', 'next_attempt_at'])
        .where(sql.ref('status'), '=', sql.lit('pending'))
        .execute();
      // PostgreSQL estimates how many rows one webhook has as the table over its distinct
      // webhooks. With few of them (a test, a new install, one environment's burst) that is a large
      // share, and the planner would find a webhook's due rows by reading the due index in order
      // and keeping that webhook's, past every due row of the others: the cost this index is
      // here to avoid. A webhook's share is small in a shared engine; say so (distinct webhooks
      // = 1 % of the rows, used from the next ANALYZE on), and its range here is always cheaper.
      if (dialect === 'postgres') await sql`alter table iw_deliveries alter column webhook_id set (n_distinct = -0.01)`.execute(db);
    },
  },
  {
    version: 8,
    name: 'the claim as a function, planned once per connection',
    async up(db, dialect) {
      if (dialect === 'postgres') await db.executeQuery(CompiledQuery.raw(CLAIM_DUE_FUNCTION_V1));
    },
  },
  {
    version: 9,
    name: 'deliveries unique by event, then webhook (PostgreSQL)',
    async up(db, dialect) {
      // The unique key (webhook_id, event_id) and the index on event_id become one unique key
      // (event_id, webhook_id): the same rule, and every lookup by event (an event's deliveries,
      // retention's "no delivery left") reads its leading column. On PostgreSQL every row version
      // an update writes that is not HOT (every claim and outcome: their columns are indexed) gets
      // an entry in every index, so one index fewer is one entry fewer per claim, per outcome and
      // per emitted delivery: 8 → 7 for a claim. SQLite writes only the entries of the columns an
      // update changes (never these), and dropping a table's own UNIQUE there means rebuilding
      // the table: it kept both, until migration 14 did that for the emit's sake.
      if (dialect !== 'postgres') return;
      await sql`alter table iw_deliveries add constraint iw_deliveries_event_webhook unique (event_id, webhook_id)`.execute(db);
      await sql`alter table iw_deliveries drop constraint iw_deliveries_webhook_event`.execute(db);
      await sql`drop index iw_deliveries_event`.execute(db);
    },
  },
  {
    version: 10,
    name: "a webhook's log pages from its status ranges (PostgreSQL)",
    async up(db, dialect) {
      // `iw_deliveries_log` (webhook_id, created_at, id) served only the page of a webhook's whole
      // log. On PostgreSQL that page is now the newest of each status's range of
      // `iw_deliveries_log_status` (`log.ts`), and the index goes: one entry fewer per claim,
      // outcome and emitted delivery (7 → 6 for a claim; see migration 9). On SQLite it stays: an
      // update there writes only the entries of the columns it changes (never these).
      if (dialect !== 'postgres') return;
      await sql`drop index iw_deliveries_log`.execute(db);
    },
  },
  {
    version: 11,
    name: 'emit as a function, planned once per connection (PostgreSQL)',
    async up(db, dialect) {
      if (dialect === 'postgres') await db.executeQuery(CompiledQuery.raw(EMIT_FUNCTION_V1));
    },
  },
  {
    version: 12,
    name: 'HOT claims: the lease in place, room on every page (PostgreSQL)',
    async up(db, dialect) {
      // A claim used to write a new version of each row it took and an entry in each of the six
      // indexes of `iw_deliveries` for it: it moved `next_attempt_at` (indexed) to the lease's end
      // and set `updated_at` (indexed by `iw_deliveries_finished`). Now it sets only the lease and
      // `claimed_due_at`, none of them indexed (`leaseSet` in due.ts), as SQLite's has since the
      // lease was left in place there, so PostgreSQL can make the update HOT: the new version on
      // the row's own page, no index entry at all. That needs free room on the page for the new
      // versions of every row a claim takes there, in one statement, before any old version can
      // be pruned; rows are inserted in emit order, so a claim of 64 takes whole pages. At the
      // default fill factor (100) few claims found room (2,416 of 19,200 rows HOT on a scratch
      // database); at 60, inserts leave 40 % of each new page free and half or more were HOT, and
      // a claim among a million future rows took a third less time
      // (docs/decisions/003-lease-in-place.md). The cost is room: new pages of the table hold 60 %
      // of the rows they would. Pages written before this migration keep what they hold.
      if (dialect !== 'postgres') return;
      await sql`alter table iw_deliveries set (fillfactor = 60)`.execute(db);
      await db.executeQuery(CompiledQuery.raw(CLAIM_DUE_FUNCTION_V2));
      // An engine of an earlier version still running on this database would claim rows leased
      // in place (its claim knew only due times): without its function its plain claims fail,
      // and say so in its log, until it is replaced. (Its claims that leave something out are
      // text and still run: docs/upgrading.md says to replace every process at once.)
      await sql`drop function iw_claim_due(bigint, integer, text, bigint)`.execute(db);
    },
  },
  {
    version: 13,
    name: "a webhook's log pages from its status ranges (SQLite)",
    async up(db, dialect) {
      // Migration 10 on SQLite, for the emit's sake. There no update ever wrote this index, but
      // every emitted delivery does: an entry in each webhook's own range, a page of its own, so
      // an event to ten webhooks wrote ten more pages. Its one reader, the page of a webhook's
      // whole log, reads the status index's four ranges instead (`log.ts`): an emit to ten
      // webhooks got faster, that page a little slower, first or deep (bench/journal/2026-11-27.md,
      // "SQLite emit: two indexes fewer").
      if (dialect === 'postgres') return;
      await sql`drop index if exists iw_deliveries_log`.execute(db);
    },
  },
  {
    version: 14,
    name: 'deliveries unique by event, then webhook (SQLite)',
    async up(db, dialect) {
      // Migration 9 on SQLite, for the emit's sake: the unique key (webhook_id, event_id) put each
      // of an event's deliveries on a page of its webhook's own, and the index on event_id was
      // one more index to write. Keyed (event_id, webhook_id), an event's deliveries are
      // neighbours at the key's newest end (event ids grow with time), and every lookup by event
      // reads its leading column. A table's own UNIQUE changes on SQLite only by rebuilding the
      // table (https://sqlite.org/lang_altertable.html#otheralter): a copy with the new key, its
      // rows, the old one dropped, the copy renamed, the other indexes made again from their own
      // definitions; in this migration's transaction, so a failure leaves the table as it was.
      // It rewrites the whole table once: 0.4 s for 100,000 deliveries, 5.5 s for a million on the
      // bench machine. With migration 13 it makes an emit to ten webhooks about a third faster
      // (bench/journal/2026-11-27.md, "SQLite emit: two indexes fewer").
      if (dialect === 'postgres') return;
      const { rows: indexes } = await sql<{ sql: string }>`
        select sql from sqlite_master
        where type = 'index' and tbl_name = 'iw_deliveries' and sql is not null and name <> 'iw_deliveries_event'`.execute(db);
      // A host's own triggers on the table go with it: made again after, like the indexes.
      const { rows: triggers } = await sql<{ sql: string }>`
        select sql from sqlite_master where type = 'trigger' and tbl_name = 'iw_deliveries'`.execute(db);
      await sql`create table iw_deliveries_rekeyed (
        "id" text primary key, "environment" text not null, "webhook_id" text not null, "event_id" text not null,
        "status" text not null, "attempt_count" integer default 0 not null, "next_attempt_at" bigint, "locked_by" text,
        "locked_until" bigint, "last_attempt_at" bigint, "last_result" text, "created_at" bigint not null,
        "updated_at" bigint not null, "event_type" text default '' not null, "last_error" text, "claimed_due_at" bigint,
        constraint "iw_deliveries_event_webhook" unique ("event_id", "webhook_id"))`.execute(db);
      // Every column as migrations 1 to 13 left them, by name.
      await sql`insert into iw_deliveries_rekeyed ("id", "environment", "webhook_id", "event_id", "status", "attempt_count",
          "next_attempt_at", "locked_by", "locked_until", "last_attempt_at", "last_result", "created_at", "updated_at",
          "event_type", "last_error", "claimed_due_at")
        select "id", "environment", "webhook_id", "event_id", "status", "attempt_count", "next_attempt_at", "locked_by",
          "locked_until", "last_attempt_at", "last_result", "created_at", "updated_at", "event_type", "last_error",
          "claimed_due_at"
        from iw_deliveries order by rowid`.execute(db);
      await sql`drop table iw_deliveries`.execute(db);
      // A host's views (or triggers elsewhere) that name iw_deliveries would fail a rename's
      // check of the schema while no table has that name; renamed the legacy way, nothing is
      // checked or rewritten, and they name the new table once it has the name. The setting is
      // the connection's (the host's own, on a shared handle): put back as it was.
      const { rows: legacy } = await sql<{ legacy_alter_table: number }>`pragma legacy_alter_table`.execute(db);
      await sql`pragma legacy_alter_table = on`.execute(db);
      try {
        await sql`alter table iw_deliveries_rekeyed rename to iw_deliveries`.execute(db);
      } finally {
        if (!legacy[0]?.legacy_alter_table) await sql`pragma legacy_alter_table = off`.execute(db);
      }
      // The definitions as SQLite keeps them in its catalog (written by the migrations before,
      // and by the host for its triggers).
      for (const index of indexes) await db.executeQuery(CompiledQuery.raw(index.sql));
      for (const trigger of triggers) await db.executeQuery(CompiledQuery.raw(trigger.sql));
    },
  },
  {
    version: 17,
    name: 'endpoint options',
    async up(db) {
      // Endpoint options (docs/endpoint-options.md): custom headers (JSON text, the
      // values of credential headers sealed), the webhook's own deadline and rate limit.
      await db.schema.alterTable('iw_webhooks').addColumn('headers', 'text').execute();
      await db.schema.alterTable('iw_webhooks').addColumn('timeout_ms', 'integer').execute();
      await db.schema.alterTable('iw_webhooks').addColumn('rate_limit_per_second', 'integer').execute();
      // The webhook's pace, shared by every process: no attempt of it starts before
      // `next_start_at` (the claim reserves start times from it, a Retry-After moves it), and
      // its pace is halved until `slow_until` (a 429 without Retry-After). See adapters/kysely/pace.ts.
      await db.schema.alterTable('iw_webhooks').addColumn('next_start_at', 'bigint').execute();
      await db.schema.alterTable('iw_webhooks').addColumn('slow_until', 'bigint').execute();
      // A delivery given back to its reserved start time: the claim that finds it due at exactly
      // that time starts it without reserving again. Kept apart from iw_deliveries, so neither
      // the claim's columns nor its stored function change.
      await db.schema
        .createTable('iw_paced')
        .addColumn('delivery_id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('slot', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('iw_paced_webhook').on('iw_paced').column('webhook_id').execute();
    },
  },
  {
    version: 18,
    name: 'signing formats and endpoint auth, secrets sealed',
    async up(db) {
      // Standard Webhooks signing and endpoint auth (docs/decisions/029). Three columns
      // on the webhook, no index: the claim reads the whole row already. `signing` and `auth` are
      // JSON text whose secrets are sealed (src/secrets/seal.ts): never a secret in clear.
      await db.schema
        .alterTable('iw_webhooks')
        .addColumn('format', 'text', (c) => c.notNull().defaultTo('jwt'))
        .execute();
      await db.schema.alterTable('iw_webhooks').addColumn('signing', 'text').execute();
      await db.schema.alterTable('iw_webhooks').addColumn('auth', 'text').execute();
    },
  },
  {
    version: 19,
    name: "hourly counters of each webhook's attempts (the dashboard's stats)",
    async up(db) {
      // One row per webhook and hour, added to in the transaction that records the attempts
      // (`hours.ts`): the list's 24 hours and a webhook's 30 days read at most 24 and 720 rows
      // per webhook, never the delivery log (docs/decisions/030-hourly-counters.md). `d0` … `d9`
      // count attempts per duration bucket (`DURATION_BOUNDS` in src/stats.ts).
      let table = db.schema
        .createTable('iw_webhook_hours')
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0));
      for (let i = 0; i < 10; i++) table = table.addColumn(`d${i}`, 'integer', (c) => c.notNull().defaultTo(0));
      await table.addPrimaryKeyConstraint('iw_webhook_hours_pk', ['webhook_id', 'hour']).execute();
      // The list's stats: every webhook of an environment over the last day, one range.
      await db.schema.createIndex('iw_webhook_hours_env').on('iw_webhook_hours').columns(['environment', 'hour']).execute();
    },
  },
  {
    version: 20,
    name: 'dashboard link access: links and sessions by token hash',
    async up(db) {
      // One table for both: a link and the session it starts differ only in kind and lifetime.
      // The key is the SHA-256 of the random token (docs/decisions/031-dashboard-link-access.md).
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
      // What the clean-up on each mint reads: the oldest expired grants first.
      await db.schema.createIndex('iw_dashboard_grants_expiry').on('iw_dashboard_grants').column('expires_at').execute();
    },
  },
  {
    version: 21,
    name: 'ordered delivery per subject',
    async up(db, dialect) {
      // Ordered delivery per subject (docs/ordering.md, decision 032). The webhook's
      // mode: null is `none`, 'per-subject' orders its deliveries by subject.
      await db.schema.alterTable('iw_webhooks').addColumn('ordering', 'text').execute();
      // One row per delivery of an ordered webhook that has a subject, kept apart from
      // iw_deliveries so neither the claim's columns nor its stored function change (as
      // iw_paced). `seq` is its place in its subject's queue, set while the delivery is pending
      // or held and null once it ended (kept, so a resend knows its subject).
      await db.schema
        .createTable('iw_ordered')
        .addColumn('delivery_id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('seq', 'bigint')
        .execute();
      // A subject's queue, in order: its head, its last place, whether it has one.
      await db.schema
        .createIndex('iw_ordered_queue')
        .on('iw_ordered')
        .columns(['webhook_id', 'subject', 'seq'])
        .where(sql.ref('seq'), 'is not', null)
        .execute();
      await db.schema.createIndex('iw_ordered_webhook').on('iw_ordered').column('webhook_id').execute();
      if (dialect === 'postgres') {
        await db.executeQuery(CompiledQuery.raw(EMIT_FUNCTION_V2));
        await db.executeQuery(CompiledQuery.raw(DEQUEUE_FUNCTION));
      }
    },
  },
  {
    version: 22,
    name: 'hourly counters by hour (retention)',
    async up(db) {
      // Retention deletes the counters of old hours across environments, oldest first, a batch
      // at a time (`retention.ts`): an index led by the hour. It changes only when a webhook's
      // hour gets its first row (never on the additions to it), so recording stays as it was.
      await db.schema.createIndex('iw_webhook_hours_hour').on('iw_webhook_hours').column('hour').execute();
    },
  },
  {
    version: 23,
    name: 'the record of successes: the queue step and the counters as functions (PostgreSQL)',
    async up(db, dialect) {
      // The queue step of an ordered webhook's successes inside the record's one statement
      // (adapters/postgres/record.ts), where it was a transaction of its own statements; and the
      // hourly counters' additions of that statement, planned once per connection.
      if (dialect !== 'postgres') return;
      await db.executeQuery(CompiledQuery.raw(PROMOTE_FUNCTION));
      await db.executeQuery(CompiledQuery.raw(TALLY_FUNCTION));
    },
  },
  {
    version: 24,
    name: "the settled hours' packs (the list's first call)",
    async up(db) {
      // One row per environment and settled hour holding every webhook's counts of that hour as
      // one text (`packs.ts`, docs/decisions/035-hour-packs.md): the list's first call reads 22
      // of them instead of 22,000 counter rows. Written by a chore once the hour settles, never
      // on the recording path; the key serves the list's range, the index on the hour the chore's
      // "latest packed" and retention.
      await db.schema
        .createTable('iw_hour_packs')
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('counts', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('iw_hour_packs_pk', ['environment', 'hour'])
        .execute();
      await db.schema.createIndex('iw_hour_packs_hour').on('iw_hour_packs').column('hour').execute();
    },
  },
  {
    version: 25,
    name: 'events by subject and email (what was sent about a user)',
    async up(db, dialect) {
      // What an event is about, to find every delivery about a user or an organization across
      // the environment's webhooks (Store.searchEvents): its subject as emit found it (the
      // catalog's pointer) and its user's email, lowercased, both written with the event. Not a
      // column generated from `data`: PostgreSQL's jsonb refuses some JSON that `data` keeps (a
      // \u0000 escape), and a generated column would refuse those emits. Partial indexes: events
      // without one cost them nothing.
      await db.schema.alterTable('iw_events').addColumn('subject', 'text').execute();
      await db.schema.alterTable('iw_events').addColumn('email', 'text').execute();
      // And whether it is a test event, so the log marks one without reading its data.
      await db.schema.alterTable('iw_events').addColumn('test', 'integer').execute();
      if (dialect === 'postgres') await db.executeQuery(CompiledQuery.raw(EMIT_FUNCTION_V3));
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
    },
  },
];

/**
 * PostgreSQL's claim that leaves nothing out (`adapters/postgres/claim.ts` calls it), as a
 * PL/pgSQL function. A statement sent as text is planned at every call, and planning cost several
 * times the execution of an idle claim; named prepared statements did not help (the plan
 * cache kept choosing custom plans). A function's own `SET plan_cache_mode` holds only while it
 * runs, so each connection plans this query once and reuses that plan, without changing
 * anything of a host's session or needing a named statement a pooler could lose.
 *
 * A generic plan does not know `p_limit`, so the update takes its rows by `id = any(array(...))`
 * (an index lookup per id whatever the planner guesses); joined to the `due` CTE instead, the
 * generic plan hash-joined a sequential scan of the whole table.
 * The plan is kept for the connection's life, until an ANALYZE of a table it reads: one made
 * while the table was empty (a new install) read the whole table by a sequential scan and a sort
 * once 200,000 rows had arrived and no ANALYZE had yet run (dozens of times the index plan). Every
 * step of this claim has an index made for it, so sequential scans and sorts are switched off
 * for the function alone: its plan is the index plan whatever the statistics said when it was
 * made.
 * The columns are listed, not `*`: a column added to `iw_deliveries` later must not break
 * claims; a test checks that this function returns every column of the table, so such a
 * migration replaces it too. Frozen like every migration: a changed claim is a new function.
 */
const CLAIM_DUE_FUNCTION_V1 = `
create or replace function iw_claim_due(p_now bigint, p_limit integer, p_worker text, p_until bigint)
returns table (
  id text, environment text, webhook_id text, event_id text, status text, attempt_count integer,
  next_attempt_at bigint, locked_by text, locked_until bigint, last_attempt_at bigint, last_result text,
  created_at bigint, updated_at bigint, event_type text, last_error text, claimed_due_at bigint,
  webhooks json, events json, next_delivery bigint, next_notice bigint)
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_sort = off
as $claim$
#variable_conflict use_column
begin
  return query
  with "due" as (
    select "id" from "iw_deliveries" where "status" = 'pending' and "next_attempt_at" <= p_now
    order by "next_attempt_at" limit p_limit for update skip locked),
  "claimed" as (
    update "iw_deliveries" set "locked_by" = p_worker, "locked_until" = p_until, "next_attempt_at" = p_until,
      "updated_at" = p_now, "claimed_due_at" = "iw_deliveries"."next_attempt_at"
    where "iw_deliveries"."id" = any(array(select "due"."id" from "due"))
    returning "iw_deliveries"."id", "iw_deliveries"."environment", "iw_deliveries"."webhook_id",
      "iw_deliveries"."event_id", "iw_deliveries"."status", "iw_deliveries"."attempt_count",
      "iw_deliveries"."next_attempt_at", "iw_deliveries"."locked_by", "iw_deliveries"."locked_until",
      "iw_deliveries"."last_attempt_at", "iw_deliveries"."last_result", "iw_deliveries"."created_at",
      "iw_deliveries"."updated_at", "iw_deliveries"."event_type", "iw_deliveries"."last_error",
      "iw_deliveries"."claimed_due_at")
  select "c"."id", "c"."environment", "c"."webhook_id", "c"."event_id", "c"."status", "c"."attempt_count",
    "c"."next_attempt_at", "c"."locked_by", "c"."locked_until", "c"."last_attempt_at", "c"."last_result",
    "c"."created_at", "c"."updated_at", "c"."event_type", "c"."last_error", "c"."claimed_due_at",
    case when row_number() over () = 1 then (select json_agg((select row_to_json("w".*) from "iw_webhooks" "w" where "w"."id" = "d"."webhook_id")) from (select distinct "claimed"."webhook_id" from "claimed") "d") end,
    case when row_number() over () = 1 then (select json_agg((select row_to_json("e".*) from "iw_events" "e" where "e"."id" = "d"."event_id")) from (select distinct "claimed"."event_id" from "claimed") "d") end,
    "next"."delivery", "next"."notice"
  from (select
      case when not exists (select from "claimed") then (select "n"."next_attempt_at" from "iw_deliveries" "n" where "n"."status" = 'pending' order by "n"."next_attempt_at" limit 1) end as "delivery",
      case when not exists (select from "claimed") then (select "o"."next_attempt_at" from "iw_notices" "o" where "o"."status" = 'pending' order by "o"."next_attempt_at" limit 1) end as "notice") "next"
    left join "claimed" "c" on true;
end
$claim$`;

/**
 * Migration 12's claim (`adapters/postgres/claim.ts` calls it): migration 8's, with the lease in
 * place. The due rows are those whose lease, if any, has run out; the update sets the lease and
 * `claimed_due_at` and nothing indexed, so PostgreSQL can make it HOT; the next due time of an
 * empty claim skips leased rows. Otherwise the same text, for the same reasons (see
 * {@link CLAIM_DUE_FUNCTION_V1}); `p_now` is now only compared, never written. Frozen like every
 * migration.
 */
const CLAIM_DUE_FUNCTION_V2 = `
create or replace function iw_claim_due_2(p_now bigint, p_limit integer, p_worker text, p_until bigint)
returns table (
  id text, environment text, webhook_id text, event_id text, status text, attempt_count integer,
  next_attempt_at bigint, locked_by text, locked_until bigint, last_attempt_at bigint, last_result text,
  created_at bigint, updated_at bigint, event_type text, last_error text, claimed_due_at bigint,
  webhooks json, events json, next_delivery bigint, next_notice bigint)
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_sort = off
as $claim$
#variable_conflict use_column
begin
  return query
  with "due" as (
    select "id" from "iw_deliveries" where "status" = 'pending' and "next_attempt_at" <= p_now
      and ("locked_until" is null or "locked_until" <= p_now)
    order by "next_attempt_at" limit p_limit for update skip locked),
  "claimed" as (
    update "iw_deliveries" set "locked_by" = p_worker, "locked_until" = p_until,
      "claimed_due_at" = "iw_deliveries"."next_attempt_at"
    where "iw_deliveries"."id" = any(array(select "due"."id" from "due"))
    returning "iw_deliveries"."id", "iw_deliveries"."environment", "iw_deliveries"."webhook_id",
      "iw_deliveries"."event_id", "iw_deliveries"."status", "iw_deliveries"."attempt_count",
      "iw_deliveries"."next_attempt_at", "iw_deliveries"."locked_by", "iw_deliveries"."locked_until",
      "iw_deliveries"."last_attempt_at", "iw_deliveries"."last_result", "iw_deliveries"."created_at",
      "iw_deliveries"."updated_at", "iw_deliveries"."event_type", "iw_deliveries"."last_error",
      "iw_deliveries"."claimed_due_at")
  select "c"."id", "c"."environment", "c"."webhook_id", "c"."event_id", "c"."status", "c"."attempt_count",
    "c"."next_attempt_at", "c"."locked_by", "c"."locked_until", "c"."last_attempt_at", "c"."last_result",
    "c"."created_at", "c"."updated_at", "c"."event_type", "c"."last_error", "c"."claimed_due_at",
    case when row_number() over () = 1 then (select json_agg((select row_to_json("w".*) from "iw_webhooks" "w" where "w"."id" = "d"."webhook_id")) from (select distinct "claimed"."webhook_id" from "claimed") "d") end,
    case when row_number() over () = 1 then (select json_agg((select row_to_json("e".*) from "iw_events" "e" where "e"."id" = "d"."event_id")) from (select distinct "claimed"."event_id" from "claimed") "d") end,
    "next"."delivery", "next"."notice"
  from (select
      case when not exists (select from "claimed") then (select "n"."next_attempt_at" from "iw_deliveries" "n" where "n"."status" = 'pending' and "n"."locked_by" is null order by "n"."next_attempt_at" limit 1) end as "delivery",
      case when not exists (select from "claimed") then (select "o"."next_attempt_at" from "iw_notices" "o" where "o"."status" = 'pending' order by "o"."next_attempt_at" limit 1) end as "notice") "next"
    left join "claimed" "c" on true;
end
$claim$`;

/**
 * PostgreSQL's `emit` (`adapters/postgres/emit.ts` calls it): the event, a delivery per enabled
 * webhook of the environment subscribed to the type, and the wake-up hint, as one statement, in a
 * PL/pgSQL function so each connection parses and plans it once. Sent as text, the statement
 * was parsed, analysed and planned at every call, about a third of its time; a named prepared
 * statement was no faster than this function, and a transaction-mode pooler can lose it (nor
 * can Kysely send one): docs/decisions/019-postgres-stored-functions.md.
 *
 * - `p_ids`: the engine's delivery ids, taken by rank; with more subscribed webhooks than ids it
 *   writes nothing at all (not even the event) and says how many it needed.
 * - The event is inserted `on conflict (id) do nothing`: a transient retry after a lost reply writes
 *   nothing, and `inserted` says so.
 * - `woke` reads `made`, so the hint goes out only when deliveries were written, and only with
 *   `p_notify`; the outer query returns `woke` (a CTE nobody reads never runs, and an output
 *   nobody reads may be planned away). The channel is
 *   `WAKE_CHANNEL` (`adapters/postgres/notify.ts`), written out here because this text is frozen.
 * - Rows come back in `p_ids` order; the outer query always has one (`made` left-joined), so an
 *   event nobody subscribes to still answers with its counts.
 *
 * Every step has an index (webhooks by environment, events and deliveries by primary key), and
 * sequential scans are off for the function alone, as in `iw_claim_due`, where a plan made on
 * empty tables was seen to scan them for the connection's life. Here that is a precaution: the
 * plan made on empty tables already reads `iw_webhooks_env` without it (a test checks the plan).
 * Frozen like every migration: a changed emit is a new function.
 */
const EMIT_FUNCTION_V1 = `
create or replace function iw_emit(p_id text, p_environment text, p_type text, p_source text, p_data text,
  p_event_timestamp bigint, p_created_at bigint, p_traceparent text, p_ids text[], p_notify boolean)
returns table (id text, hook text, inserted bigint, needed bigint, woke bigint)
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $emit$
#variable_conflict use_column
begin
  return query
  with "hooks" as (
    select "w"."id", row_number() over (order by "w"."created_at", "w"."id") as "n" from "iw_webhooks" "w"
    where "w"."environment" = p_environment and "w"."status" = 'enabled' and "w"."event_types"::jsonb ? p_type
  ), "ev" as (
    insert into "iw_events" ("id", "environment", "type", "source", "data", "event_timestamp", "created_at", "traceparent")
    select p_id, p_environment, p_type, p_source, p_data, p_event_timestamp, p_created_at, p_traceparent
    where (select count(*) from "hooks") <= cardinality(p_ids)
    on conflict ("id") do nothing
    returning 1
  ), "made" as (
    insert into "iw_deliveries" ("id", "environment", "webhook_id", "event_id", "status", "attempt_count", "next_attempt_at",
      "event_type", "created_at", "updated_at")
    select p_ids["h"."n"], p_environment, "h"."id", p_id, 'pending', 0, p_created_at, p_type, p_created_at, p_created_at
    from "hooks" "h" where exists (select from "ev")
    returning "iw_deliveries"."id", "iw_deliveries"."webhook_id"
  ), "woke" as (
    select pg_notify('identity_webhooks_wake', '') from "made" where p_notify limit 1
  )
  select "made"."id", "made"."webhook_id", "s"."inserted", "s"."needed", "s"."woke"
  from (select (select count(*) from "ev") as "inserted", (select count(*) from "hooks") as "needed",
      (select count(*) from "woke") as "woke") "s"
    left join "made" on true
  order by array_position(p_ids, "made"."id");
end
$emit$`;

/**
 * Migration 21's emit (migration 25's `iw_emit_3`, which `adapters/postgres/emit.ts` calls, is made
 * from its text): migration 11's `iw_emit`, with the
 * event's subject (`p_subject`, null for none) and ordered delivery per subject
 * (docs/decisions/032-ordered-delivery-per-subject.md). For each subscribed webhook whose
 * `ordering` is 'per-subject', the function first takes the transaction-level advisory lock of
 * (webhook, subject) in key order (class 0x69770004, the key `hashtext(webhook id, newline,
 * subject)`, as `adapters/kysely/ordering.ts` takes it), so the emits, outcomes and resends of
 * one subject take turns; the statement after the locks sees what the previous holder committed.
 * Then a delivery of an ordered webhook whose subject still has a delivery pending or held
 * (a row of `iw_ordered` with a `seq`) is written pending but not due (`next_attempt_at` null)
 * and takes the next place; otherwise it is due as always and takes place 1. `due` answers each
 * delivery's `next_attempt_at`. Without a subject, or without ordered webhooks, it does what
 * `iw_emit` did. Frozen like every migration.
 */
const EMIT_FUNCTION_V2 = `
create or replace function iw_emit_2(p_id text, p_environment text, p_type text, p_source text, p_data text,
  p_event_timestamp bigint, p_created_at bigint, p_traceparent text, p_ids text[], p_notify boolean, p_subject text)
returns table (id text, hook text, inserted bigint, needed bigint, woke bigint, due bigint)
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $emit$
#variable_conflict use_column
declare
  k integer;
begin
  if p_subject is not null then
    for k in
      select distinct hashtext("w"."id" || chr(10) || p_subject) from "iw_webhooks" "w"
      where "w"."environment" = p_environment and "w"."status" = 'enabled' and "w"."ordering" = 'per-subject'
        and "w"."event_types"::jsonb ? p_type
      order by 1
    loop
      perform pg_advisory_xact_lock(1769406468, k);
    end loop;
  end if;
  return query
  with "hooks" as (
    select "w"."id", (p_subject is not null and "w"."ordering" = 'per-subject') as "ordered",
      row_number() over (order by "w"."created_at", "w"."id") as "n" from "iw_webhooks" "w"
    where "w"."environment" = p_environment and "w"."status" = 'enabled' and "w"."event_types"::jsonb ? p_type
  ), "ev" as (
    insert into "iw_events" ("id", "environment", "type", "source", "data", "event_timestamp", "created_at", "traceparent")
    select p_id, p_environment, p_type, p_source, p_data, p_event_timestamp, p_created_at, p_traceparent
    where (select count(*) from "hooks") <= cardinality(p_ids)
    on conflict ("id") do nothing
    returning 1
  ), "queue" as (
    select "h"."id", (select max("o"."seq") from "iw_ordered" "o"
      where "o"."webhook_id" = "h"."id" and "o"."subject" = p_subject and "o"."seq" is not null) as "last"
    from "hooks" "h" where "h"."ordered"
  ), "made" as (
    insert into "iw_deliveries" ("id", "environment", "webhook_id", "event_id", "status", "attempt_count", "next_attempt_at",
      "event_type", "created_at", "updated_at")
    select p_ids["h"."n"], p_environment, "h"."id", p_id, 'pending', 0,
      case when "q"."last" is null then p_created_at end, p_type, p_created_at, p_created_at
    from "hooks" "h" left join "queue" "q" on "q"."id" = "h"."id" where exists (select from "ev")
    returning "iw_deliveries"."id", "iw_deliveries"."webhook_id", "iw_deliveries"."next_attempt_at"
  ), "placed" as (
    insert into "iw_ordered" ("delivery_id", "webhook_id", "subject", "seq")
    select "m"."id", "m"."webhook_id", p_subject, coalesce("q"."last", 0) + 1
    from "made" "m" join "queue" "q" on "q"."id" = "m"."webhook_id"
    returning 1
  ), "woke" as (
    select pg_notify('identity_webhooks_wake', '') from "made" where p_notify and "made"."next_attempt_at" is not null limit 1
  )
  select "made"."id", "made"."webhook_id", "s"."inserted", "s"."needed", "s"."woke", "made"."next_attempt_at"
  from (select (select count(*) from "ev") as "inserted", (select count(*) from "hooks") as "needed",
      (select count(*) from "woke") as "woke") "s"
    left join "made" on true
  order by array_position(p_ids, "made"."id");
end
$emit$`;

/**
 * Migration 25's `iw_emit_3`: `iw_emit_2` with one more argument, `p_email`, and the event's row
 * keeps its subject and email, which the search by subject reads; the rules are V2's. Made from
 * V2's frozen text by these changes, each checked to apply.
 */
const EMIT_FUNCTION_V3 = [
  ['create or replace function iw_emit_2(', 'create or replace function iw_emit_3('],
  ['p_notify boolean, p_subject text)', 'p_notify boolean, p_subject text, p_email text)'],
  [
    `"created_at", "traceparent")
    select p_id, p_environment, p_type, p_source, p_data, p_event_timestamp, p_created_at, p_traceparent
`,
    `"created_at", "traceparent", "subject", "email")
    select p_id, p_environment, p_type, p_source, p_data, p_event_timestamp, p_created_at, p_traceparent, p_subject, p_email
`,
  ],
].reduce((text, [before, after]) => {
  if (!text.includes(before!)) throw new Error(`migration 25: the emit function has no ${JSON.stringify(before)} to change`);
  return text.replace(before!, after!);
}, EMIT_FUNCTION_V2);

/**
 * Migration 21's `iw_dequeue` (`adapters/kysely/ordering.ts` calls it, in the transaction that
 * recorded the outcomes): the deliveries of `p_ids` that ended (delivered or failed) leave their
 * subjects' queues; then, in key order, the queues' advisory locks (as `iw_emit_2` takes them);
 * then, in a statement that sees what the previous holders committed, the first of each of those
 * queues, if it waits, becomes due `p_now`. True when one did. One round trip where the three
 * statements were three. Frozen like every migration.
 */
const DEQUEUE_FUNCTION = `
create or replace function iw_dequeue(p_ids text[], p_now bigint)
returns boolean
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $dequeue$
declare
  v_w text[];
  v_s text[];
  k integer;
  n bigint;
begin
  -- Both by primary key: written as a correlated exists, the plan read every finished delivery.
  with "left" as (
    update "iw_ordered" "o" set "seq" = null
    where "o"."delivery_id" = any(array(
        select "d"."id" from "iw_deliveries" "d" where "d"."id" = any(p_ids) and "d"."status" in ('delivered', 'failed')))
      and "o"."seq" is not null
    returning "o"."webhook_id", "o"."subject")
  select array_agg("webhook_id"), array_agg("subject") into v_w, v_s from "left";
  if v_w is null then
    return false;
  end if;
  for k in select distinct hashtext("t"."w" || chr(10) || "t"."s") from unnest(v_w, v_s) as "t"("w", "s") order by 1
  loop
    perform pg_advisory_xact_lock(1769406468, k);
  end loop;
  -- By primary key (id = any(array(...))): joined to the heads instead, a generic plan may read
  -- every waiting row of the due index (next_attempt_at is null), a cost that grows with the queues.
  update "iw_deliveries" set "next_attempt_at" = p_now, "updated_at" = p_now
  where "id" = any(array(
    select (select "o"."delivery_id" from "iw_ordered" "o" where "o"."webhook_id" = "q"."w" and "o"."subject" = "q"."s"
      and "o"."seq" is not null order by "o"."seq" limit 1)
    from (select distinct "t"."w", "t"."s" from unnest(v_w, v_s) as "t"("w", "s")) "q"))
    and "status" = 'pending' and "next_attempt_at" is null;
  get diagnostics n = row_count;
  return n > 0;
end
$dequeue$`;

/**
 * Migration 23's `iw_tally`: the hourly counters' additions for a statement's attempts (one
 * element of each array per attempt), summed as `tallyHours` (src/stats.ts) sums them
 * (grouped per webhook and hour, in that order, so concurrent writers lock the rows alike). A
 * function so that PostgreSQL plans this insert once per connection: inside the statement that
 * records a group of successes, sent as text, the tally was planned again with every group, most of
 * what the counters cost a record. Its generic plan is the custom one (nothing in it depends on
 * the values). Frozen like every migration.
 */
const TALLY_FUNCTION = `
create or replace function iw_tally(p_environment text[], p_webhook_id text[], p_started_at bigint[], p_duration_ms int[], p_success boolean[])
returns integer
language plpgsql volatile
set plan_cache_mode = force_generic_plan
as $tally$
declare
  n integer;
begin
  if p_webhook_id is null then
    return 0;
  end if;
  insert into "iw_webhook_hours" ("environment", "webhook_id", "hour", "succeeded", "failed", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9")
  select "e", "w", "h", count(*) filter (where "s"), count(*) filter (where not "s"), count(*) filter (where "b" = 0), count(*) filter (where "b" = 1), count(*) filter (where "b" = 2), count(*) filter (where "b" = 3), count(*) filter (where "b" = 4), count(*) filter (where "b" = 5), count(*) filter (where "b" = 6), count(*) filter (where "b" = 7), count(*) filter (where "b" = 8), count(*) filter (where "b" = 9)
  from (select "r"."e", "r"."w", "r"."t" - ("r"."t" % 3600000) as "h", "r"."s",
      width_bucket("r"."ms", '{25,50,100,250,500,1000,2500,5000,10000}'::int[]) as "b"
    from unnest(p_environment, p_webhook_id, p_started_at, p_duration_ms, p_success) as "r"("e", "w", "t", "ms", "s")) "a"
  group by 1, 2, 3 order by 2, 3
  on conflict ("webhook_id", "hour") do update set "succeeded" = "iw_webhook_hours"."succeeded" + excluded."succeeded", "failed" = "iw_webhook_hours"."failed" + excluded."failed", "d0" = "iw_webhook_hours"."d0" + excluded."d0", "d1" = "iw_webhook_hours"."d1" + excluded."d1", "d2" = "iw_webhook_hours"."d2" + excluded."d2", "d3" = "iw_webhook_hours"."d3" + excluded."d3", "d4" = "iw_webhook_hours"."d4" + excluded."d4", "d5" = "iw_webhook_hours"."d5" + excluded."d5", "d6" = "iw_webhook_hours"."d6" + excluded."d6", "d7" = "iw_webhook_hours"."d7" + excluded."d7", "d8" = "iw_webhook_hours"."d8" + excluded."d8", "d9" = "iw_webhook_hours"."d9" + excluded."d9";
  get diagnostics n = row_count;
  return n;
end
$tally$`;

/**
 * Migration 23's `iw_promote`, called by the statement that records an ordered webhook's
 * successes (`adapters/postgres/record.ts`) with the queues its delivered rows left (`p_w`,
 * `p_s`: webhook and subject, one pair per delivery that left): the queues' advisory locks in key
 * order (as `iw_emit_2` takes them), then, in a statement of its own, which sees what those
 * locks' previous holders committed and what the calling statement changed so far, the first of
 * each queue, if it waits, becomes due `p_now`. When one did and `p_tag` is given, the wake-up
 * goes out with `p_tag` as its payload (the recording worker's id: its own listener skips it).
 * True when one did. `iw_dequeue`'s last two steps, without its read of the ended deliveries
 * (the caller knows them). Frozen like every migration.
 */
const PROMOTE_FUNCTION = `
create or replace function iw_promote(p_w text[], p_s text[], p_now bigint, p_tag text)
returns boolean
language plpgsql volatile
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $promote$
declare
  k integer;
  n bigint;
begin
  if p_w is null or cardinality(p_w) = 0 then
    return false;
  end if;
  for k in select distinct hashtext("t"."w" || chr(10) || "t"."s") from unnest(p_w, p_s) as "t"("w", "s") order by 1
  loop
    perform pg_advisory_xact_lock(1769406468, k);
  end loop;
  update "iw_deliveries" set "next_attempt_at" = p_now, "updated_at" = p_now
  where "id" = any(array(
    select (select "o"."delivery_id" from "iw_ordered" "o" where "o"."webhook_id" = "q"."w" and "o"."subject" = "q"."s"
      and "o"."seq" is not null order by "o"."seq" limit 1)
    from (select distinct "t"."w", "t"."s" from unnest(p_w, p_s) as "t"("w", "s")) "q"))
    and "status" = 'pending' and "next_attempt_at" is null;
  get diagnostics n = row_count;
  if n > 0 and p_tag is not null then
    perform pg_notify('identity_webhooks_wake', p_tag);
  end if;
  return n > 0;
end
$promote$`;

/**
 * Applies what is missing, each migration in its own transaction with its ledger row. `guard`
 * (PostgreSQL: a transaction-level advisory lock, which works through a transaction-mode pooler)
 * runs first in each of those transactions, the ledger's creation included, so processes that
 * start together take turns and each finds the work of the one before.
 */
export async function runMigrations(
  db: Kysely<EngineTables>,
  dialect: 'sqlite' | 'postgres',
  now: number,
  guard?: (trx: Kysely<EngineTables>) => Promise<void>,
): Promise<number[]> {
  const ledger = (on: Kysely<EngineTables>) =>
    on.schema
      .createTable('iw_migrations')
      .ifNotExists()
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute();
  if (guard)
    await db.transaction().execute(async (trx) => {
      await guard(trx);
      await ledger(trx);
    });
  else await ledger(db);
  const done = new Set((await db.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version)));
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    const ran = await db.transaction().execute(async (trx) => {
      await guard?.(trx);
      // Looked at again under the transaction's write lock (or the guard): another process may
      // have applied it since we read the ledger (SQLite files shared by several processes take this path).
      const already = await trx.selectFrom('iw_migrations').select('version').where('version', '=', m.version).executeTakeFirst();
      if (already) return false;
      await m.up(trx, dialect);
      await trx.insertInto('iw_migrations').values({ version: m.version, name: m.name, applied_at: now }).execute();
      return true;
    });
    if (ran) applied.push(m.version);
  }
  return applied;
}
