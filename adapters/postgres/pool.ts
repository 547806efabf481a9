import type { PostgresPool, PostgresPoolClient } from 'kysely';

/**
 * The subset of a node-postgres `Pool` (and its clients) the adapter uses, written out so the
 * adapter's types need neither `pg` nor `@types/pg`: a host's `new pg.Pool()` fits it as is.
 */
export interface PoolClient extends PostgresPoolClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'notification', listener: (message: unknown) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  once(event: 'end', listener: () => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'notification' | 'error' | 'end', listener: (...args: any[]) => void): unknown;
  release(error?: Error | boolean): void;
}

export interface Pool extends PostgresPool {
  connect(): Promise<PoolClient>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'connect', listener: (client: PoolClient) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'connect', listener: (client: PoolClient) => void): unknown;
}
