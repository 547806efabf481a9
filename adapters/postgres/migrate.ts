import { type Kysely, sql } from 'kysely';
import { BASELINE, MIGRATIONS, runMigrations, staleFunctions } from '../kysely/migrations.js';
import type { EngineTables } from '../kysely/schema.js';
import { STORED_FUNCTIONS } from './functions/index.js';
import { lockMigrations } from './locks.js';

/**
 * Brings the schema to this version under the migrations lock: the baseline, later migrations,
 * changed stored functions. Idempotent; several processes starting at once take turns on the
 * lock and find each other's work done. Returns the versions applied.
 */
export async function migrateUnderLock(db: Kysely<EngineTables>, now: number): Promise<number[]> {
  return runMigrations(db, 'postgres', now, { guard: lockMigrations, functions: STORED_FUNCTIONS });
}

/**
 * For stores built with `autoMigrate: false` (the runtime role may lack DDL rights): checks that
 * the schema is this version's (its migrations applied, its stored functions current) ahead of
 * deploy, and says how to do it if not.
 */
export async function assertMigrated(db: Kysely<EngineTables>): Promise<void> {
  const { rows } = await sql<{ ledger: string | null }>`select to_regclass('iw_migrations')::text as ledger`.execute(db);
  const applied = rows[0]?.ledger
    ? new Set((await db.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version)))
    : new Set<number>();
  const missing = [BASELINE, ...MIGRATIONS].filter((m) => !applied.has(m.version)).map((m) => `${m.version} ${m.name}`);
  if (missing.length === 0) missing.push(...(await staleFunctions(db as Kysely<any>, STORED_FUNCTIONS)).map((f) => `function ${f.name}`));
  if (missing.length > 0) {
    // What to do comes before the names: error wrappers and log lines cut long messages.
    throw new Error(
      "identity-webhooks: the database schema is not this version's and autoMigrate is false; " +
        'run migratePostgres({ connectionString }) from "identity-webhooks/postgres" ahead of deploy ' +
        `(missing: ${missing.join('; ')})`,
    );
  }
}
