// identity-webhooks: needs @types/node only (jose, kysely and undici ship their own types).
// Typed emit from the installed .d.ts: a host's own event type by augmentation, misspellings refused.
import { createWebhooks, generateSigningKey, type Store, type WebhookRecord } from 'identity-webhooks';

declare module 'identity-webhooks' {
  interface CustomEventTypes {
    'billing.invoice_paid': { invoice_id: string; amount: number };
  }
}

export async function host(store: Store): Promise<WebhookRecord> {
  const hooks = createWebhooks({ store, keys: [await generateSigningKey()], issuer: 'https://auth.example.com' });
  await hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_1' } } });
  await hooks.emit({ type: 'billing.invoice_paid', source: 'user', data: { invoice_id: 'in_1', amount: 100 } });
  // @ts-expect-error: no such event type
  await hooks.emit({ type: 'user.exploded', source: 'api', data: { usr: 1 } });
  // @ts-expect-error: source is 'admin' | 'api' | 'user'
  await hooks.emit({ type: 'user.deleted', source: 'system', data: { user: { id: 'kp_1' } } });
  // @ts-expect-error: misspelt event type
  await hooks.webhooks.create({ name: 'n', endpoint: 'https://example.com/h', eventTypes: ['user.craeted'] });
  return hooks.webhooks.create({ name: 'n', endpoint: 'https://example.com/h', eventTypes: ['user.created', 'billing.invoice_paid'] });
}
