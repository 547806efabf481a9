import { type Kysely, sql } from 'kysely';
import { MIGRATIONS, runMigrations } from '../kysely/migrations.js';
import type { EngineTables } from '../kysely/schema.js';
import { lockMigrations } from './locks.js';

/**
 * Applies what is missing, each migration under the migrations lock. Idempotent; several
 * processes starting at once take turns on the lock and find each other's work done. Returns
 * the versions applied.
 */
export async function migrateUnderLock(db: Kysely<EngineTables>, now: number): Promise<number[]> {
  return runMigrations(db, 'postgres', now, lockMigrations);
}

/**
 * For stores built with `autoMigrate: false` (the runtime role may lack DDL rights): checks that
 * every migration this version knows of was applied ahead of deploy, and says how to do it if not.
 */
export async function assertMigrated(db: Kysely<EngineTables>): Promise<void> {
  const { rows } = await sql<{ ledger: string | null }>`select to_regclass('iw_migrations')::text as ledger`.execute(db);
  const applied = rows[0]?.ledger
    ? new Set((await db.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version)))
    : new Set<number>();
  const missing = MIGRATIONS.filter((m) => !applied.has(m.version));
  if (missing.length > 0) {
    // What to do comes before the names: error wrappers and log lines cut long messages.
    throw new Error(
      `identity-webhooks: the database lacks migration(s) ${missing.map((m) => m.version).join(', ')} and autoMigrate is false; ` +
        'run migratePostgres({ connectionString }) from "identity-webhooks/postgres" ahead of deploy ' +
        `(missing: ${missing.map((m) => `${m.version} ${m.name}`).join('; ')})`,
    );
  }
}
