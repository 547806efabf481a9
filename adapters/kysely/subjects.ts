import type { Kysely } from 'kysely';
import type { DeliveryRecord, EventSource, EventSummary } from '../../src/model.js';
import type { EventCursor } from '../../src/store.js';
import { ms, toDelivery } from './rows.js';
import type { EngineTables, EventRow } from './schema.js';

type Db = Kysely<EngineTables>;

/**
 * What was sent about a user or an organization: the SQL behind `Store.searchEvents` and
 * `summarizeEvents`. The events' `subject` and `email` columns and their partial indexes are
 * migration 25's.
 */

/**
 * The newest `limit` events of the environment about `key` before `before`, and their
 * deliveries. Two backward ranges, one per index (`iw_events_subject`, `iw_events_email`), each
 * bounded by `limit`, merged; then the deliveries by `iw_deliveries_event`. Three bounded reads,
 * whatever the size of the environment's log.
 */
export async function searchEvents(
  db: Db,
  environment: string,
  { key, limit, before }: { key: string; limit: number; before: EventCursor | null },
): Promise<{ events: EventSummary[]; deliveries: DeliveryRecord[] }> {
  const range = (column: 'subject' | 'email', value: string) => {
    let q = db
      .selectFrom('iw_events')
      .select(['id', 'type', 'source', 'subject', 'test', 'event_timestamp', 'created_at'])
      .where('environment', '=', environment)
      .where(column, '=', value);
    // a row comparison: the index's own order, so the range starts at the cursor, not at the newest
    if (before) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  };
  const [bySubject, byEmail] = await Promise.all([range('subject', key), range('email', key.toLowerCase())]);
  const seen = new Set<string>();
  const rows = [...bySubject, ...byEmail]
    .filter((r) => !seen.has(r.id) && seen.add(r.id))
    .sort((a, b) => ms(b.created_at) - ms(a.created_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .slice(0, limit);
  if (rows.length === 0) return { events: [], deliveries: [] };
  const deliveries = await db
    .selectFrom('iw_deliveries')
    .selectAll()
    .where(
      'event_id',
      'in',
      rows.map((r) => r.id),
    )
    .where('environment', '=', environment)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return { events: rows.map(toSummary), deliveries: deliveries.map(toDelivery) };
}

/** The summaries of these events (of the environment), in no set order. */
export async function summarizeEvents(db: Db, environment: string, ids: readonly string[]): Promise<EventSummary[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('iw_events')
    .select(['id', 'type', 'source', 'subject', 'test', 'event_timestamp', 'created_at'])
    .where('environment', '=', environment)
    .where('id', 'in', [...ids])
    .execute();
  return rows.map(toSummary);
}

type SummaryRow = Pick<EventRow, 'id' | 'type' | 'source' | 'subject' | 'test' | 'event_timestamp' | 'created_at'>;

function toSummary(r: SummaryRow): EventSummary {
  return {
    id: r.id,
    type: r.type,
    source: r.source as EventSource,
    subject: r.subject,
    test: r.test !== null && Number(r.test) === 1,
    eventTimestamp: ms(r.event_timestamp),
    createdAt: ms(r.created_at),
  };
}
