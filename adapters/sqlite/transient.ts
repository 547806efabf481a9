import { errorCode, errorMessage, isSocketError } from '../kysely/transient.js';

const BUSY = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_LOCKED']);

/** SQLite's passing failures: another process holds the write lock longer than busy_timeout. */
export function isTransient(error: unknown): boolean {
  return BUSY.has(errorCode(error)) || isSocketError(error) || /database is locked/i.test(errorMessage(error));
}
