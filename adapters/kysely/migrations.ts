import { createHash } from 'node:crypto';
import { CompiledQuery, type Kysely } from 'kysely';
import { createBaseline } from './baseline.js';
import type { EngineTables } from './schema.js';

export interface Migration {
  version: number;
  name: string;
  up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void>;
}

/**
 * The baseline's place in the ledger. Nothing was released before it (CHANGELOG.md): the
 * pre-release chain of migrations 1 to 25 is gone, and a database that stopped part way along it
 * is refused with what to do, never patched up.
 */
export const BASELINE = { version: 25, name: 'baseline' } as const;

/**
 * Forward-only migrations after the baseline (26 on), one schema for both databases (Kysely's
 * schema builder emits the dialect's DDL). Never edit a released migration: append a new one.
 */
export const MIGRATIONS: readonly Migration[] = [];

/**
 * A PostgreSQL stored function at its current version: `text` creates or replaces it. The store
 * applies it again whenever the text differs from the one last applied (`iw_functions`); a
 * change of its arguments or result needs a `drop function` in the text first.
 */
export interface StoredFunction {
  name: string;
  text: string;
}

/** The SHA-256 under which a function's text is recorded. */
export const functionHash = (f: StoredFunction) => createHash('sha256').update(f.text).digest('hex');

export interface MigrationOptions {
  /**
   * Taken first in each transaction (PostgreSQL: a transaction-level advisory lock, which works
   * through a transaction-mode pooler), the ledger's creation included, so processes that start
   * together take turns and each finds the work of the one before.
   */
  guard?: (trx: Kysely<EngineTables>) => Promise<void>;
  /** PostgreSQL's stored functions, applied when their text is new. */
  functions?: readonly StoredFunction[];
  /** The migrations after the baseline (tests pass their own). */
  migrations?: readonly Migration[];
}

/**
 * Brings the schema to this version: a new database gets the baseline in one transaction; then
 * each later migration missing from the ledger, in its own transaction with its ledger row; then
 * every stored function whose text changed. Returns the versions applied.
 */
export async function runMigrations(
  db: Kysely<EngineTables>,
  dialect: 'sqlite' | 'postgres',
  now: number,
  { guard, functions = [], migrations = MIGRATIONS }: MigrationOptions = {},
): Promise<number[]> {
  const ledger = (on: Kysely<EngineTables>) =>
    on.schema
      .createTable('iw_migrations')
      .ifNotExists()
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute();
  if (guard)
    await db.transaction().execute(async (trx) => {
      await guard(trx);
      await ledger(trx);
    });
  else await ledger(db);
  const done = new Set((await db.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version)));
  refusePreRelease(done);
  const applied: number[] = [];
  for (const m of [{ ...BASELINE, up: createBaseline }, ...migrations]) {
    if (done.has(m.version)) continue;
    const ran = await db.transaction().execute(async (trx) => {
      await guard?.(trx);
      // Looked at again under the transaction's write lock (or the guard): another process may
      // have applied it since we read the ledger (SQLite files shared by several processes take this path).
      const versions = (await trx.selectFrom('iw_migrations').select('version').execute()).map((r) => Number(r.version));
      if (versions.includes(m.version)) return false;
      refusePreRelease(new Set(versions));
      await m.up(trx, dialect);
      await trx.insertInto('iw_migrations').values({ version: m.version, name: m.name, applied_at: now }).execute();
      return true;
    });
    if (ran) applied.push(m.version);
  }
  if (functions.length > 0) await applyFunctions(db as unknown as Kysely<any>, functions, now, guard);
  return applied;
}

/** A ledger from before the baseline: a pre-release build's database, which no migration here can bring up to date. */
function refusePreRelease(done: ReadonlySet<number>): void {
  if (done.size === 0 || done.has(BASELINE.version)) return;
  throw new Error(
    `identity-webhooks: this database's engine schema was made by a pre-release build (migrations ${[...done].sort((a, b) => a - b).join(', ')}); ` +
      `nothing before the baseline (version ${BASELINE.version}) was released. Drop its iw_* tables, or use a new database, and start again`,
  );
}

/** Applies, in one transaction under the guard, every function whose text is not the one recorded. */
async function applyFunctions(
  db: Kysely<any>,
  functions: readonly StoredFunction[],
  now: number,
  guard: MigrationOptions['guard'],
): Promise<void> {
  if ((await staleFunctions(db, functions)).length === 0) return;
  await db.transaction().execute(async (trx) => {
    await guard?.(trx as unknown as Kysely<EngineTables>);
    for (const f of await staleFunctions(trx, functions)) {
      await trx.executeQuery(CompiledQuery.raw(f.text));
      await trx
        .insertInto('iw_functions')
        .values({ name: f.name, hash: functionHash(f), applied_at: now })
        .onConflict((oc) => oc.column('name').doUpdateSet({ hash: functionHash(f), applied_at: now }))
        .execute();
    }
  });
}

/** The functions whose recorded text is not theirs (never applied, or changed since). */
export async function staleFunctions(db: Kysely<any>, functions: readonly StoredFunction[]): Promise<StoredFunction[]> {
  const rows: Array<{ name: string; hash: string }> = await db.selectFrom('iw_functions').select(['name', 'hash']).execute();
  const recorded = new Map(rows.map((r) => [r.name, r.hash]));
  return functions.filter((f) => recorded.get(f.name) !== functionHash(f));
}
