import { join } from 'node:path';
import { sqliteStore } from 'identity-webhooks/sqlite';

/**
 * The PostgreSQL adapter, through the package's public entry point. Until that export exists
 * (the adapter landing) the built file is tried, so the harness can be developed beside it.
 */
export async function loadPostgresAdapter() {
  try {
    return await import('identity-webhooks/postgres');
  } catch (first) {
    try {
      return await import('../../dist/adapters/postgres/index.js');
    } catch {
      throw new Error(`the PostgreSQL adapter is not built (${first.message})`);
    }
  }
}

/**
 * Opens a store of `kind` ('sqlite' | 'postgres'): a SQLite file `name` in `dir`, or the
 * PostgreSQL database at `pgUrl`.
 */
export async function openStore({ kind, dir, name = 'webhooks.db', pgUrl, maxConnections }) {
  if (kind === 'sqlite') return sqliteStore({ filename: join(dir, name) });
  if (kind === 'postgres') {
    const { postgresStore } = await loadPostgresAdapter();
    return postgresStore({ connectionString: pgUrl, ...(maxConnections ? { maxConnections } : {}) });
  }
  throw new TypeError(`unknown store kind ${kind}`);
}

/** Empties the engine's tables, so every run of a scenario starts from the same state. */
export async function emptyTables(store) {
  for (const t of ['iw_attempts', 'iw_deliveries', 'iw_events', 'iw_webhooks']) await store.kysely.deleteFrom(t).execute();
}

/** How many deliveries are in each status. */
export async function countByStatus(store) {
  const rows = await store.kysely.selectFrom('iw_deliveries').select(['status', (eb) => eb.fn.countAll().as('n')]).groupBy('status').execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/**
 * Runs `fn({ store, location })` on a store of its own: a new SQLite file in a temporary
 * directory, or a new PostgreSQL database named `${config.pgPrefix}_${label}`, removed afterwards.
 * `location` lets another process open the same store (a file path or a connection string).
 * `fn` closes the store (directly, or through the engine that owns it).
 */
export async function withFreshStore(config, label, fn, { maxConnections } = {}) {
  if (config.kind === 'sqlite') {
    const { tempDir } = await import('./tmp.mjs');
    const dir = tempDir(label);
    try {
      const store = await openStore({ kind: 'sqlite', dir: dir.path });
      return await fn({ store, location: { kind: 'sqlite', dir: dir.path } });
    } finally {
      dir.cleanup();
    }
  }
  const { withDatabase } = await import('./postgres.mjs');
  return withDatabase(`${config.pgPrefix}_${label}`.toLowerCase().replace(/[^a-z0-9_]/g, '_'), async (pgUrl) => {
    const store = await openStore({ kind: 'postgres', pgUrl, maxConnections });
    return fn({ store, location: { kind: 'postgres', pgUrl } });
  });
}
