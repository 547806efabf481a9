import { AsyncLocalStorage } from 'node:async_hooks';
import { statementKysely } from '../../adapters/kysely/runner.js';
import type { KyselyStore } from '../../adapters/kysely/store.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { type SharedDialect, sharedStore } from './database.js';

/**
 * For a better-auth whose `database` is an ORM's adapter (`drizzleAdapter(db, …)`,
 * `prismaAdapter(prisma, …)`): the ORM's client, and for Prisma the connection the engine uses.
 */
export interface OrmOption {
  /** The Drizzle database or the PrismaClient you gave the adapter. */
  client: object;
  /**
   * Where the engine keeps its tables (the same database as better-auth's). Drizzle: its own
   * `$client` (the pg Pool or the better-sqlite3 Database) unless given. Prisma, which hides its
   * connection: the pg Pool you gave `PrismaPg`, or for SQLite the database file's path or a
   * better-sqlite3 Database opened on it.
   */
  database?: unknown;
}

/** What the plugin needs of an ORM: the engine's store, and what the ORM's transaction lets the engine do. */
export interface OrmBinding {
  store: KyselyStore;
  dialect: SharedDialect;
  /** The current ORM transaction as the engine writes in it, when it can join it. */
  current(): unknown;
  /** When the current ORM transaction cannot be joined: where to put work for after its commit. */
  afterCommit(): ((job: () => Promise<void>) => void) | undefined;
}

interface Scope {
  tx: unknown;
  /** The transaction has not ended (committed or rolled back). */
  open: boolean;
  /** Its callback is still running: the engine may write in it. */
  joinable: boolean;
  joined?: unknown;
  after: Array<() => Promise<void>>;
}

type Transacting = (...args: unknown[]) => unknown;

/**
 * Binds the engine to an ORM client: its store on the ORM's database, and the ORM's
 * transactions recorded (its transaction method is wrapped in place, as the adapter calls it)
 * so that a write's event is written in the write's transaction:
 *
 * - Drizzle on node-postgres: on the transaction's own pg client (Drizzle's session keeps it);
 * - Prisma on PostgreSQL: through the transaction's `$queryRawUnsafe`;
 * - Prisma on SQLite: its connection is its own, so the event is written once the transaction
 *   commits (none if it rolls back);
 * - Drizzle on better-sqlite3: better-auth must run it with `transaction: false` (better-sqlite3's
 *   transactions cannot await), so every write commits alone and its event right after it.
 */
export function ormBinding(orm: OrmOption, onError?: (message: string, error: unknown) => void): OrmBinding {
  if (typeof orm !== 'object' || orm === null || typeof orm.client !== 'object' || orm.client === null) {
    throw new TypeError('webhooks(): orm.client must be the Drizzle database or the PrismaClient you gave better-auth');
  }
  const client = orm.client as Record<string | symbol, unknown>;
  const warn = onError ? { onError } : {};
  if (typeof client.$transaction === 'function' && typeof client.$queryRawUnsafe === 'function') {
    const { database } = orm;
    if (database === undefined) {
      throw new TypeError(
        "webhooks(): with Prisma, set orm.database: the pg Pool you gave PrismaPg, or the SQLite file's path (Prisma does not share its connection)",
      );
    }
    const { store, dialect } = typeof database === 'string' ? sqliteFile(database, warn) : sharedStore(database, onError);
    const join =
      dialect === 'postgres'
        ? (tx: unknown) =>
            statementKysely('postgres', (sql, parameters) =>
              (tx as { $queryRawUnsafe(sql: string, ...p: unknown[]): Promise<unknown[]> }).$queryRawUnsafe(sql, ...parameters),
            )
        : undefined;
    return bind(client, '$transaction', store, dialect, join);
  }
  if (typeof client.transaction === 'function' && '$client' in client) {
    let shared: ReturnType<typeof sharedStore>;
    try {
      shared = sharedStore(orm.database ?? client.$client, onError);
    } catch {
      throw new TypeError(
        "webhooks(): this Drizzle database's client is neither a pg Pool nor a better-sqlite3 Database: pass orm.database, a pg Pool on the same database",
      );
    }
    const { store, dialect } = shared;
    if (dialect === 'sqlite') {
      // Nothing to wrap: better-sqlite3's transactions are synchronous, Drizzle's with them, and
      // better-auth's writes are not; each write commits alone (see the atomicity table).
      return { store, dialect, current: () => undefined, afterCommit: () => undefined };
    }
    const join = (tx: unknown) => {
      const pgClient = drizzleConnection(tx);
      return statementKysely('postgres', async (sql, parameters) => (await pgClient.query(sql, parameters as unknown[])).rows);
    };
    return bind(client, 'transaction', store, dialect, join);
  }
  throw new TypeError(
    'webhooks(): orm.client is neither a Drizzle database (drizzle-orm/node-postgres, drizzle-orm/better-sqlite3) nor a PrismaClient',
  );
}

/** The pg client a Drizzle node-postgres transaction runs on (Drizzle keeps it in its session). */
function drizzleConnection(tx: unknown): { query(sql: string, parameters: unknown[]): Promise<{ rows: unknown[] }> } {
  const t = tx as { _?: { session?: { client?: unknown } }; session?: { client?: unknown } };
  const found = (t._?.session?.client ?? t.session?.client) as { query?: unknown } | undefined;
  if (typeof found?.query !== 'function') {
    // Not a TypeError: those count as refused data (the write would go on without its event).
    throw new Error(
      'identity-webhooks/better-auth: this Drizzle transaction has no node-postgres client (drizzle-orm/node-postgres is the one supported on PostgreSQL)',
    );
  }
  return found as { query(sql: string, parameters: unknown[]): Promise<{ rows: unknown[] }> };
}

function bind(
  client: Record<string | symbol, unknown>,
  method: '$transaction' | 'transaction',
  store: KyselyStore,
  dialect: SharedDialect,
  join: ((tx: unknown) => unknown) | undefined,
): OrmBinding {
  const storage = new AsyncLocalStorage<Scope>();
  const original = client[method] as Transacting;
  // In place: better-auth's adapter already holds the client.
  const wrapped = function (this: unknown, ...args: unknown[]) {
    const [fn, ...rest] = args;
    // Prisma's batch form (an array of queries) runs no code of ours: nothing to record.
    if (typeof fn !== 'function') return original.apply(this, args);
    const scope: Scope = { tx: undefined, open: true, joinable: true, after: [] };
    const run = original.call(
      this,
      (tx: unknown, ...more: unknown[]) => {
        scope.tx = tx;
        // Joined until its callback ends: a promise of it still running then must not be handed
        // a transaction about to commit. What waits for the commit still waits (`after`).
        return Promise.resolve(storage.run(scope, () => (fn as Transacting)(tx, ...more))).finally(() => {
          scope.joinable = false;
        });
      },
      ...rest,
    ) as Promise<unknown>;
    return Promise.resolve(run).then(
      async (result) => {
        scope.open = false;
        // Committed: what waited for it (events the engine could not write inside) goes now, in order.
        for (const job of scope.after) await job();
        return result;
      },
      (error) => {
        scope.open = false;
        throw error;
      },
    );
  };
  client[method] = wrapped;
  return {
    store,
    dialect,
    current() {
      const scope = storage.getStore();
      if (!scope?.open || !scope.joinable || !join) return undefined;
      scope.joined ??= join(scope.tx);
      return scope.joined;
    },
    afterCommit() {
      const scope = storage.getStore();
      if (!scope?.open || join) return undefined;
      return (job) => scope.after.push(job);
    },
  };
}

/**
 * The engine's own connection to Prisma's SQLite file: its path, or Prisma's `file:` URL of it.
 * A URL of another scheme is refused (Prisma on PostgreSQL takes the pg Pool it was given).
 */
function sqliteFile(database: string, warn: { onError?: (message: string, error: unknown) => void }) {
  if (/^[a-z][a-z0-9+.-]+:/i.test(database) && !database.startsWith('file:')) {
    throw new TypeError(
      'webhooks(): orm.database is a SQLite file path (or file: URL); for Prisma on PostgreSQL pass the pg Pool you gave PrismaPg',
    );
  }
  const filename = database.startsWith('file:') ? database.slice('file:'.length).replace(/^\/\/(?=\/)/, '') : database;
  return { store: sqliteStore({ filename, ...warn }), dialect: 'sqlite' as const };
}
