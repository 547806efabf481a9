import { searchEvents } from '../event-search.js';
import type { Management } from '../types.js';
import { deliveryFunctions } from './deliveries.js';
import { operationFunctions } from './operations.js';
import { sealedWrites } from './sealed.js';
import { secretFunctions } from './secrets.js';
import { environmentOf as env, type ManagementDeps } from './shared.js';
import { statsFunctions } from './stats.js';
import { webhookRecords } from './webhooks.js';

export type { ManagementDeps } from './shared.js';

/**
 * The in-process management functions (`hooks.webhooks`, `.events`, `.deliveries`,
 * `.eventTypes`): validate, check the endpoint against the guard, one store call. The HTTP
 * routes (`http/operations.ts`) are a thin layer over these. One file per concern: a webhook's
 * record, its secrets, the operations on its deliveries, the figures, and the delivery log.
 */
export function createManagement(deps: ManagementDeps): Management {
  const sealed = sealedWrites(deps);
  const records = webhookRecords(deps, sealed);
  return {
    webhooks: {
      ...records,
      ...secretFunctions(deps, sealed),
      ...operationFunctions(deps, records.get),
      ...statsFunctions(deps),
    },
    events: {
      async get(id, options) {
        const environment = env(options);
        return deps.access.find('event', id, 'reading an event', (s) => s.getEvent(environment, id));
      },
      search: (options) => searchEvents(deps.access, env(options), options),
    },
    deliveries: deliveryFunctions(deps),
    eventTypes: { list: () => deps.catalog.list() },
    verification: {
      get(options) {
        const issuer = deps.issuer(env(options));
        // Where the engine's handler serves the key set under the issuer (receiver/verifier.ts reads the same).
        return { issuer, jwksUrl: `${issuer.replace(/\/+$/, '')}/.well-known/jwks` };
      },
    },
  };
}
