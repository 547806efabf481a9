import { errorCode, errorMessage, isSocketError } from '../kysely/transient.js';

const SQLSTATES = new Set([
  '57P01', // admin shutdown
  '57P02', // crash shutdown
  '57P03', // cannot connect now
  '53300', // too many connections
  '40001', // serialisation failure
  '40P01', // deadlock detected
]);

/**
 * PostgreSQL's passing failures: the server restarting or refusing connections, a lost
 * connection (class 08), a serialisation conflict. node-pg reports some of them only in its
 * message (a connection ended before any SQLSTATE could be sent), hence the patterns.
 */
export function isTransient(error: unknown): boolean {
  const code = errorCode(error);
  if (SQLSTATES.has(code) || code.startsWith('08') || isSocketError(error)) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not currently accepting connections|the database system is (starting up|shutting down|in recovery)/i.test(
    errorMessage(error),
  );
}
