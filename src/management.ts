import type { Catalog } from './catalog/catalog.js';
import type { Clock } from './clock.js';
import { assertEndpointAllowed } from './delivery/guard/check.js';
import type { Guard } from './delivery/guard/guard.js';
import { ValidationError } from './errors.js';
import { newId } from './ids.js';
import type { WebhookRecord } from './model.js';
import type { StoreAccess } from './store-access.js';
import type { Management } from './types.js';
import * as v from './validate.js';

export interface ManagementDeps {
  access: StoreAccess;
  clock: Clock;
  catalog: Catalog;
  guard: Guard;
  maxWebhooks(environment: string): number | null;
  /** Tells the scheduler that work may be due now (held deliveries resumed). */
  wake(): void;
}

/**
 * The in-process management functions (`hooks.webhooks`, `.events`, `.deliveries`,
 * `.eventTypes`): validate, check the endpoint against the guard, one store call. The HTTP
 * routes (`http/operations.ts`) are a thin layer over these.
 */
export function createManagement(deps: ManagementDeps): Management {
  const { access, clock, catalog, guard } = deps;
  const env = (options: { environment?: string } | undefined) => v.environmentOf(options?.environment);

  const webhooks: Management['webhooks'] = {
    async create(input) {
      const environment = env(input);
      const clean = v.webhookInput(input, catalog);
      await assertEndpointAllowed(clean.endpoint, guard);
      const now = clock.now();
      const record: WebhookRecord = {
        id: newId('webhook', now),
        environment,
        ...clean,
        status: 'enabled',
        disabledReason: null,
        disabledAt: null,
        failingSince: null,
        lastError: null,
        createdAt: now,
        updatedAt: now,
      };
      await access.run('creating a webhook', (s) => s.createWebhook(record, { maxWebhooks: deps.maxWebhooks(environment) }));
      return record;
    },
    async get(id, options) {
      const environment = env(options);
      return access.find('webhook', id, 'reading a webhook', (s) => s.getWebhook(environment, id));
    },
    async list(options) {
      const environment = env(options);
      return access.run('listing webhooks', (s) => s.listWebhooks(environment));
    },
    async update(id, patch, options) {
      const environment = env(options);
      const clean = v.webhookPatch(patch, catalog);
      if (clean.endpoint !== undefined) await assertEndpointAllowed(clean.endpoint, guard);
      return access.find('webhook', id, 'updating a webhook', (s) => s.updateWebhook(environment, id, clean, clock.now()));
    },
    async delete(id, options) {
      const environment = env(options);
      await access.find('webhook', id, 'deleting a webhook', (s) => s.deleteWebhook(environment, id));
    },
    async disable(id, options) {
      const environment = env(options);
      return access.find('webhook', id, 'disabling a webhook', (s) => s.disableWebhook(environment, id, 'manual', clock.now()));
    },
    async enable(id, options) {
      const environment = env(options);
      const resume = options?.resumeHeld ?? true;
      if (typeof resume !== 'boolean') throw new ValidationError('resumeHeld must be a boolean', 'resumeHeld');
      const done = await access.find('webhook', id, 'enabling a webhook', (s) => s.enableWebhook(environment, id, clock.now(), resume));
      deps.wake();
      return done;
    },
  };

  const deliveries: Management['deliveries'] = {
    async list(filter = {}) {
      const environment = env(filter);
      const limit = filter.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new ValidationError('limit must be an integer from 1 to 1000', 'limit');
      return access.run('listing deliveries', (s) => s.listDeliveries(environment, { ...filter, limit }));
    },
    async get(id, options) {
      const environment = env(options);
      return access.find('delivery', id, 'reading a delivery', (s) => s.getDelivery(environment, id));
    },
    async attempts(id, options) {
      await deliveries.get(id, options);
      return access.run('listing attempts', (s) => s.listAttempts(env(options), id));
    },
  };

  return {
    webhooks,
    events: {
      async get(id, options) {
        const environment = env(options);
        return access.find('event', id, 'reading an event', (s) => s.getEvent(environment, id));
      },
    },
    deliveries,
    eventTypes: { list: () => catalog.list() },
  };
}
