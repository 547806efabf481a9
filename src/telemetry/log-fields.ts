import { describeError } from '../errors.js';
import type { LogMeta } from '../types.js';

/** What a logged problem concerns, when it concerns one record. */
export type LogIds = Pick<LogMeta, 'webhookId' | 'deliveryId' | 'noticeId'>;

/**
 * The `meta` of every warning and error the engine logs, in one shape (see `Logger`): the ids it
 * concerns, `errorKind` (a short stable code to filter and alert on) and `error` (the message and
 * its cause). Built from the error and the ids only, never from an event, a token or a response
 * body, so what reaches the host's logger cannot carry them.
 */
export function logFields(error: unknown, ids: LogIds = {}): LogMeta & { errorKind: string; error: string } {
  return { ...ids, errorKind: errorType(error), error: describeError(error) };
}

/** A short, stable name for an error: its `code` (`ERR_STORE`, `SQLITE_BUSY`, `57P01`), else its class name. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.length > 0 && code.length <= 64) return code;
  if (error instanceof Error) return error.name;
  return typeof error;
}
