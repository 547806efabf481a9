import { sql, type QueryCreator } from 'kysely';
import type { ClaimArgs } from '../../src/store.js';
import type { EngineTables } from './schema.js';

/**
 * The ids a claim may take: pending, due by `now`, oldest due first, not of a webhook this worker
 * already saturates. `status` is compared to the literal `'pending'` (not a parameter) so both
 * databases can prove the partial index `iw_deliveries_due` applies. Each flavor wraps it in its
 * own one-statement claim (SQLite: `UPDATE … WHERE id IN`, PostgreSQL: a `FOR UPDATE SKIP LOCKED`
 * CTE).
 */
export function dueIds(
  qc: QueryCreator<EngineTables>,
  { now, limit, excludeWebhookIds, excludeEnvironments }: Pick<ClaimArgs, 'now' | 'limit' | 'excludeWebhookIds' | 'excludeEnvironments'>,
) {
  let due = qc.selectFrom('iw_deliveries').select('id').where('status', '=', sql.lit('pending')).where('next_attempt_at', '<=', now);
  if (excludeWebhookIds && excludeWebhookIds.length > 0) due = due.where('webhook_id', 'not in', excludeWebhookIds);
  if (excludeEnvironments && excludeEnvironments.length > 0) due = due.where('environment', 'not in', excludeEnvironments);
  return due.orderBy('next_attempt_at').limit(limit);
}
