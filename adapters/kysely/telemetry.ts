import { type Kysely, sql } from 'kysely';
import type { EngineTables } from './schema.js';

/**
 * What the store carries for the engine's telemetry (see src/telemetry/): the due time a claim
 * found (`claimed_due_at`, set by the claim: `due.ts`), and the count behind the `webhooks.deliveries.due` gauge.
 */

/**
 * Deliveries due now and waiting: the claim's own predicate (`status` compared to a literal, so
 * the partial index `iw_deliveries_due` serves it on both databases; rows under a live lease are
 * in flight, not waiting), counted over that index.
 */
export function countDueQuery(db: Kysely<EngineTables>, now: number) {
  return db
    .selectFrom('iw_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', sql.lit('pending'))
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]));
}
