import { AsyncLocalStorage } from 'node:async_hooks';
import type { KyselyStore } from '../../adapters/kysely/store.js';
import { postgresStore } from '../../adapters/postgres/index.js';
import type { Pool } from '../../adapters/postgres/pool.js';
import { type SqliteDatabase, sqliteStore } from '../../adapters/sqlite/index.js';

/** better-auth's own `type` for the two databases the plugin shares. */
export type SharedDialect = 'sqlite' | 'postgres';

/**
 * The engine's store on better-auth's own database: the same better-sqlite3 handle, or the same
 * pg Pool. Anything else (an ORM adapter, a Kysely config, no database) is refused at start,
 * because the whole point is one database and one transaction for the user row and its event.
 */
export function sharedStore(
  database: unknown,
  onError?: (message: string, error: unknown) => void,
): {
  store: KyselyStore;
  dialect: SharedDialect;
} {
  const db = database as Record<string, unknown> | null | undefined;
  if (db && typeof db.prepare === 'function' && typeof db.pragma === 'function') {
    return { store: sqliteStore({ database: db as unknown as SqliteDatabase, ...(onError ? { onError } : {}) }), dialect: 'sqlite' };
  }
  if (db && typeof db.connect === 'function' && typeof db.query === 'function' && typeof db.on === 'function' && 'totalCount' in db) {
    return { store: postgresStore({ pool: db as unknown as Pool, ...(onError ? { onError } : {}) }), dialect: 'postgres' };
  }
  throw new TypeError(
    'identity-webhooks/better-auth: betterAuth({ database }) must be a better-sqlite3 Database or a pg Pool ' +
      '(the plugin keeps its tables in the same database, so that an event commits with the row it is about)',
  );
}

/** What the plugin needs of a Kysely instance: its transactions (no kysely import in src/). */
interface TransactionBuilderLike {
  execute<T>(fn: (trx: unknown) => Promise<T>): Promise<T>;
}

/**
 * Remembers, for the duration of each transaction of `kysely`, the transaction itself, so that
 * code running inside it (better-auth's adapter calls, our emits) can find it with `current()`.
 * better-auth 1.7 keeps its Kysely transaction inside a closure of its adapter; handing it a
 * Kysely that records its transactions is the one way to join them.
 */
export function transactionTracker<K extends object>(kysely: K): { kysely: K; current(): unknown } {
  // `open` turns false when the transaction ends: a promise started inside it and still running
  // after the commit must not be handed a finished transaction.
  const storage = new AsyncLocalStorage<{ trx: unknown; open: boolean }>();
  const wrapBuilder = (builder: TransactionBuilderLike): TransactionBuilderLike =>
    new Proxy(builder, {
      get(target, property) {
        if (property === 'execute') {
          return <T>(fn: (trx: unknown) => Promise<T>) =>
            target.execute((trx) => {
              const scope = { trx, open: true };
              return storage
                .run(scope, () => fn(trx))
                .finally(() => {
                  scope.open = false;
                });
            });
        }
        const value = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        // setIsolationLevel() and friends return a new builder: keep tracking it.
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          return result && typeof result === 'object' && typeof result.execute === 'function' ? wrapBuilder(result) : result;
        };
      },
    });
  const tracked = new Proxy(kysely, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === 'transaction' && typeof value === 'function') return () => wrapBuilder(value.call(target));
      // Kysely keeps its state in #private fields, which a proxy as `this` cannot reach: its
      // methods are bound. Not a getter's value: `fn` is a function carrying `count`, `sum`,
      // `coalesce`…, which a bound copy would not have (better-auth's count() calls `db.fn.count`).
      return typeof value === 'function' && !isAccessor(target, property) ? value.bind(target) : value;
    },
  });
  return {
    kysely: tracked,
    current: () => {
      const scope = storage.getStore();
      return scope?.open ? scope.trx : undefined;
    },
  };
}

/** Whether `property` of `object` (or of one of its prototypes) is a getter rather than a method. */
function isAccessor(object: object, property: PropertyKey): boolean {
  for (let o: object | null = object; o; o = Object.getPrototypeOf(o)) {
    const descriptor = Object.getOwnPropertyDescriptor(o, property);
    if (descriptor) return descriptor.get !== undefined;
  }
  return false;
}
