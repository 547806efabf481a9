import pRetry from 'p-retry';

/**
 * In-process retries of store calls while the database is busy or briefly gone (a restart, a
 * failover, a busy SQLite file). Never used for the HTTP schedule, which is durable.
 *
 * Errors that look like a lost or refused connection, a busy lock or a serialisation failure are
 * retried for the whole `budgetMs`; anything else (a bug, a constraint) at most 5 times, so it
 * surfaces quickly. The scheduler gives an outcome write the rest of its lease as budget: giving
 * up earlier would let the lease lapse into a second send of a delivery that already happened.
 */
export function transient<T>(fn: () => Promise<T>, budgetMs = 2_000): Promise<T> {
  return pRetry(fn, {
    retries: 1_000,
    minTimeout: 20,
    maxTimeout: 1_000,
    factor: 2,
    maxRetryTime: Math.max(budgetMs, 100),
    shouldRetry: ({ error, attemptNumber }) => isTransient(error) || attemptNumber <= 5,
  });
}

const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_RECOVERY',
  'SQLITE_LOCKED',
  '57P01',
  '57P02',
  '57P03', // admin / crash shutdown, cannot connect now
  '53300', // too many connections
  '40001',
  '40P01', // serialisation failure, deadlock
]);

/** True for errors a retry can cure: connection loss, busy locks, serialisation conflicts. */
export function isTransient(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (TRANSIENT_CODES.has(code) || code.startsWith('08')) return true; // class 08: connection exception
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not currently accepting connections|the database system is (starting up|shutting down|in recovery)|database is locked/i.test(
    message,
  );
}
