import { sql, type Kysely } from 'kysely';
import type { EngineTables } from './schema.js';

/**
 * What the store carries for the engine's telemetry (see src/telemetry/): the due time a claim
 * found, and the count behind the `webhooks.deliveries.due` gauge.
 */

/**
 * What a claim writes to `claimed_due_at`: `next_attempt_at` as it was before the same UPDATE
 * moved it to the lease expiry (SET expressions read the old row, on SQLite and PostgreSQL
 * alike), so a claimed delivery knows how late its attempt starts (`webhooks.delivery.lag`).
 * Qualified, so it stays unambiguous in PostgreSQL's `UPDATE … FROM due`.
 */
export const DUE_AT = sql<number>`iw_deliveries.next_attempt_at`;

/**
 * Deliveries due now and waiting: the claim's own predicate (`status` compared to a literal, so
 * the partial index `iw_deliveries_due` serves it on both databases), counted over that index.
 */
export function countDueQuery(db: Kysely<EngineTables>, now: number) {
  return db
    .selectFrom('iw_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '<=', now);
}
