import { ValidationError } from './errors.js';
import type { DeliveryCursor } from './store.js';

/**
 * The delivery log's page token: opaque to callers, a position to us (the last row's creation
 * time and id), so a page never shifts when new deliveries arrive. Versioned (`1.`) so the
 * format can change; anything that does not decode to a plausible position is refused.
 */
export function encodeCursor(cursor: DeliveryCursor): string {
  return `1.${Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url')}`;
}

export function decodeCursor(token: unknown, field = 'cursor'): DeliveryCursor {
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
  if (typeof id !== 'string' || !/^msg_[0-9a-f]{32}$/.test(id)) throw refused();
  return { createdAt: createdAt as number, id };
}
