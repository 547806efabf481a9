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
 * Runs `fn` on one connection that holds the migrations lock for the whole session: processes
 * that start together queue here, and each finds the work already done by the first. A session
 * lock (not a transaction one) because each migration commits in its own transaction.
 */
export async function withMigrationLock<T>(db: Kysely<any>, fn: (conn: Kysely<any>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${sql.lit(MIGRATIONS_CLASS)}, 0)`.execute(conn);
    try {
      return await fn(conn);
    } finally {
      // If the connection died, PostgreSQL released the lock with the session.
      await sql`select pg_advisory_unlock(${sql.lit(MIGRATIONS_CLASS)}, 0)`.execute(conn).catch(() => {});
    }
  });
}
