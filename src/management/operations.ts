import { ValidationError } from '../errors.js';
import type { DeliveryCursor } from '../store.js';
import type { Management } from '../types.js';
import { CHANGE_BATCH, environmentOf as env, type ManagementDeps, timeOf } from './shared.js';

/** What an account holder does to a webhook's deliveries: recover failed ones, send the waiting now, count them, send a test event. */
export function operationFunctions(
  deps: ManagementDeps,
  get: Management['webhooks']['get'],
): Pick<Management['webhooks'], 'recover' | 'sendWaiting' | 'waiting' | 'test'> {
  const { access, clock, catalog } = deps;
  return {
    async recover(id, options) {
      const environment = env(options);
      const since = timeOf(options?.since, 'since');
      const until = options?.until === undefined ? clock.now() : timeOf(options.until, 'until');
      if (since >= until) throw new ValidationError('since must be before until', { field: 'since' });
      let recovered = 0;
      let after: DeliveryCursor | null = null;
      do {
        const now = clock.now();
        const batch = await access.find('webhook', id, 'recovering deliveries', (s) =>
          s.recoverFailed(environment, id, { since, until, now, limit: CHANGE_BATCH, after }),
        );
        recovered += batch.recovered;
        after = batch.last;
        if (batch.recovered > 0) deps.wake();
      } while (after);
      return { recovered };
    },
    async sendWaiting(id, options) {
      const environment = env(options);
      const now = clock.now();
      let sent = 0;
      for (;;) {
        const batch = await access.find('webhook', id, 'sending waiting deliveries', (s) =>
          s.sendWaiting(environment, id, { now, limit: CHANGE_BATCH }),
        );
        sent += batch.sent;
        if (batch.sent > 0) deps.wake();
        if (!batch.more) return { sent };
      }
    },
    async waiting(id, options) {
      const environment = env(options);
      const now = clock.now();
      const [webhook, counts] = await Promise.all([
        get(id, { environment }),
        access.find('webhook', id, 'counting waiting deliveries', (s) => s.countWaiting(environment, id, now)),
      ]);
      // It is disabled at a failure past the threshold: with nothing pending there is none to come.
      const failing = webhook.status === 'enabled' && webhook.failingSince !== null && counts.pending > 0;
      return { ...counts, disablesAt: failing ? Math.max(now, webhook.failingSince! + deps.disableAfterMs) : null };
    },
    async test(id, options) {
      const environment = env(options);
      const webhook = await get(id, { environment });
      const type = options?.eventType ?? webhook.eventTypes[0]!;
      const entry = typeof type === 'string' ? catalog.entry(type) : undefined;
      if (!entry)
        throw new ValidationError(`${JSON.stringify(String(type).slice(0, 100))} is not a known event type`, {
          field: 'eventType',
          code: 'ERR_UNKNOWN_EVENT_TYPE',
        });
      const sent = await deps.emitTo(id, { type: entry.code, source: 'admin', data: structuredClone(entry.example), environment });
      return { eventId: sent.id, deliveryId: sent.deliveryIds[0]! };
    },
  };
}
