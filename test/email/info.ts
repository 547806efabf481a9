import type { WebhookDisabledInfo, WebhookRecord } from '../../src/index.js';

export const FAILING_SINCE = Date.parse('2026-01-01T00:00:00.000Z');
export const DISABLED_AT = Date.parse('2026-01-04T03:12:05.000Z');

/** The info the engine passes for an auto-disabled webhook, with any field overridden. */
export function disabledInfo(overrides: Partial<WebhookDisabledInfo> = {}, webhook: Partial<WebhookRecord> = {}): WebhookDisabledInfo {
  return {
    noticeId: 'notice_01JTESTNOTICE',
    webhook: {
      id: 'webhook_01JTESTWEBHOOK',
      environment: 'production',
      name: 'Billing sync',
      description: null,
      endpoint: 'https://billing.acme.example/hooks',
      eventTypes: ['user.created'],
      status: 'disabled',
      disabledReason: 'failing',
      disabledAt: DISABLED_AT,
      failingSince: FAILING_SINCE,
      lastError: '500: HTTP 500',
      createdAt: FAILING_SINCE - 86_400_000,
      updatedAt: DISABLED_AT,
      ...webhook,
    },
    environment: 'production',
    reason: 'failing',
    failingSince: FAILING_SINCE,
    disabledAt: DISABLED_AT,
    lastError: '500: HTTP 500',
    ...overrides,
  };
}
