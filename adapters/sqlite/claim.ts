import { CompiledQuery, type Kysely } from 'kysely';
import type { ClaimArgs } from '../../src/store.js';
import { claimText, dueParameters, leaseParameters, leaseSet } from '../kysely/due.js';
import type { DeliveryRow, EngineTables } from '../kysely/schema.js';
import { SQLITE } from '../kysely/texts.js';

/**
 * The claim as one statement: `UPDATE … WHERE id IN (due ids) RETURNING *`. Atomic, and SQLite
 * has a single writer, so no two claims can overlap (PostgreSQL needs `SKIP LOCKED` for that; see
 * `postgres/claim.ts`). The lease moves `next_attempt_at` to its expiry, so an abandoned claim
 * comes due again by itself. The text is built once per shape (`kysely/texts.ts`).
 */
export function claimQuery(args: ClaimArgs): CompiledQuery {
  // The SET placeholders come first in the text: its parameters, then the due ones.
  const sql = claimText(SQLITE, args, (p, due) => `update "iw_deliveries" set ${leaseSet(p)} where "id" in (${due}) returning *`);
  return CompiledQuery.raw(sql, [...leaseParameters(args), ...dueParameters(args)]);
}

export async function claimDue(db: Kysely<EngineTables>, args: ClaimArgs): Promise<DeliveryRow[]> {
  return (await db.executeQuery<DeliveryRow>(claimQuery(args))).rows;
}
