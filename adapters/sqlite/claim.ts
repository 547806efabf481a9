import type { Kysely } from 'kysely';
import type { ClaimArgs } from '../../src/store.js';
import { dueIds } from '../kysely/due.js';
import type { DeliveryRow, EngineTables } from '../kysely/schema.js';

/**
 * The claim as one statement: `UPDATE … WHERE id IN (due ids) RETURNING *`. Atomic, and SQLite
 * has a single writer, so no two claims can overlap (PostgreSQL needs `SKIP LOCKED` for that; see
 * `postgres/claim.ts`). The lease moves `next_attempt_at` to its expiry, so an abandoned claim
 * comes due again by itself.
 */
export function claimDue(
  db: Kysely<EngineTables>,
  { now, limit, workerId, leaseMs, excludeWebhookIds, excludeEnvironments }: ClaimArgs,
): Promise<DeliveryRow[]> {
  return db
    .updateTable('iw_deliveries')
    .set({ locked_by: workerId, locked_until: now + leaseMs, next_attempt_at: now + leaseMs, updated_at: now })
    .where('id', 'in', dueIds(db, { now, limit, excludeWebhookIds, excludeEnvironments }))
    .returningAll()
    .execute();
}
