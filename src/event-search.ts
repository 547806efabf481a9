import { decodeCursor, encodeCursor } from './cursor.js';
import { ValidationError } from './errors.js';
import type { DeliveryRecord } from './model.js';
import type { StoreAccess } from './store-access.js';
import type { EventSearchOptions, EventSearchPage } from './types.js';

/** The longest subject or email a search takes (a longer one is refused, not cut). */
const MAX_SUBJECT = 255;

/**
 * `hooks.events.search`: what was sent about a user or an organization, across the environment's
 * webhooks. The subject is the catalog's (a user's id for `user.*` and memberships, an
 * organization's code), written with each event; an email matches the events of the user it
 * names. The store answers from its indexes of (environment, subject | email, time).
 */
export async function searchEvents(access: StoreAccess, environment: string, options: EventSearchOptions): Promise<EventSearchPage> {
  const subject = typeof options.subject === 'string' ? options.subject.trim() : '';
  if (subject === '' || subject.length > MAX_SUBJECT) {
    throw new ValidationError(`subject must be a subject or an email of 1 to ${MAX_SUBJECT} characters`, { field: 'subject' });
  }
  const limit = options.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new ValidationError('limit must be an integer from 1 to 100', { field: 'limit' });
  const before = options.cursor === undefined || options.cursor === null ? null : decodeCursor(options.cursor, 'cursor', 'event');
  // One more than asked tells whether a page follows.
  const found = await access.run('searching events by subject', (s) =>
    s.searchEvents(environment, { key: subject, limit: limit + 1, before }),
  );
  const events = found.events.slice(0, limit);
  const byEvent = new Map<string, DeliveryRecord[]>(events.map((e) => [e.id, []]));
  for (const d of found.deliveries) byEvent.get(d.eventId)?.push(d);
  const last = events.at(-1);
  return {
    events: events.map((e) => ({ ...e, deliveries: byEvent.get(e.id)! })),
    nextCursor: found.events.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}
