import { type Kysely, type QueryCreator, type RawBuilder, sql, type Transaction } from 'kysely';
import { WebhookDisabledError } from '../../src/errors.js';
import type { DeliveryRecord, DeliveryStatus } from '../../src/model.js';
import type { DeliveryCursor, DeliveryFilter } from '../../src/store.js';
import { toDelivery } from './rows.js';
import type { DeliveryRow, EngineTables } from './schema.js';

type Db = Kysely<EngineTables>;
type Trx = Transaction<EngineTables>;

/**
 * The delivery log and the operations on it (resend, recover): the SQL behind
 * `Store.listDeliveries`, `resendDelivery` and `recoverFailed`.
 */

/** Every status a delivery can have: the ranges a page of one webhook's whole log merges. */
const STATUSES = ['pending', 'held', 'delivered', 'failed'] as const;
// A status added to the model and not here would drop out of those pages: a type error instead.
const everyStatus: Exclude<DeliveryStatus, (typeof STATUSES)[number]> extends never ? true : never = true;
void everyStatus;

/**
 * One page, newest first, from the index (webhook_id[, status | event_type], created_at, id); one
 * row more tells if a page follows. A webhook's whole log has no index of its own (migrations
 * 10 and 13): the page is the newest of the newest `limit + 1` of each status, a backward range
 * of `iw_deliveries_log_status` each, four bounded reads merged. Every index keyed by webhook
 * costs every emitted delivery an entry on a page of its own (and on PostgreSQL every claim and
 * outcome too; see migration 9), and a page costs this once.
 */
export async function listPage(
  db: Db,
  environment: string,
  filter: DeliveryFilter,
): Promise<{ deliveries: DeliveryRecord[]; next: DeliveryCursor | null }> {
  const limit = filter.limit ?? 25;
  const after = filter.after;
  const range = { since: filter.since, until: filter.until };
  const wholeLog =
    filter.webhookId !== undefined &&
    filter.status === undefined &&
    filter.eventType === undefined &&
    filter.eventId === undefined &&
    filter.deliveryId === undefined;
  if (wholeLog) {
    const { rows } = await wholeLogPage(environment, filter.webhookId!, after ?? null, limit + 1, range).execute(db);
    return pageOf(rows, limit);
  }
  let q = db.selectFrom('iw_deliveries').selectAll().where('environment', '=', environment);
  if (filter.webhookId !== undefined) q = q.where('webhook_id', '=', filter.webhookId);
  if (filter.eventId !== undefined) q = q.where('event_id', '=', filter.eventId);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  if (filter.eventType !== undefined) q = q.where('event_type', '=', filter.eventType);
  if (filter.deliveryId !== undefined) q = q.where('id', '=', filter.deliveryId);
  // A date range bounds the same index range the page walks (created_at follows the key's prefix).
  if (range.since !== undefined) q = q.where('created_at', '>=', range.since);
  if (range.until !== undefined) q = q.where('created_at', '<', range.until);
  if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.createdAt, after.id)));
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return pageOf(rows, limit);
}

/** Each status's range's name in {@link wholeLogPage}. */
const RANGE: Record<DeliveryStatus, RawBuilder<unknown>> = {
  pending: sql`"range_pending"`,
  held: sql`"range_held"`,
  delivered: sql`"range_delivered"`,
  failed: sql`"range_failed"`,
};

/**
 * The page of a webhook's whole log: the newest `rows` of each status's range, merged (see
 * {@link listPage}). Each range is a subquery of its own, a form both databases take (SQLite
 * has no parenthesized member with its own ORDER BY in a compound).
 */
export function wholeLogPage(
  environment: string,
  webhookId: string,
  after: DeliveryCursor | null,
  rows: number,
  range: { since?: number | undefined; until?: number | undefined } = {},
) {
  const branch = (status: DeliveryStatus) =>
    sql`select * from (select * from "iw_deliveries" where "environment" = ${environment} and "webhook_id" = ${webhookId} and "status" = ${status}${
      after ? sql` and ("created_at", "id") < (${after.createdAt}, ${after.id})` : sql``
    }${range.since !== undefined ? sql` and "created_at" >= ${range.since}` : sql``}${
      range.until !== undefined ? sql` and "created_at" < ${range.until}` : sql``
    } order by "created_at" desc, "id" desc limit ${rows}) as ${RANGE[status]}`;
  return sql<DeliveryRow>`select * from (${sql.join(STATUSES.map(branch), sql` union all `)}) as "page" order by "created_at" desc, "id" desc limit ${rows}`;
}

function pageOf(rows: DeliveryRow[], limit: number): { deliveries: DeliveryRecord[]; next: DeliveryCursor | null } {
  const deliveries = rows.slice(0, limit).map(toDelivery);
  const last = deliveries.at(-1);
  return { deliveries, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/**
 * The webhook's status, read under a share lock on PostgreSQL: a disable waits for this
 * transaction, so it cannot commit between our check and our writes and leave pending
 * deliveries on a disabled webhook.
 */
async function webhookStatus(trx: Trx, environment: string, webhookId: string, rowLocks: boolean): Promise<string | null> {
  let q = trx.selectFrom('iw_webhooks').select('status').where('environment', '=', environment).where('id', '=', webhookId);
  if (rowLocks) q = q.forShare();
  return (await q.executeTakeFirst())?.status ?? null;
}

export async function resend(trx: Trx, environment: string, id: string, now: number, rowLocks: boolean): Promise<DeliveryRecord | null> {
  const current = await trx
    .selectFrom('iw_deliveries')
    .select('webhook_id')
    .where('environment', '=', environment)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!current) return null;
  const status = await webhookStatus(trx, environment, current.webhook_id, rowLocks);
  if (status === null) return null;
  if (status !== 'enabled') throw new WebhookDisabledError(current.webhook_id);
  // A live lease means an attempt is in flight right now: that is the attempt asked for, and
  // queueing another would send the message twice at once.
  const queue = (db: QueryCreator<EngineTables>) =>
    db
      .updateTable('iw_deliveries')
      .set({ status: 'pending', next_attempt_at: now, locked_by: null, locked_until: null, updated_at: now })
      .where('environment', '=', environment)
      .where('id', '=', id)
      .where('status', 'in', ['pending', 'delivered', 'failed'])
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .returningAll();
  if (rowLocks) {
    // PostgreSQL: one statement, so when nothing was queued the row answered is the row the update
    // saw. As two statements, an attempt's outcome committing between them (the update saw the
    // attempt in flight and changed nothing) answered `delivered` for a resend that queued nothing.
    // Not a row lock either: waiting for the attempt's lock would deadlock with its outcome, which
    // locks the delivery and then the webhook this transaction holds FOR SHARE.
    const rows = await trx
      .with('queued', (db) => queue(db))
      .selectFrom('queued')
      .selectAll()
      .unionAll((db) =>
        db
          .selectFrom('iw_deliveries')
          .selectAll()
          .where('id', '=', id)
          .where((eb) => eb.not(eb.exists(eb.selectFrom('queued').select('queued.id')))),
      )
      .execute();
    return toDelivery(rows[0]!);
  }
  const row = await queue(trx).executeTakeFirst();
  if (row) return toDelivery(row);
  const unchanged = await trx.selectFrom('iw_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return toDelivery(unchanged);
}

export async function recoverBatch(
  trx: Trx,
  environment: string,
  webhookId: string,
  args: { since: number; until: number; now: number; limit: number; after: DeliveryCursor | null },
  rowLocks: boolean,
): Promise<{ recovered: number; last: DeliveryCursor | null } | null> {
  const status = await webhookStatus(trx, environment, webhookId, rowLocks);
  if (status === null) return null;
  if (status !== 'enabled') throw new WebhookDisabledError(webhookId);
  const { since, until, now, limit, after } = args;
  // Ascending from `after`, so each delivery is looked at once per recover, even if one queued
  // by an earlier batch has already failed again.
  let q = trx
    .selectFrom('iw_deliveries')
    .select(['id', 'created_at'])
    .where('webhook_id', '=', webhookId)
    .where('status', '=', sql.lit('failed'))
    .where('created_at', '>=', since)
    .where('created_at', '<', until);
  if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.createdAt, after.id)));
  const batch = await q.orderBy('created_at').orderBy('id').limit(limit).execute();
  if (batch.length === 0) return { recovered: 0, last: null };
  // `status = 'failed'` again here: on PostgreSQL a row another recover changed since our read
  // is re-checked under its lock and skipped, so it is queued (and counted) once.
  const done = await trx
    .updateTable('iw_deliveries')
    .set({ status: 'pending', next_attempt_at: now, updated_at: now })
    .where(
      'id',
      'in',
      batch.map((b) => b.id),
    )
    .where('status', '=', sql.lit('failed'))
    .executeTakeFirst();
  const tail = batch.at(-1)!;
  return {
    recovered: Number(done.numUpdatedRows),
    last: batch.length < limit ? null : { createdAt: Number(tail.created_at), id: tail.id },
  };
}
