import { type Kysely, sql } from 'kysely';
import type { EngineTables } from './schema.js';

type Db = Kysely<EngineTables>;

/**
 * Ordered delivery per subject (docs/ordering.md, decision 032). A webhook with
 * `ordering: 'per-subject'` keeps one queue per subject (`iw_ordered`, migration 21): each of its
 * deliveries that has a subject takes the next place (`seq`) when it is written, and only the
 * first place is due. The others are written pending with no due time (`next_attempt_at` null),
 * so no claim ever reads them (the due indexes' ranges stop before them): the claim's cost does
 * not change with how many wait. A delivery that ends (delivered, or failed in any way) leaves its
 * queue, and the next place becomes due at once.
 *
 * On PostgreSQL the emits, outcomes and resends of one (webhook, subject) take turns on a
 * transaction-level advisory lock, taken before the queue is read (`iw_emit_3`
 * takes the same keys); so emit order is the order in which the emits' transactions took it,
 * which is their commit order. SQLite has one writer at a time: the order of its commits.
 */

/** The `ordering` value stored for per-subject (null is `none`). */
export const PER_SUBJECT = 'per-subject';
/** Advisory-lock class of a (webhook, subject) queue (see `adapters/postgres/locks.ts` for ours); written out in migration 21. */
const QUEUE_CLASS = 0x6977_0004;

export interface Placement {
  deliveryId: string;
  webhookId: string;
  subject: string;
}

/** Takes the queues' locks in key order (PostgreSQL: `rowLocks`); SQLite's write lock already covers it. */
async function lockQueues(db: Db, pairs: ReadonlyArray<readonly [string, string]>, rowLocks: boolean): Promise<void> {
  if (!rowLocks || pairs.length === 0) return;
  const webhooks = pairs.map((p) => p[0]);
  const subjects = pairs.map((p) => p[1]);
  await sql`select pg_advisory_xact_lock(${sql.lit(QUEUE_CLASS)}, "k") from (select distinct hashtext("w" || chr(10) || "s") as "k" from unnest(cast(${webhooks} as text[]), cast(${subjects} as text[])) as "t"("w", "s") order by 1) as "keys"`.execute(
    db,
  );
}

const distinctPairs = (items: ReadonlyArray<{ webhookId: string; subject: string }>) => {
  const seen = new Map<string, readonly [string, string]>();
  for (const i of items) seen.set(`${i.webhookId}\n${i.subject}`, [i.webhookId, i.subject]);
  return [...seen.values()];
};

/**
 * Puts deliveries at the end of their subjects' queues, in the order given (upsert: a resent or
 * recovered delivery keeps its row and takes a new place). Returns the ids that must wait: those
 * whose queue already had a delivery in it. The caller writes them with no due time.
 */
export async function enqueue(db: Db, items: readonly Placement[], rowLocks: boolean): Promise<Set<string>> {
  const waiting = new Set<string>();
  if (items.length === 0) return waiting;
  const pairs = distinctPairs(items);
  await lockQueues(db, pairs, rowLocks);
  const last = new Map<string, number | null>();
  for (const [webhookId, subject] of pairs) {
    const row = await db
      .selectFrom('iw_ordered')
      .select((eb) => eb.fn.max('seq').as('last'))
      .where('webhook_id', '=', webhookId)
      .where('subject', '=', subject)
      .where('seq', 'is not', null)
      .executeTakeFirst();
    last.set(`${webhookId}\n${subject}`, row?.last == null ? null : Number(row.last));
  }
  const rows = items.map((i) => {
    const key = `${i.webhookId}\n${i.subject}`;
    const before = last.get(key) ?? null;
    if (before !== null) waiting.add(i.deliveryId);
    const seq = (before ?? 0) + 1;
    last.set(key, seq);
    return { delivery_id: i.deliveryId, webhook_id: i.webhookId, subject: i.subject, seq };
  });
  await db
    .insertInto('iw_ordered')
    .values(rows)
    .onConflict((oc) => oc.column('delivery_id').doUpdateSet({ seq: (eb) => eb.ref('excluded.seq') }))
    .execute();
  return waiting;
}

/**
 * Ended deliveries leave their queues; the next in each of those queues becomes due `now`.
 * True when one did (another process may take it: the caller sends the wake-up).
 */
export async function dequeue(db: Db, deliveryIds: readonly string[], now: number, rowLocks: boolean): Promise<boolean> {
  if (deliveryIds.length === 0) return false;
  // PostgreSQL: the same steps in one round trip (`iw_dequeue`, postgres/functions/dequeue.ts).
  if (rowLocks) {
    const { rows } = await sql<{
      released: boolean;
    }>`select iw_dequeue(cast(${[...deliveryIds]} as text[]), cast(${now} as bigint)) as "released"`.execute(db);
    return rows[0]?.released === true;
  }
  // Only those that ended: an outcome that was not this worker's to record left its delivery pending.
  const left = await db
    .updateTable('iw_ordered')
    .set({ seq: null })
    .where('delivery_id', 'in', (eb) =>
      eb
        .selectFrom('iw_deliveries')
        .select('id')
        .where('id', 'in', [...deliveryIds])
        .where('status', 'in', ['delivered', 'failed']),
    )
    .where('seq', 'is not', null)
    .returning(['webhook_id', 'subject'])
    .execute();
  if (left.length === 0) return false;
  const pairs = distinctPairs(left.map((r) => ({ webhookId: r.webhook_id, subject: r.subject })));
  // After our own update: an emit that holds the lock now placed its delivery behind ours, and we
  // see it once the lock is ours.
  await lockQueues(db, pairs, rowLocks);
  return promoteHeads(db, pairs, now);
}

/**
 * The first place of each queue, if it waits (pending, no due time), becomes due `now`: one
 * statement for every queue of a group (a seek of `iw_ordered_queue` each), on SQLite (PostgreSQL
 * runs `iw_dequeue`). The deliveries by primary key: the unary `+` keeps SQLite from reading
 * `status = 'pending' and next_attempt_at is null` from the due index, which holds every waiting
 * delivery (a record's cost then grew with the queues: bench/journal/2026-11-28-ordering.md).
 */
async function promoteHeads(db: Db, pairs: ReadonlyArray<readonly [string, string]>, now: number): Promise<boolean> {
  if (pairs.length === 0) return false;
  const queues = sql.join(pairs.map(([webhookId, subject]) => sql`(${webhookId}, ${subject})`));
  const head = sql`(select "o"."delivery_id" from "iw_ordered" "o" where "o"."webhook_id" = "q"."w" and "o"."subject" = "q"."s" and "o"."seq" is not null order by "o"."seq" limit 1)`;
  const done = await sql`with "q"("w", "s") as (values ${queues})
    update "iw_deliveries" set "next_attempt_at" = ${now}, "updated_at" = ${now}
    where "id" in (select ${head} from "q") and +"status" = 'pending' and +"next_attempt_at" is null`.execute(db);
  return Number(done.numAffectedRows ?? 0) > 0;
}

/**
 * A webhook's held deliveries were resumed (all due now): in each queue, all but the first place
 * wait again.
 */
export async function waitBehindHeads(db: Db, webhookId: string): Promise<void> {
  await db
    .updateTable('iw_deliveries')
    .set({ next_attempt_at: null })
    .where('status', '=', sql.lit('pending'))
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('iw_ordered as o')
        .select('o.delivery_id')
        .where('o.webhook_id', '=', webhookId)
        .where('o.seq', 'is not', null)
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('iw_ordered as p')
              .select('p.delivery_id')
              .whereRef('p.webhook_id', '=', 'o.webhook_id')
              .whereRef('p.subject', '=', 'o.subject')
              .where('p.seq', 'is not', null)
              .whereRef('p.seq', '<', 'o.seq'),
          ),
        ),
    )
    .execute();
}

/**
 * Every queue of the webhook ends: its held deliveries were dropped, or it no longer orders
 * (`ordering` set to `none`: what waited becomes due `now`).
 */
export async function endQueues(db: Db, webhookId: string, now: number): Promise<void> {
  await db
    .updateTable('iw_deliveries')
    .set({ next_attempt_at: now, updated_at: now })
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', 'is', null)
    .where('id', 'in', (eb) =>
      eb.selectFrom('iw_ordered').select('delivery_id').where('webhook_id', '=', webhookId).where('seq', 'is not', null),
    )
    .execute();
  await db.updateTable('iw_ordered').set({ seq: null }).where('webhook_id', '=', webhookId).where('seq', 'is not', null).execute();
}

/** Deliveries of the webhook that ended without an outcome of theirs (dropped, expired) leave their queues. */
export async function leaveEnded(db: Db, webhookId: string): Promise<void> {
  await db
    .updateTable('iw_ordered')
    .set({ seq: null })
    .where('webhook_id', '=', webhookId)
    .where('seq', 'is not', null)
    .where('delivery_id', 'in', (eb) =>
      eb.selectFrom('iw_deliveries').select('id').where('webhook_id', '=', webhookId).where('status', 'in', ['delivered', 'failed']),
    )
    .execute();
}

/** The subjects of these deliveries, for those that were written ordered (a resend or recover puts them back in line). */
export async function subjectsOf(db: Db, deliveryIds: readonly string[]): Promise<Map<string, Placement>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('iw_ordered')
    .select(['delivery_id', 'webhook_id', 'subject'])
    .where('delivery_id', 'in', [...deliveryIds])
    .execute();
  return new Map(rows.map((r) => [r.delivery_id, { deliveryId: r.delivery_id, webhookId: r.webhook_id, subject: r.subject }]));
}

/** Whether a webhook row orders its deliveries by subject. */
export const isOrdered = (row: { ordering?: string | null } | undefined) => row?.ordering === PER_SUBJECT;
