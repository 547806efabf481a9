import { assertEndpointAllowed } from '../delivery/guard/check.js';
import { ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import type { WebhookRecord } from '../model.js';
import { signingInput } from '../secrets/auth-input.js';
import type { Management } from '../types.js';
import * as v from '../validate.js';
import type { SealedWrites } from './sealed.js';
import { environmentOf as env, type ManagementDeps, shown } from './shared.js';

/** A webhook's record: create, read, list, update, delete, disable and enable. */
export type WebhookRecords = Pick<Management['webhooks'], 'create' | 'get' | 'list' | 'update' | 'delete' | 'disable' | 'enable'>;

export function webhookRecords(deps: ManagementDeps, { sealHeaders, secretsFor, changeSealed }: SealedWrites): WebhookRecords {
  const { access, clock, catalog, guard } = deps;
  return {
    async create(input) {
      const environment = env(input);
      const clean = v.webhookInput(input, catalog);
      const signing = signingInput(input as unknown as Record<string, unknown>);
      await assertEndpointAllowed(clean.endpoint, guard);
      if (signing.auth?.type === 'oauth2_client_credentials') await assertEndpointAllowed(signing.auth.tokenUrl, guard);
      const now = clock.now();
      const id = newId('webhook', now);
      const record: WebhookRecord = {
        id,
        environment,
        ...clean,
        headers: sealHeaders(id, clean.headers, {}),
        status: 'enabled',
        disabledReason: null,
        disabledAt: null,
        failingSince: null,
        lastError: null,
        createdAt: now,
        updatedAt: now,
        format: signing.format ?? 'jwt',
        signing: null,
        auth: null,
      };
      Object.assign(record, secretsFor(record, signing));
      await access.run('creating a webhook', (s) => s.createWebhook(record, { maxWebhooks: deps.maxWebhooks(environment) }));
      return shown(record);
    },
    async get(id, options) {
      const environment = env(options);
      return shown(await access.find('webhook', id, 'reading a webhook', (s) => s.getWebhook(environment, id)));
    },
    async list(options) {
      const environment = env(options);
      return (await access.run('listing webhooks', (s) => s.listWebhooks(environment))).map(shown);
    },
    async update(id, patch, options) {
      const environment = env(options);
      const clean = v.webhookPatch(patch, catalog);
      const signing = signingInput(patch as unknown as Record<string, unknown>);
      if (clean.endpoint !== undefined) await assertEndpointAllowed(clean.endpoint, guard);
      if (signing.auth?.type === 'oauth2_client_credentials') await assertEndpointAllowed(signing.auth.tokenUrl, guard);
      const hasSecrets = signing.format !== undefined || signing.asymmetric !== undefined || signing.auth !== undefined;
      if (clean.headers !== undefined || hasSecrets) {
        // Masked values given back keep the stored ones: read first (and 404 before anything else).
        return shown(
          await changeSealed(environment, id, 'updating a webhook', (stored) => {
            const patch = { ...clean };
            if (clean.headers !== undefined) patch.headers = sealHeaders(id, clean.headers, stored.headers ?? {});
            if (hasSecrets) Object.assign(patch, secretsFor(stored, signing));
            return patch;
          }),
        );
      }
      return shown(await access.find('webhook', id, 'updating a webhook', (s) => s.updateWebhook(environment, id, clean, clock.now())));
    },
    async delete(id, options) {
      const environment = env(options);
      await access.find('webhook', id, 'deleting a webhook', (s) => s.deleteWebhook(environment, id));
    },
    async disable(id, options) {
      const environment = env(options);
      return shown(
        await access.find('webhook', id, 'disabling a webhook', (s) => s.disableWebhook(environment, id, 'manual', clock.now())),
      );
    },
    async enable(id, options) {
      const environment = env(options);
      const resume = options?.resumeHeld ?? true;
      if (typeof resume !== 'boolean') throw new ValidationError('resumeHeld must be a boolean', { field: 'resumeHeld' });
      const done = await access.find('webhook', id, 'enabling a webhook', (s) => s.enableWebhook(environment, id, clock.now(), resume));
      deps.wake();
      return shown(done);
    },
  };
}
