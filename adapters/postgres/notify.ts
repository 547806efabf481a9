import { type Kysely, sql } from 'kysely';

/**
 * The channel every process of one database listens on. Anything that makes work due outside the
 * engine (a bulk insert of deliveries, a script re-queueing failures) can wake the schedulers too.
 *
 * @example
 * ```sql
 * select pg_notify('identity_webhooks_wake', '');
 * ```
 */
export const WAKE_CHANNEL = 'identity_webhooks_wake';

/**
 * Sends the wake-up hint. Issued inside the writing transaction: PostgreSQL delivers it on commit
 * (never for a rollback) and folds identical hints of one transaction into one. The payload is
 * empty, or `from`: the worker whose own outcome made the work due (its listener skips it).
 */
export async function notifyWake(db: Kysely<any>, from = ''): Promise<void> {
  await sql`select pg_notify(${WAKE_CHANNEL}, ${from})`.execute(db);
}

/** The subset of a `pg` pool client the listener uses. */
export interface ListenClient {
  query(text: string, parameters: readonly unknown[]): Promise<unknown>;
  on(event: 'notification', listener: (message: unknown) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
  removeListener(event: 'notification' | 'error' | 'end', listener: (...args: any[]) => void): unknown;
  /** Back to the pool; with an error, the pool destroys the connection. */
  release(error?: Error | boolean): void;
}

const FIRST_RECONNECT_MS = 100;
const MAX_RECONNECT_MS = 5_000;

/**
 * Holds one connection in LISTEN and turns hints into `onWake` calls, coalesced to one per turn
 * of the event loop (a burst of 1,000 emits wakes the scheduler once, not 1,000 times).
 *
 * When the connection is lost (PostgreSQL restarted, backend terminated) it reconnects with
 * back-off, and wakes once after reconnecting: hints sent while nobody listened are gone.
 */
export class WakeListener {
  #client: ListenClient | null = null;
  /** Gives the current connection back exactly once (pg throws on a double release). */
  #drop: ((error?: Error) => void) | null = null;
  #closed = false;
  #reconnectMs = FIRST_RECONNECT_MS;
  #timer: NodeJS.Timeout | undefined;
  #wakePending = false;
  #connecting: Promise<void> | null = null;

  constructor(
    private readonly connect: () => Promise<ListenClient>,
    private readonly onWake: () => void,
    private readonly onError: (message: string, error: unknown) => void,
    /** A worker id: hints whose payload is this one are this worker's own, and not heard. */
    private readonly self?: string,
  ) {}

  start(): void {
    this.#connecting = this.#connect();
  }

  /** True while LISTEN is active (tests wait for it). */
  get listening(): boolean {
    return this.#client !== null;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#connecting;
    const client = this.#client;
    const drop = this.#drop;
    if (!client || !drop) return;
    // A clean UNLISTEN lets the pool reuse the connection; if it fails the pool destroys it.
    await client.query(`unlisten ${WAKE_CHANNEL}`, []).then(
      () => drop(),
      (error: Error) => drop(error),
    );
  }

  async #connect(): Promise<void> {
    let client: ListenClient;
    try {
      client = await this.connect();
    } catch (error) {
      this.#reconnectLater(error);
      return;
    }
    let released = false;
    const heard = (message: unknown) => {
      if (this.self !== undefined && (message as { payload?: unknown } | null)?.payload === this.self) return;
      this.#wake();
    };
    const lost = (error?: Error) => {
      if (released) return;
      released = true;
      client.removeListener('notification', heard);
      client.removeListener('error', lost);
      client.removeListener('end', lost);
      if (this.#client === client) {
        this.#client = null;
        this.#drop = null;
      }
      // Given back with an error the pool destroys the connection; a clean close reuses it.
      client.release(this.#closed ? error : (error ?? new Error('listen connection ended')));
      if (!this.#closed) this.#reconnectLater(error);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', heard);
    if (this.#closed) return lost();
    try {
      await client.query(`listen ${WAKE_CHANNEL}`, []);
    } catch (error) {
      return lost(error as Error);
    }
    if (released) return;
    this.#client = client;
    this.#drop = lost;
    this.#reconnectMs = FIRST_RECONNECT_MS;
    // Anything emitted while we were not listening was not heard: look once.
    this.#wake();
  }

  #reconnectLater(error: unknown): void {
    if (this.#closed) return;
    this.onError(`postgres: wake-up listener lost; reconnecting in ${this.#reconnectMs} ms (polling meanwhile)`, error);
    this.#timer = setTimeout(() => {
      this.#connecting = this.#connect();
    }, this.#reconnectMs);
    this.#timer.unref();
    this.#reconnectMs = Math.min(MAX_RECONNECT_MS, this.#reconnectMs * 2);
  }

  #wake(): void {
    if (this.#wakePending || this.#closed) return;
    this.#wakePending = true;
    setImmediate(() => {
      this.#wakePending = false;
      if (!this.#closed) this.onWake();
    });
  }
}
