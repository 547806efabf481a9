import type { Clock } from './clock.js';
import { NotFoundError, storeError, WebhooksError } from './errors.js';
import type { Store } from './store.js';
import { isPlausibleId } from './validate.js';

/**
 * How emit and the management functions reach the store: migrated once on first use, refused
 * after close, and every failure wrapped so its origin survives as `cause`.
 */
export class StoreAccess {
  #ready: Promise<void> | null = null;
  #migrated = false;
  #closed = false;

  constructor(
    readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Migrates on first call (again after a failed attempt); rejects once closed. */
  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(new WebhooksError('ERR_CLOSED', 'this webhooks engine is closed'));
    this.#ready ??= this.store.migrate(this.clock.now()).then(
      () => {
        this.#migrated = true;
      },
      (error) => {
        this.#ready = null;
        throw storeError(error, 'migrating');
      },
    );
    return this.#ready;
  }

  close(): void {
    this.#closed = true;
  }

  /**
   * Runs a store call once the store is ready; a failure becomes ERR_STORE saying what we were
   * `doing`. Once migrated, the call starts in the caller's own turn, with nothing awaited first:
   * an emit inside a host's synchronous better-sqlite3 transaction runs its statements before
   * that transaction commits.
   */
  run<T>(doing: string, fn: (store: Store) => Promise<T>): Promise<T> {
    if (this.#migrated && !this.#closed) return this.#call(doing, fn);
    return this.ready().then(() => this.#call(doing, fn));
  }

  async #call<T>(doing: string, fn: (store: Store) => Promise<T>): Promise<T> {
    try {
      return await fn(this.store);
    } catch (error) {
      throw storeError(error, doing);
    }
  }

  /** A record by id, or ERR_NOT_FOUND (an id that cannot exist, or of another environment, included). */
  async find<T>(
    what: 'webhook' | 'event' | 'delivery',
    id: string,
    doing: string,
    fn: (store: Store) => Promise<T | null | false>,
  ): Promise<T> {
    const prefix = what === 'delivery' ? 'msg' : what;
    const found = isPlausibleId(id, prefix) ? await this.run(doing, fn) : null;
    // An id that is not a string is named by its type: String() of an object can itself throw.
    if (!found) throw new NotFoundError(what, typeof id === 'string' ? id.slice(0, 128) : `(${typeof id})`);
    return found;
  }
}
