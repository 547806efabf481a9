import { join } from 'node:path';
import { sqliteStore } from 'identity-webhooks/sqlite';

/**
 * Opens a store of `kind` ('sqlite' | 'postgres'): a SQLite file `name` in `dir`, or the
 * PostgreSQL database at `pgUrl`; with `pooled` (a URL rewriter, bench/lib/pgbouncer.mjs) every
 * statement goes through the pooler and only the wake-up listener uses `pgUrl` itself.
 */
export async function openStore({ kind, dir, name = 'webhooks.db', pgUrl, maxConnections, pooled }) {
  let store;
  if (kind === 'sqlite') store = sqliteStore({ filename: join(dir, name) });
  else if (kind === 'postgres') {
    const { postgresStore } = await import('identity-webhooks/postgres');
    store = postgresStore({
      connectionString: pooled ? pooled(pgUrl) : pgUrl,
      ...(pooled ? { directConnectionString: pgUrl } : {}),
      ...(maxConnections ? { maxConnections } : {}),
    });
  } else throw new TypeError(`unknown store kind ${kind}`);
  kinds.set(store, kind);
  return store;
}

const kinds = new WeakMap();

/** 'sqlite' or 'postgres': which database a store opened by {@link openStore} is on (the bench's own SQL differs). */
export function kindOf(store) {
  return kinds.get(store);
}

/** Empties the engine's tables, so every run of a scenario starts from the same state. */
export async function emptyTables(store) {
  for (const t of ['iw_attempts', 'iw_deliveries', 'iw_events', 'iw_webhooks']) await store.kysely.deleteFrom(t).execute();
}

/** How many deliveries are in each status. */
export async function countByStatus(store) {
  const rows = await store.kysely
    .selectFrom('iw_deliveries')
    .select(['status', (eb) => eb.fn.countAll().as('n')])
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/**
 * Runs `fn({ store, location })` on a store of its own: a new SQLite file in a temporary
 * directory (removed afterwards), or a new PostgreSQL database named `${config.pgPrefix}_${label}`
 * (dropped by run.mjs after the scenario process exits).
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
  // Created here, dropped by the runner once this process has exited: dropping a database
  // under a live pool would end its connections from the server side mid-teardown.
  const { createDatabase } = await import('./postgres.mjs');
  const pgUrl = await createDatabase(`${config.pgPrefix}_${label}`.toLowerCase().replace(/[^a-z0-9_]/g, '_'));
  const store = await openStore({ kind: 'postgres', pgUrl, maxConnections, pooled: config.pooled });
  return fn({ store, location: { kind: 'postgres', pgUrl } });
}
