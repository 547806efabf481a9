import { CompiledQuery, type Kysely } from 'kysely';
import type { ClaimArgs } from '../../src/store.js';
import { claimText, dueParameters, leaseParameters, leaseSet } from '../kysely/due.js';
import type { DeliveryRow, EngineTables } from '../kysely/schema.js';
import { SQLITE } from '../kysely/texts.js';

/**
 * The columns a claim returns: every column of `iw_deliveries` but the four it knows without
 * them, which {@link claimDue} fills in: `status` stays 'pending' (the due ids' condition);
 * `locked_by` and `locked_until` are its SET list's parameters; `next_attempt_at` is unchanged,
 * the value `claimed_due_at` copies. SQLite's RETURNING copies every column of every row it
 * returns, and better-sqlite3 turns each into a JavaScript value: all sixteen cost 10.0-10.6 µs
 * per claimed row on the store alone, eleven of them 8.9-9.4 (bench/README.md). A
 * test reads the claimed rows back whole and compares, so a column added to the table and not
 * here fails it.
 */
const RETURNED =
  '"id", "environment", "webhook_id", "event_id", "attempt_count", "last_attempt_at", "last_result", "event_type", "last_error", "created_at", "updated_at", "claimed_due_at"';

type Returned = Omit<DeliveryRow, 'status' | 'locked_by' | 'locked_until' | 'next_attempt_at'>;

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
  return CompiledQuery.raw(sql, [...leaseParameters(args), ...dueParameters(args)]);
}

export async function claimDue(db: Kysely<EngineTables>, args: ClaimArgs): Promise<DeliveryRow[]> {
  const { rows } = await db.executeQuery<Returned>(claimQuery(args));
  const [workerId, lockedUntil] = leaseParameters(args);
  return rows.map((r) => ({
    id: r.id,
    environment: r.environment,
    webhook_id: r.webhook_id,
    event_id: r.event_id,
    status: 'pending',
    attempt_count: r.attempt_count,
    next_attempt_at: r.claimed_due_at,
    locked_by: workerId,
    locked_until: lockedUntil,
    last_attempt_at: r.last_attempt_at,
    last_result: r.last_result,
    event_type: r.event_type,
    last_error: r.last_error,
    claimed_due_at: r.claimed_due_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }));
}
