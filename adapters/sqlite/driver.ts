import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

/** The subset of a better-sqlite3 `Database` we use (so the core never imports the driver). */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
  readonly inTransaction: boolean;
  readonly open: boolean;
}

export interface SqliteStatement {
  readonly reader: boolean;
  all(parameters: readonly unknown[]): unknown[];
  /** better-sqlite3: rows as arrays of column values, in the statement's column order (the statement keeps the mode). */
  raw(toggle: boolean): SqliteStatement;
  run(parameters: readonly unknown[]): { changes: number; lastInsertRowid: number | bigint };
}

/**
 * A Kysely dialect for better-sqlite3, different from Kysely's own in three ways that matter here:
 * transactions start with `BEGIN IMMEDIATE` (several processes on one file then queue on the
 * write lock under busy_timeout instead of failing a lock upgrade), prepared statements are
 * cached, and a database the host passed in is never closed by us. When the host shares the same
 * handle and has its own transaction open on it, our statements wait until it ends rather than
 * silently joining it.
 */
export class SqliteEngineDialect implements Dialect {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly owned: boolean,
  ) {}
  createDriver(): Driver {
    return new SqliteEngineDriver(this.db, this.owned);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createAdapter() {
    return new SqliteAdapter();
  }
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}

/**
 * One queue per database handle, not per driver: two stores (two Kysely instances) on the same
 * handle must not both pass the `inTransaction` check and then BEGIN inside each other.
 */
const queues = new WeakMap<SqliteDatabase, { tail: Promise<void> }>();

function queueOf(db: SqliteDatabase): { tail: Promise<void> } {
  let queue = queues.get(db);
  if (!queue) {
    queue = { tail: Promise.resolve() };
    queues.set(db, queue);
  }
  return queue;
}

/**
 * Takes the handle's turn once the statements and transactions queued before have finished;
 * everything queued after waits (without blocking the event loop) until the returned function
 * is called. The checkpoint thread uses it to copy the last WAL frames with no commit in between.
 */
export async function holdQueue(db: SqliteDatabase): Promise<() => void> {
  const queue = queueOf(db);
  const previous = queue.tail;
  let release!: () => void;
  queue.tail = new Promise((resolve) => (release = resolve));
  await previous;
  return release;
}

class SqliteEngineDriver implements Driver {
  #queue: { tail: Promise<void> };
  #connection: SqliteEngineConnection;
  #release: (() => void) | undefined;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly owned: boolean,
  ) {
    this.#connection = new SqliteEngineConnection(db);
    this.#queue = queueOf(db);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    // One connection: callers queue in order.
    const previous = this.#queue.tail;
    let release!: () => void;
    this.#queue.tail = new Promise((resolve) => (release = resolve));
    await previous;
    this.#release = release;
    // The host's own transaction on a shared handle: wait for it rather than run inside it.
    while (this.db.inTransaction) await new Promise((r) => setImmediate(r));
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }
  async destroy(): Promise<void> {
    if (this.owned && this.db.open) this.db.close();
  }
}

/**
 * Marks a query whose rows come back as arrays of column values (better-sqlite3's raw mode), in
 * the order of its columns, instead of objects: half the cost of a row of the claim's twelve
 * columns, where the caller maps the rows into objects of its own anyway.
 * See {@link withRowsAsArrays}.
 */
const ROWS_AS_ARRAYS: unique symbol = Symbol('identity-webhooks.rowsAsArrays');

/** `compiled`, to be run with its rows as arrays of column values (see {@link ROWS_AS_ARRAYS}). */
export function withRowsAsArrays(compiled: CompiledQuery): CompiledQuery {
  return Object.freeze({
    sql: compiled.sql,
    query: compiled.query,
    queryId: compiled.queryId,
    parameters: compiled.parameters,
    [ROWS_AS_ARRAYS]: true,
  });
}

class SqliteEngineConnection implements DatabaseConnection {
  #cache = new Map<string, SqliteStatement>();
  /** The cached statements now in raw mode (a statement keeps its mode until told otherwise). */
  #raw = new WeakSet<SqliteStatement>();
  constructor(private readonly db: SqliteDatabase) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const stmt = this.#prepare(compiled.sql);
    const parameters = compiled.parameters as unknown[];
    const arrays = (compiled as { [ROWS_AS_ARRAYS]?: true })[ROWS_AS_ARRAYS] === true;
    if (arrays !== this.#raw.has(stmt) && stmt.reader) {
      stmt.raw(arrays);
      if (arrays) this.#raw.add(stmt);
      else this.#raw.delete(stmt);
    }
    if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  // biome-ignore lint/correctness/useYield: Kysely's interface requires a generator; the engine never streams.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used by the engine');
  }

  #prepare(sql: string): SqliteStatement {
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      // Statements built from variable IN-lists would grow the cache without bound.
      if (this.#cache.size >= 500) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }
}
