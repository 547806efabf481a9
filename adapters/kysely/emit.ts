import type { Kysely } from 'kysely';
import { WebhookDisabledError } from '../../src/errors.js';
import type { DeliveryRecord, EventRecord } from '../../src/model.js';
import type { InsertEventOptions } from '../../src/store.js';
import { enqueue, isOrdered } from './ordering.js';
import { eventInsertParams, fromDelivery, toDelivery } from './rows.js';
import type { DeliveryRow, EngineTables } from './schema.js';
import { list, type Mark, precompiled, text } from './texts.js';

type Db = Kysely<EngineTables>;

/**
 * Emit's general path, in `db` (a transaction: the store's own or the host's): the event, then a
 * pending delivery per enabled webhook of its environment subscribed to its type (a test event:
 * the named webhooks, whatever they subscribe to), each ordered one placed in its subject's
 * queue. SQLite's emits and test events on both databases take it; PostgreSQL's other emits are
 * one statement (`adapters/postgres/emit.ts`). SQLite's synchronous emit (`adapters/sqlite/emit.ts`)
 * runs the same statements, from the texts below.
 */
export async function insertEvent(
  db: Db,
  dialect: { name: 'sqlite' | 'postgres'; rowLocks: boolean; notify?(db: Db): Promise<void> },
  event: EventRecord,
  options: InsertEventOptions<unknown>,
): Promise<DeliveryRecord[]> {
  // Precompiled texts (`texts.ts`): Kysely's builder cost more than the statements here.
  const { run, texts } = precompiled(db, dialect.name);
  const inserted = await run<{ id: string }>(text(texts, 'emit event', insertEventText), eventInsertParams(event, options));
  // Idempotent by event id: a transient retry after a commit whose reply was lost finds the
  // event and answers with the deliveries that commit wrote, instead of failing or writing
  // twice.
  if (inserted.length === 0) {
    const rows = await db.selectFrom('iw_deliveries').selectAll().where('event_id', '=', event.id).orderBy('id').execute();
    return rows.map(toDelivery);
  }
  const only = options.webhookIds === undefined ? undefined : options.webhookIds.length > 0 ? options.webhookIds : [''];
  const hooks = await run<{ id: string; event_types: string; ordering: string | null }>(
    text(texts, `emit targets ${only?.length ?? 0}`, (p) => targetsText(p, only?.length ?? 0)),
    [event.environment, 'enabled', ...(only ?? [])],
  );
  // A test event goes to the named webhooks whatever they subscribe to; nothing else does.
  const chosen = only ? hooks : hooks.filter((h) => subscribes(h, event.type));
  if (only && chosen.length === 0) throw new WebhookDisabledError(only[0] ?? '');
  const deliveries = chosen.map((h) => pendingDelivery(event, h.id, options.newDeliveryId()));
  // Ordered per subject: each delivery of an ordered webhook takes its place in its subject's
  // queue; behind another, it is written with no due time (adapters/kysely/ordering.ts).
  const subject = options.subject ?? null;
  if (subject !== null) {
    const placed = deliveries.filter((_d, i) => isOrdered(chosen[i])).map((d) => ({ deliveryId: d.id, webhookId: d.webhookId, subject }));
    const waiting = await enqueue(db, placed, dialect.rowLocks);
    for (const d of deliveries) if (waiting.has(d.id)) d.nextAttemptAt = null;
  }
  if (deliveries.length > 0) {
    const rows = deliveries.map(fromDelivery);
    const columns = Object.keys(rows[0]!) as Array<keyof DeliveryRow>;
    await run(
      text(texts, `emit deliveries ${rows.length}`, (p) => insertRowsText('iw_deliveries', columns, rows.length, p)),
      rows.flatMap((r) => columns.map((c) => r[c])),
    );
    if (deliveries.some((d) => d.nextAttemptAt !== null)) await dialect.notify?.(db);
  }
  return deliveries;
}

/** A host's `{ transaction }`, checked to be a Kysely transaction (or instance) before anything is written on it. */
export function asHostTransaction(value: unknown): Db {
  const t = value as Partial<Db> | null;
  if (typeof t !== 'object' || t === null || typeof t.insertInto !== 'function' || typeof t.selectFrom !== 'function') {
    throw new TypeError('emit: options.transaction must be a Kysely transaction (or Kysely instance) on the same database');
  }
  return t as Db;
}

/** A new delivery of `event` to one webhook: pending, due when the event was created, nobody's yet. */
export function pendingDelivery(event: EventRecord, webhookId: string, id: string): DeliveryRecord {
  return {
    id,
    environment: event.environment,
    webhookId,
    eventId: event.id,
    status: 'pending',
    attemptCount: 0,
    nextAttemptAt: event.createdAt,
    lastAttemptAt: null,
    lastResult: null,
    eventType: event.type,
    lastError: null,
    createdAt: event.createdAt,
    updatedAt: event.createdAt,
  };
}

/** Whether a webhook row (its stored `event_types`) subscribes to `type`. */
export function subscribes(webhook: { event_types: string }, type: string): boolean {
  return (JSON.parse(webhook.event_types) as string[]).includes(type);
}

/** The event's columns, in the order of `eventInsertParams`. */
export const EVENT_COLUMNS = [
  'id',
  'environment',
  'type',
  'source',
  'data',
  'event_timestamp',
  'created_at',
  'traceparent',
  'subject',
  'email',
  'test',
];
/** The event's insert, idempotent by id; its values are `eventInsertParams`. */
export const insertEventOnceText = (p: Mark) => `${insertRowsText('iw_events', EVENT_COLUMNS, 1, p)} on conflict ("id") do nothing`;
const insertEventText = (p: Mark) => `${insertEventOnceText(p)} returning "id"`;
/** The environment's webhooks in a status (`only`: just these ids). */
export const targetsText = (p: Mark, only: number) =>
  `select "id", "event_types", "ordering" from "iw_webhooks" where "environment" = ${p()} and "status" = ${p()}` +
  (only > 0 ? ` and "id" in (${list(only, p)})` : '');
export const insertRowsText = (table: string, columns: readonly string[], n: number, p: Mark) =>
  `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ` +
  Array.from({ length: n }, () => `(${list(columns.length, p)})`).join(', ');
