import { type Kysely, type QueryCreator, type RawBuilder, sql, type Transaction } from 'kysely';
import { WebhookDisabledError } from '../../src/errors.js';
import type { DeliveryRecord, DeliveryStatus } from '../../src/model.js';
import type { DeliveryCursor, DeliveryFilter } from '../../src/store.js';
import { enqueue, isOrdered, subjectsOf } from './ordering.js';
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
async function webhookStatus(trx: Trx, environment: string, webhookId: string, rowLocks: boolean) {
  let q = trx.selectFrom('iw_webhooks').select(['status', 'ordering']).where('environment', '=', environment).where('id', '=', webhookId);
  if (rowLocks) q = q.forShare();
  const row = await q.executeTakeFirst();
  return { status: row?.status ?? null, ordered: isOrdered(row) };
}

/**
 * Ordered per subject: where a resent delivery stands in its subject's queue. `none`: it is not
 * ordered (its webhook does not order, or it was written without a subject); `head`: first in
 * its queue; `behind`: waiting in it (a resend leaves it there); `out`: its queue moved on
 * without it (it ended), so a resend puts it at the end.
 */
async function queuePlace(trx: Trx, id: string, ordered: boolean): Promise<'none' | 'head' | 'behind' | 'out'> {
  if (!ordered) return 'none';
  const row = await trx.selectFrom('iw_ordered').select(['webhook_id', 'subject', 'seq']).where('delivery_id', '=', id).executeTakeFirst();
  if (!row) return 'none';
  if (row.seq == null) return 'out';
  const head = await trx
    .selectFrom('iw_ordered')
    .select('delivery_id')
    .where('webhook_id', '=', row.webhook_id)
    .where('subject', '=', row.subject)
    .where('seq', 'is not', null)
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
  return head?.delivery_id === id ? 'head' : 'behind';
}

/** Puts queued deliveries (just made pending, due now) at the end of their subjects' queues; those behind another wait. */
async function requeueOrdered(trx: Trx, ids: readonly string[], rowLocks: boolean): Promise<Set<string>> {
  const placed = await subjectsOf(trx, ids);
  const inOrder = ids.map((id) => placed.get(id)).filter((p) => p !== undefined);
  const waiting = await enqueue(trx, inOrder, rowLocks);
  if (waiting.size > 0)
    await trx
      .updateTable('iw_deliveries')
      .set({ next_attempt_at: null })
      .where('id', 'in', [...waiting])
      .execute();
  return waiting;
}

export async function resend(trx: Trx, environment: string, id: string, now: number, rowLocks: boolean): Promise<DeliveryRecord | null> {
  const current = await trx
    .selectFrom('iw_deliveries')
    .select('webhook_id')
    .where('environment', '=', environment)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!current) return null;
  const { status, ordered } = await webhookStatus(trx, environment, current.webhook_id, rowLocks);
  if (status === null) return null;
  if (status !== 'enabled') throw new WebhookDisabledError(current.webhook_id);
  // Ordered per subject: a delivery waiting behind another keeps its place (sending it now would
  // pass the one before it); one whose queue moved on goes to the end of it.
  const place = await queuePlace(trx, id, ordered);
  if (place === 'behind')
    return toDelivery(await trx.selectFrom('iw_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
  const reordered = async (delivery: DeliveryRecord): Promise<DeliveryRecord> => {
    if (place !== 'out' || delivery.status !== 'pending' || delivery.nextAttemptAt !== now) return delivery;
    const waiting = await requeueOrdered(trx, [id], rowLocks);
    return waiting.has(id) ? { ...delivery, nextAttemptAt: null } : delivery;
  };
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
    return reordered(toDelivery(rows[0]!));
  }
  const row = await queue(trx).executeTakeFirst();
  if (row) return reordered(toDelivery(row));
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
  const { status, ordered } = await webhookStatus(trx, environment, webhookId, rowLocks);
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
    .returning('id')
    .execute();
  // Ordered per subject: each goes to the end of its subject's queue, in the order they were created.
  if (ordered && done.length > 0) {
    const queued = new Set(done.map((d) => d.id));
    await requeueOrdered(
      trx,
      batch.map((b) => b.id).filter((id) => queued.has(id)),
      rowLocks,
    );
  }
  const tail = batch.at(-1)!;
  return {
    recovered: done.length,
    last: batch.length < limit ? null : { createdAt: Number(tail.created_at), id: tail.id },
  };
}

/**
 * One bounded batch of "send waiting now": up to `limit` pending deliveries of the webhook that
 * wait for a later attempt (`next_attempt_at > now`) made due `now`, soonest first (the partial
 * index `iw_deliveries_pending`). Only those last attempted before `now` (or never): one made due
 * by an earlier batch, attempted and failed again meanwhile, is not taken twice. Those in flight
 * (a live lease, checked again as they change) and those waiting behind another of their subject
 * (`next_attempt_at` null: ordered) are left as they are. `more`: a full batch was read (the
 * caller asks again). Null when the webhook is not found; throws WebhookDisabledError when it is
 * disabled (its deliveries are held, not waiting).
 */
export async function sendWaitingBatch(
  trx: Trx,
  environment: string,
  webhookId: string,
  { now, limit }: { now: number; limit: number },
  rowLocks: boolean,
): Promise<{ sent: number; more: boolean } | null> {
  const { status } = await webhookStatus(trx, environment, webhookId, rowLocks);
  if (status === null) return null;
  if (status !== 'enabled') throw new WebhookDisabledError(webhookId);
  const batch = await trx
    .selectFrom('iw_deliveries')
    .select('id')
    .where('webhook_id', '=', webhookId)
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '>', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .where((eb) => eb.or([eb('last_attempt_at', 'is', null), eb('last_attempt_at', '<', now)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  if (batch.length === 0) return { sent: 0, more: false };
  const done = await trx
    .updateTable('iw_deliveries')
    .set({ next_attempt_at: now, updated_at: now })
    .where(
      'id',
      'in',
      batch.map((b) => b.id),
    )
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '>', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .returning('id')
    .execute();
  return { sent: done.length, more: batch.length === limit };
}

/**
 * How many of the webhook's deliveries wait: pending (to be attempted), held (while it is
 * disabled), and `sendable`: the pending ones that "send waiting now" would take (waiting for a
 * later attempt, not in flight, not behind another of their subject).
 */
export async function countWaiting(db: Db, webhookId: string, now: number): Promise<{ pending: number; held: number; sendable: number }> {
  const rows = await db
    .selectFrom('iw_deliveries')
    .select(['status', (eb) => eb.fn.countAll<string | number>().as('n')])
    .where('webhook_id', '=', webhookId)
    .where('status', 'in', [sql.lit('pending'), sql.lit('held')])
    .groupBy('status')
    .execute();
  const sendable = await db
    .selectFrom('iw_deliveries')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('webhook_id', '=', webhookId)
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '>', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .executeTakeFirst();
  const of = (status: string) => Number(rows.find((r) => r.status === status)?.n ?? 0);
  return { pending: of('pending'), held: of('held'), sendable: Number(sendable?.n ?? 0) };
}
