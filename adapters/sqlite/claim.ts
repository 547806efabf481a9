import { CompiledQuery, type Kysely } from 'kysely';
import type { ClaimArgs } from '../../src/store.js';
import { claimText, dueParameters, leaseParameters, leaseSet } from '../kysely/due.js';
import type { DeliveryRow, EngineTables } from '../kysely/schema.js';
import { SQLITE } from '../kysely/texts.js';
import { withRowsAsArrays } from './driver.js';

/**
 * The columns a claim returns: every column of `iw_deliveries` but the four it knows without
 * them, which {@link claimDue} fills in: `status` stays 'pending' (the due ids' condition);
 * `locked_by` and `locked_until` are its SET list's parameters; `next_attempt_at` is unchanged,
 * the value `claimed_due_at` copies. SQLite's RETURNING copies every column of every row it
 * returns, and better-sqlite3 turns each into a JavaScript value, so the claim returns only the
 * twelve it lacks: all sixteen cost about a tenth more per claimed row on the store. A test
 * reads the claimed rows back whole and compares, so a column added to the table and not here
 * fails it.
 */
const RETURNED =
  '"id", "environment", "webhook_id", "event_id", "attempt_count", "last_attempt_at", "last_result", "event_type", "last_error", "created_at", "updated_at", "claimed_due_at"';

/** A returned row as an array of its column values ({@link withRowsAsArrays}), in {@link RETURNED}'s order. */
type Returned = [
  id: string,
  environment: string,
  webhook_id: string,
  event_id: string,
  attempt_count: number,
  last_attempt_at: number | null,
  last_result: string | null,
  event_type: string,
  last_error: string | null,
  created_at: number,
  updated_at: number,
  claimed_due_at: number | null,
];

/**
 * The claim as one statement: `UPDATE … WHERE id IN (due ids) RETURNING …`. Atomic, and SQLite
 * has a single writer, so no two claims can overlap (PostgreSQL needs `SKIP LOCKED` for that; see
 * `postgres/claim.ts`). The lease leaves `next_attempt_at` in place (`unleased` in due.ts):
 * leased rows are not due until their lease runs out, so an abandoned claim comes due again by
 * itself. The text is built once per shape (`kysely/texts.ts`).
 */
export function claimQuery(args: ClaimArgs): CompiledQuery {
  // The SET placeholders come first in the text: its parameters, then the due ones.
  const sql = claimText(SQLITE, args, (p, due) => `update "iw_deliveries" set ${leaseSet(p)} where "id" in (${due}) returning ${RETURNED}`);
  return withRowsAsArrays(CompiledQuery.raw(sql, [...leaseParameters(args), ...dueParameters(args)]));
}

export async function claimDue(db: Kysely<EngineTables>, args: ClaimArgs): Promise<DeliveryRow[]> {
  const { rows } = await db.executeQuery<Returned>(claimQuery(args));
  const [workerId, lockedUntil] = leaseParameters(args);
  return rows.map((r) => ({
    id: r[0],
    environment: r[1],
    webhook_id: r[2],
    event_id: r[3],
    status: 'pending',
    attempt_count: r[4],
    next_attempt_at: r[11],
    locked_by: workerId,
    locked_until: lockedUntil,
    last_attempt_at: r[5],
    last_result: r[6],
    event_type: r[7],
    last_error: r[8],
    claimed_due_at: r[11],
    created_at: r[9],
    updated_at: r[10],
  }));
}
