import { type Kysely, sql } from 'kysely';

/**
 * Advisory-lock keys. We use the two-integer form in classes of our own: PostgreSQL keeps those
 * apart from the single-bigint locks a host may take, so we never block on (or for) the host.
 */
const MIGRATIONS_CLASS = 0x6977_0001;
const ENVIRONMENT_CLASS = 0x6977_0002;
const RETENTION_CLASS = 0x6977_0003;

/**
 * One purging transaction at a time across every process on this database: the others skip
 * their turn instead of queueing behind (or deadlocking with) the same deletes.
 */
export async function tryLockRetention(trx: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${sql.lit(RETENTION_CLASS)}, 0) as ok`.execute(trx);
  return rows[0]?.ok === true;
}

/**
 * Serialises webhook creation per environment until the transaction ends, so the webhook cap is
 * checked and applied atomically by every process.
 */
export async function lockEnvironment(trx: Kysely<any>, environment: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(ENVIRONMENT_CLASS)}, hashtext(${environment}))`.execute(trx);
}

/**
 * Taken first in each migration's transaction (and the ledger's creation): processes that start
 * together take turns, and each finds the work of the one before already in the ledger. A
 * transaction-level lock, not a session one held across the migrations' commits, so it works
 * through a transaction-mode pooler (PgBouncer), where a session lock could be taken on one
 * server connection and released on another ([decision 027](../../docs/decisions/027-behind-a-transaction-pooler.md)).
 */
export async function lockMigrations(trx: Kysely<any>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATIONS_CLASS)}, 0)`.execute(trx);
}
