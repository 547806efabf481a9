import { type Kysely, sql, type Transaction } from 'kysely';
import { maskHeaders } from '../../src/endpoint-options.js';
import { newId } from '../../src/ids.js';
import type { NoticeRecord, NoticeStatus, WebhookRecord } from '../../src/model.js';
import type { NoticeClaimArgs, NoticeOutcome } from '../../src/store.js';
import type { EngineTables, NoticeRow } from './schema.js';

type Db = Kysely<EngineTables>;
type Trx = Transaction<EngineTables>;
const PENDING = sql.lit('pending');

/**
 * The notice outbox's SQL. A notice is written in the transaction that disables the webhook (so
 * disabling and telling commit together), then claimed under a lease like a delivery: on
 * PostgreSQL with `SKIP LOCKED`, so two processes never hold the same notice.
 */
export async function writeNotice(trx: Trx, webhook: WebhookRecord, now: number): Promise<void> {
  // Credential header values are write-only: the notifier (and this payload) sees them masked.
  const info = {
    webhook: { ...webhook, headers: maskHeaders(webhook.headers) },
    failingSince: webhook.failingSince ?? now,
    disabledAt: webhook.disabledAt ?? now,
    lastError: webhook.lastError,
  };
  await trx
    .insertInto('iw_notices')
    .values({
      id: newId('notice', now),
      environment: webhook.environment,
      kind: 'webhook_disabled',
      webhook_id: webhook.id,
      payload: JSON.stringify(info),
      status: 'pending',
      attempt_count: 0,
      next_attempt_at: now,
      locked_by: null,
      locked_until: null,
      last_error: null,
      sent_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

export async function claimNotices(
  db: Db,
  { now, limit, workerId, leaseMs }: NoticeClaimArgs,
  skipLocked: boolean,
): Promise<NoticeRecord[]> {
  const until = now + leaseMs;
  const due = (qc: Pick<Db, 'selectFrom'>) =>
    qc
      .selectFrom('iw_notices')
      .select('id')
      .where('status', '=', PENDING)
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(limit);
  // The lease moves next_attempt_at like a delivery's: a process that dies mid-notice leaves it due again.
  const set = { locked_by: workerId, locked_until: until, next_attempt_at: until, updated_at: now };
  const rows = skipLocked
    ? await db
        .with('due', (qb) => due(qb).forUpdate().skipLocked())
        .updateTable('iw_notices')
        .from('due')
        .set(set)
        .whereRef('iw_notices.id', '=', 'due.id')
        .returningAll('iw_notices')
        .execute()
    : await db.updateTable('iw_notices').set(set).where('id', 'in', due(db)).returningAll().execute();
  return rows.map(toNotice);
}

/** Records a try of a notice this worker still holds; a lease lost meanwhile changes nothing. */
export async function finishNotice(db: Db, id: string, workerId: string, outcome: NoticeOutcome): Promise<boolean> {
  const { now } = outcome;
  const nextAttemptAt = outcome.sent ? null : outcome.nextAttemptAt;
  const status: NoticeStatus = outcome.sent ? 'sent' : nextAttemptAt === null ? 'failed' : 'pending';
  const done = await db
    .updateTable('iw_notices')
    .set({
      status,
      attempt_count: sql`attempt_count + 1`,
      next_attempt_at: status === 'pending' ? nextAttemptAt : null,
      locked_by: null,
      locked_until: null,
      last_error: outcome.sent ? null : outcome.error.slice(0, 500),
      sent_at: outcome.sent ? now : null,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('status', '=', PENDING)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

export async function listNotices(db: Db, filter: { environment?: string; status?: NoticeStatus; limit: number }): Promise<NoticeRecord[]> {
  let q = db.selectFrom('iw_notices').selectAll();
  if (filter.environment !== undefined) q = q.where('environment', '=', filter.environment);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  return rows.map(toNotice);
}

function toNotice(r: NoticeRow): NoticeRecord {
  const ms = (v: number | string | null) => (v === null ? null : Number(v));
  return {
    id: r.id,
    environment: r.environment,
    kind: 'webhook_disabled',
    webhookId: r.webhook_id,
    status: r.status as NoticeStatus,
    attempts: Number(r.attempt_count),
    nextAttemptAt: ms(r.next_attempt_at),
    lastError: r.last_error,
    sentAt: ms(r.sent_at),
    createdAt: Number(r.created_at),
    info: JSON.parse(r.payload),
  };
}
