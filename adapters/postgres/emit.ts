import { CompiledQuery, type Kysely } from 'kysely';
import type { DeliveryRecord, EventRecord } from '../../src/model.js';
import type { InsertEventOptions } from '../../src/store.js';
import { pendingDelivery } from '../kysely/emit.js';
import { emailOf, toDelivery } from '../kysely/rows.js';
import type { DeliveryRow } from '../kysely/schema.js';

/**
 * `emit` as ONE statement: the event, a delivery per enabled webhook of the environment
 * subscribed to the type, and the wake-up hint, in one round trip and atomic on its own (no
 * BEGIN/COMMIT), or one statement of the host's transaction. Six round trips (BEGIN, event,
 * webhooks, deliveries, pg_notify, COMMIT) cost several times one, and more at the tail.
 * The statement is migration 25's function `iw_emit_3` (migration 11's `iw_emit` with the event's subject for ordered
 * delivery per subject, migration 21, and the subject and email kept for the search by subject; its text and rules are
 * there), so a
 * connection parses and plans it once: sent as text it was parsed, analysed and planned at every
 * call, about a third of its time.
 *
 * Delivery ids are the engine's (`newDeliveryId`), made before the statement knows how many it
 * needs: it takes an array of them, by rank. When there are more subscribed webhooks than ids it
 * writes nothing at all (not even the event) and says how many it needed; the caller asks again.
 * The answer always has a row: `inserted` is 0 when the event id was already stored (a transient
 * retry after a lost reply).
 */
export const EMIT_CALL = 'select * from "iw_emit_3"($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)';

/** The deliveries an earlier commit of the same event wrote (a new statement: it sees that commit). */
const EXISTING_SQL = 'select * from iw_deliveries where event_id = $1 order by id';

/** Ids offered for an (environment, type) never seen: enough for most, and a second try for the rest. */
const FIRST_GUESS = 16;
/** Headroom over the last count, for webhooks created since. */
const HEADROOM = 4;
/** Remembered counts; forgotten all at once past this (a wrong guess only costs running it again). */
const MAX_REMEMBERED = 10_000;

interface EmitRow {
  id: string | null;
  hook: string | null;
  inserted: string | number;
  needed: string | number;
  /** The delivery's due time: null when it waits behind an earlier one of its subject (ordering per subject). */
  due: string | number | null;
}

type EmitOptions = Pick<InsertEventOptions<unknown>, 'newDeliveryId' | 'traceparent' | 'subject'>;

/**
 * Returns the dialect's one-statement `insertEvent` (test events keep the general path). It
 * remembers how many webhooks each (environment, type) had subscribed, so it makes about as many ids
 * as it will use.
 */
export function oneStatementEmit({ notify }: { notify: boolean }) {
  const counts = new Map<string, number>();
  return async function insertEvent(db: Kysely<any>, event: EventRecord, options: EmitOptions): Promise<DeliveryRecord[]> {
    const key = `${event.environment}\u0000${event.type}`;
    const last = counts.get(key);
    let offer = last === undefined ? FIRST_GUESS : last + HEADROOM;
    const data = JSON.stringify(event.data);
    for (;;) {
      const ids = Array.from({ length: offer }, () => options.newDeliveryId());
      const params = [
        event.id,
        event.environment,
        event.type,
        event.source,
        data,
        event.eventTimestamp,
        event.createdAt,
        options.traceparent ?? null,
        ids,
        notify,
        options.subject ?? null,
        emailOf(event),
      ];
      const { rows } = await db.executeQuery<EmitRow>(CompiledQuery.raw(EMIT_CALL, params));
      const head = rows[0]!;
      const needed = Number(head.needed);
      if (needed !== last) {
        if (counts.size >= MAX_REMEMBERED) counts.clear();
        counts.set(key, needed);
      }
      // More subscribed webhooks than ids: nothing was written; again with enough.
      if (needed > ids.length) {
        offer = needed + HEADROOM;
        continue;
      }
      // Idempotent by event id: a transient retry after a commit whose reply was lost answers with
      // the deliveries that commit wrote, and writes nothing.
      if (Number(head.inserted) === 0) {
        const existing = await db.executeQuery<DeliveryRow>(CompiledQuery.raw(EXISTING_SQL, [event.id]));
        return existing.rows.map(toDelivery);
      }
      return rows
        .filter((r) => r.id !== null)
        .map((r) => Object.assign(pendingDelivery(event, r.hook!, r.id!), r.due === null ? { nextAttemptAt: null } : {}));
    }
  };
}
