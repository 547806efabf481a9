import { ValidationError } from './errors.js';
import type { DeliveryCursor } from './store.js';

/**
 * The page token of the delivery log and of a search by subject: opaque to callers, a position to us (the last row's creation
 * time and id), so a page never shifts when new deliveries arrive. Versioned (`1.`) so the
 * format can change; anything that does not decode to a plausible position is refused.
 */
export function encodeCursor(cursor: DeliveryCursor): string {
  return `1.${Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url')}`;
}

/** `prefix`: the kind of id a page of this list ends on (`msg` for the log, `event` for a search by subject). */
export function decodeCursor(token: unknown, field = 'cursor', prefix: 'msg' | 'event' = 'msg'): DeliveryCursor {
  const refused = () => new ValidationError(`${field} is not a page token this API gave out`, { field: field });
  if (typeof token !== 'string' || token.length > 300 || !/^1\.[A-Za-z0-9_-]+$/.test(token)) throw refused();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token.slice(2), 'base64url').toString('utf8'));
  } catch {
    throw refused();
  }
  if (!Array.isArray(value) || value.length !== 2) throw refused();
  const [createdAt, id] = value as [unknown, unknown];
  if (!Number.isSafeInteger(createdAt) || (createdAt as number) < 0) throw refused();
  if (typeof id !== 'string' || !new RegExp(`^${prefix}_[0-9a-f]{32}$`).test(id)) throw refused();
  return { createdAt: createdAt as number, id };
}
