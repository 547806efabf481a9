import { decodeCursor, encodeCursor } from '../cursor.js';
import { messageHeaders, messagePayload } from '../delivery/message.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { DeliveryStatus } from '../model.js';
import type { Management } from '../types.js';
import * as v from '../validate.js';
import { environmentOf as env, type ManagementDeps, timeOf } from './shared.js';

const STATUSES: readonly DeliveryStatus[] = ['pending', 'held', 'delivered', 'failed'];

/** The delivery log: its pages, one delivery, its attempts, its message as sent, and resend. */
export function deliveryFunctions({ access, clock, catalog, issuer, wake }: ManagementDeps): Management['deliveries'] {
  const deliveries: Management['deliveries'] = {
    async list(filter = {}) {
      const environment = env(filter);
      const limit = filter.limit ?? 25;
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new ValidationError('limit must be an integer from 1 to 100', { field: 'limit' });
      if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
        throw new ValidationError(`status must be one of ${STATUSES.join(', ')}`, { field: 'status' });
      }
      if (filter.eventType !== undefined && !catalog.has(filter.eventType)) {
        throw new ValidationError(`${JSON.stringify(String(filter.eventType).slice(0, 100))} is not a known event type`, {
          field: 'eventType',
          code: 'ERR_UNKNOWN_EVENT_TYPE',
        });
      }
      const after = filter.cursor === undefined || filter.cursor === null ? null : decodeCursor(filter.cursor);
      const since = filter.since === undefined ? undefined : timeOf(filter.since, 'since');
      const until = filter.until === undefined ? undefined : timeOf(filter.until, 'until');
      if (since !== undefined && until !== undefined && since >= until)
        throw new ValidationError('since must be before until', { field: 'since' });
      // An id that cannot exist matches nothing (as it would not be found).
      for (const [key, prefix] of [
        ['webhookId', 'webhook'],
        ['eventId', 'event'],
        ['deliveryId', 'msg'],
      ] as const) {
        const value = filter[key];
        if (value !== undefined && !v.isPlausibleId(value, prefix)) return { deliveries: [], events: {}, nextCursor: null };
      }
      const page = await access.run('listing deliveries', async (s) => {
        // Another environment's webhook: nothing, found by its key, not by walking its log.
        if (filter.webhookId !== undefined && !(await s.getWebhook(environment, filter.webhookId)))
          return { deliveries: [], next: null, events: [] };
        const found = await s.listDeliveries(environment, {
          webhookId: filter.webhookId,
          eventId: filter.eventId,
          status: filter.status,
          eventType: filter.eventType,
          deliveryId: filter.deliveryId,
          since,
          until,
          limit,
          after,
        });
        // What each row's event is about, and whether it is a test event: one read by key for the page.
        const events = await s.summarizeEvents(environment, [...new Set(found.deliveries.map((d) => d.eventId))]);
        return { ...found, events };
      });
      return {
        deliveries: page.deliveries,
        events: Object.fromEntries(page.events.map((e) => [e.id, e])),
        nextCursor: page.next ? encodeCursor(page.next) : null,
      };
    },
    async get(id, options) {
      const environment = env(options);
      return access.find('delivery', id, 'reading a delivery', (s) => s.getDelivery(environment, id));
    },
    async attempts(id, options) {
      await deliveries.get(id, options);
      return access.run('listing attempts', (s) => s.listAttempts(env(options), id));
    },
    async resend(id, options) {
      const environment = env(options);
      const delivery = await access.find('delivery', id, 'resending a delivery', (s) => s.resendDelivery(environment, id, clock.now()));
      wake();
      return delivery;
    },
    async message(id, options) {
      const environment = env(options);
      const delivery = await deliveries.get(id, { environment });
      const [event, attempts, webhook] = await access.run('reading a message', (s) =>
        Promise.all([
          s.getEvent(environment, delivery.eventId),
          s.listAttempts(environment, id),
          s.getWebhook(environment, delivery.webhookId),
        ]),
      );
      // Retention deletes events only once none of their deliveries is left.
      if (!event) throw new NotFoundError('event', delivery.eventId);
      const at = attempts.at(-1)?.startedAt ?? clock.now();
      // As the webhook is now: its format, its own headers (credentials masked), its auth.
      const to = webhook ?? undefined;
      return {
        delivery,
        format: to?.format ?? 'jwt',
        payload: messagePayload(event, issuer(environment), at, to),
        headers: messageHeaders(delivery.id, to, at),
        attempts,
      };
    },
  };
  return deliveries;
}
