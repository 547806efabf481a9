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
 * A Kysely dialect for better-sqlite3, different from Kysely's own in four ways that matter here:
 * transactions start with `BEGIN IMMEDIATE` (several connections to one file then queue on the
 * write lock under busy_timeout instead of failing a lock upgrade with SQLITE_BUSY_SNAPSHOT),
 * prepared statements are cached, a database the host passed in is never closed by us, and the
 * handle's one connection is shared with the host without either side ever starting a
 * transaction inside the other's:
 *
 * - none of our statements runs while the host's own transaction is open on the handle: it waits
 *   for the host's COMMIT or ROLLBACK (polling on a timer, not spinning; bounded, see
 *   {@link hostTransactionEnded});
 * - each of our transactions runs whole within one turn of the event loop (see
 *   {@link SqliteEngineDriver.beginTransaction}), so no code of the host ever runs while one is
 *   open: the host's `BEGIN` never meets ours ("cannot start a transaction within a
 *   transaction"), better-sqlite3's `database.transaction()` never turns into a savepoint of
 *   ours, and the host's own connection to the file never sits in a busy wait that blocks the
 *   very thread our COMMIT needs;
 * - the other way round, on a file the store opened, a lock held by another connection is waited
 *   for on a timer ({@link whenUnlocked}), never in SQLite's busy wait: a host transaction on a
 *   second connection may stay open across an `await` and still reach its COMMIT.
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
 * What the store knows of one database handle, whichever store (Kysely instance) uses it: two
 * stores on one handle must not both pass the `inTransaction` check and then BEGIN inside each
 * other.
 */
export interface HandleState {
  /** The end of the queue every statement and transaction of ours takes its turn in. */
  tail: Promise<void>;
  /** True while the transaction open on the handle is one of ours (else it is the host's). */
  ours: boolean;
  /** How long a statement of ours waits for the host's transaction to end ({@link hostTransactionEnded}). */
  waitMs: number;
  /**
   * True for a handle the store opened itself: its busy_timeout is 0 and a lock held by another
   * connection is waited for on timers ({@link whenUnlocked}), never in SQLite's busy handler,
   * which sleeps on this thread (see {@link SqliteEngineDialect}).
   */
  pollsLock: boolean;
}

const handles = new WeakMap<SqliteDatabase, HandleState>();

export function handleOf(db: SqliteDatabase): HandleState {
  let handle = handles.get(db);
  if (!handle) {
    handle = { tail: Promise.resolve(), ours: false, waitMs: 5000, pollsLock: false };
    handles.set(db, handle);
  }
  return handle;
}

/** True when the handle is inside a transaction the host opened (not one of ours). */
export function inHostTransaction(db: SqliteDatabase): boolean {
  return db.inTransaction && !handleOf(db).ours;
}

/**
 * The timers as they were when this module loaded: a host's tests that fake timers afterwards
 * (vi.useFakeTimers, sinon) would otherwise stop every transaction of ours at its first hop.
 */
const { setImmediate: immediate, setTimeout: later } = globalThis;

/** The next turn of the event loop: nothing else is then queued to run before us. */
const nextTurn = () => new Promise<void>((resolve) => immediate(resolve));

/**
 * Resolves once the host's transaction on the handle has ended (at once when none is open). It
 * looks again on a timer whose delay doubles up to a bound, never a loop of `setImmediate` (which kept a
 * core at 100 % for as long as the host's transaction lasted, forever when that transaction was
 * itself waiting for us). After `waitMs` (the store's `busyTimeoutMs`) it gives up with a
 * `SQLITE_BUSY` error, what a second connection would get from busy_timeout: transient, so the
 * engine's loops try again later and `emit` gives it transient retries for a while before it reports ERR_STORE.
 */
export async function hostTransactionEnded(db: SqliteDatabase): Promise<void> {
  const { waitMs } = handleOf(db);
  for (const delay of lockWaits(waitMs)) {
    if (!inHostTransaction(db)) return;
    await sleep(delay);
  }
  if (inHostTransaction(db)) {
    throw Object.assign(
      new Error(
        `database is locked: the host's transaction on the shared better-sqlite3 handle stayed open longer than ${waitMs} ms ` +
          '(busyTimeoutMs); the engine waits for it to end before each of its statements',
      ),
      { code: 'SQLITE_BUSY' },
    );
  }
}

/**
 * The waits between two looks at a host's transaction or another connection's lock: each twice
 * the last, up to a small bound, until they add up to `waitMs`. Time waited is the sum of our own
 * timers (no clock to read, none for a test to fake).
 */
function* lockWaits(waitMs: number): Generator<number> {
  for (let delay = 1, waited = 0; waited < waitMs; waited += delay, delay = Math.min(delay * 2, 16)) yield delay;
}

const sleep = (ms: number) => new Promise((resolve) => later(resolve, ms));

/**
 * Runs `run` (statements that may need the file's write lock, synchronous from the first to the
 * last). On a handle the store opened itself, when another connection holds the lock
 * (SQLITE_BUSY at once: busy_timeout is 0), it runs again on a timer whose delay doubles up to a
 * bound, for up to `waitMs`, then lets the error through (transient: the loops try again later).
 * SQLite's own busy handler would sleep on this thread instead: when the holder is another
 * connection in this process whose transaction awaits something (a host's async Kysely or ORM
 * transaction), nothing of the host could run, its COMMIT included, until busy_timeout ran out.
 * On a handle the host passed in, `run` runs once under the host's own busy_timeout. The first
 * try is synchronous, as a statement was before (nothing is awaited unless the lock is held).
 */
export function whenUnlocked<T>(db: SqliteDatabase, run: () => T): T | Promise<T> {
  try {
    return run();
  } catch (error) {
    if (!handleOf(db).pollsLock || !isBusy(error)) throw error;
    return untilUnlocked(db, run, error);
  }
}

async function untilUnlocked<T>(db: SqliteDatabase, run: () => T, refused: unknown): Promise<T> {
  for (const delay of lockWaits(handleOf(db).waitMs)) {
    await sleep(delay);
    try {
      return run();
    } catch (error) {
      if (!isBusy(error)) throw error;
      refused = error;
    }
  }
  throw refused;
}

const isBusy = (error: unknown) => /^SQLITE_BUSY/.test(String((error as { code?: unknown } | null)?.code));

/**
 * Takes the handle's turn once the statements and transactions queued before have finished;
 * everything queued after waits (without blocking the event loop) until the returned function
 * is called. The checkpoint thread uses it to copy the last WAL frames with no commit in between.
 */
export async function holdQueue(db: SqliteDatabase): Promise<() => void> {
  const { previous, release } = joinQueue(handleOf(db));
  await previous;
  return release;
}

/** Takes a place at the end of the handle's queue: the turn comes when `previous` settles, and passes on at `release()`. */
function joinQueue(handle: HandleState): { previous: Promise<void>; release: () => void } {
  const previous = handle.tail;
  let release!: () => void;
  handle.tail = new Promise((resolve) => (release = resolve));
  return { previous, release };
}

/**
 * {@link holdQueue}, giving up after the store's `busyTimeoutMs` with `null`: the turn, when it
 * comes, passes straight on. For `emit`, whose caller may itself hold the queue (an emit without
 * `transaction` inside the host's `store.kysely.transaction()`): it then fails in bounded time
 * instead of waiting for a transaction that waits for it.
 */
export async function holdQueueAWhile(db: SqliteDatabase): Promise<(() => void) | null> {
  const queue = handleOf(db);
  const { previous, release } = joinQueue(queue);
  let timer: ReturnType<typeof later> | undefined;
  const turn = await Promise.race([
    previous.then(() => true),
    new Promise<false>((resolve) => {
      timer = later(() => resolve(false), queue.waitMs);
    }),
  ]);
  clearTimeout(timer);
  if (turn) return release;
  void previous.then(release);
  return null;
}

class SqliteEngineDriver implements Driver {
  #handle: HandleState;
  #connection: SqliteEngineConnection;
  #release: (() => void) | undefined;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly owned: boolean,
  ) {
    this.#handle = handleOf(db);
    this.#connection = new SqliteEngineConnection(db, this.#handle);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    // One connection: callers queue in order. (The host's own transaction is waited for where a
    // statement or a transaction starts: see executeQuery and beginTransaction.)
    const { previous, release } = joinQueue(this.#handle);
    await previous;
    this.#release = release;
    return this.#connection;
  }

  /**
   * Starts the transaction at the top of a turn of the event loop, when nothing else is queued to
   * run: every statement of ours resolves at once (better-sqlite3 is synchronous) and no store
   * transaction awaits anything but them, so the whole transaction, BEGIN to COMMIT, then runs
   * before any other code does. That is what lets the host share the connection, or open a
   * second one to the file in this process, without ever meeting our transaction half done. The
   * cost is one hop per transaction; the hot paths (emit, the claim, a group of successes) are
   * single statements or synchronous and take none.
   */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    // Another connection's lock is waited for as in whenUnlocked, in a loop of its own so that
    // each try starts at the top of a turn, not in SQLite's busy handler.
    const waits = lockWaits(this.#handle.pollsLock ? this.#handle.waitMs : 0);
    for (;;) {
      for (;;) {
        await nextTurn();
        if (!inHostTransaction(this.db)) break;
        await hostTransactionEnded(this.db);
      }
      this.#handle.ours = true;
      try {
        await connection.executeQuery(BEGIN);
        return;
      } catch (error) {
        this.#handle.ours = false;
        const wait = isBusy(error) ? waits.next() : undefined;
        if (!wait || wait.done) throw error;
        await sleep(wait.value);
      }
    }
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(COMMIT);
    } finally {
      // A COMMIT that failed with SQLITE_BUSY leaves the transaction open, still ours: Kysely
      // rolls it back next.
      this.#handle.ours = this.db.inTransaction;
    }
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      if (this.db.inTransaction) await connection.executeQuery(ROLLBACK);
    } finally {
      this.#handle.ours = false;
    }
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

const BEGIN = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

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
  constructor(
    private readonly db: SqliteDatabase,
    private readonly handle: HandleState,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    // Outside a transaction of ours, never inside the host's: checked right before the statement
    // runs, with nothing awaited in between (the host may have begun since our turn came).
    while (!this.handle.ours && this.db.inTransaction) await hostTransactionEnded(this.db);
    const stmt = this.#prepare(compiled.sql);
    const parameters = compiled.parameters as unknown[];
    const arrays = (compiled as { [ROWS_AS_ARRAYS]?: true })[ROWS_AS_ARRAYS] === true;
    if (arrays !== this.#raw.has(stmt) && stmt.reader) {
      stmt.raw(arrays);
      if (arrays) this.#raw.add(stmt);
      else this.#raw.delete(stmt);
    }
    // Outside a transaction of ours, a statement may have to wait for another connection's lock.
    const execute = (): QueryResult<R> => {
      if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
      const { changes, lastInsertRowid } = stmt.run(parameters);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    };
    return this.handle.ours ? execute() : whenUnlocked(this.db, execute);
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
