import type { Resource } from './errors.js';
import * as m from './operations.js';
import { getSecret, rotateSecret } from './signing-routes.js';

/** The management API lives under this path (after whatever prefix the host mounts it at). */
export const API_BASE = '/api/v1';

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI path template, e.g. `/api/v1/webhooks/{webhook_id}`. */
  path: string;
  operationId: string;
  /** True for routes beyond Kinde's public management API. */
  extension: boolean;
  /** What a 404 from this route is about. */
  resource?: Resource;
  run(ctx: m.OperationContext): Promise<Response>;
}

/**
 * Every management route. The router matches against this table and the OpenAPI document is
 * checked against it, so a route cannot exist undocumented. (`GET /api/v1/openapi.json` is served
 * by the handler itself: it is public, like the JWKS.)
 */
export const ROUTES: readonly Route[] = Object.freeze([
  { method: 'GET', path: '/api/v1/webhooks', operationId: 'GetWebHooks', extension: false, run: m.listWebhooks },
  { method: 'POST', path: '/api/v1/webhooks', operationId: 'CreateWebHook', extension: false, run: m.createWebhook },
  // Before `{webhook_id}`: the router takes the first route that matches (webhook ids are `webhook_…`).
  { method: 'GET', path: '/api/v1/webhooks/stats', operationId: 'GetWebHookStats', extension: true, run: m.webhookStats },
  {
    method: 'GET',
    path: '/api/v1/webhooks/{webhook_id}',
    operationId: 'GetWebHook',
    extension: true,
    resource: 'webhook',
    run: m.getWebhook,
  },
  {
    method: 'PATCH',
    path: '/api/v1/webhooks/{webhook_id}',
    operationId: 'UpdateWebHook',
    extension: false,
    resource: 'webhook',
    run: m.updateWebhook,
  },
  {
    method: 'DELETE',
    path: '/api/v1/webhooks/{webhook_id}',
    operationId: 'DeleteWebHook',
    extension: false,
    resource: 'webhook',
    run: m.deleteWebhook,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{webhook_id}/enable',
    operationId: 'EnableWebHook',
    extension: true,
    resource: 'webhook',
    run: m.enableWebhook,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{webhook_id}/disable',
    operationId: 'DisableWebHook',
    extension: true,
    resource: 'webhook',
    run: m.disableWebhook,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/{webhook_id}/deliveries',
    operationId: 'GetWebHookDeliveries',
    extension: true,
    resource: 'webhook',
    run: m.listDeliveries,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/{webhook_id}/stats',
    operationId: 'GetWebHookOverview',
    extension: true,
    resource: 'webhook',
    run: m.webhookOverview,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}',
    operationId: 'GetDeliveryMessage',
    extension: true,
    resource: 'delivery',
    run: m.deliveryMessage,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/attempts',
    operationId: 'GetDeliveryAttempts',
    extension: true,
    resource: 'delivery',
    run: m.listAttempts,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/resend',
    operationId: 'ResendDelivery',
    extension: true,
    resource: 'delivery',
    run: m.resendDelivery,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{webhook_id}/recover',
    operationId: 'RecoverWebHookDeliveries',
    extension: true,
    resource: 'webhook',
    run: m.recoverDeliveries,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{webhook_id}/send_waiting',
    operationId: 'SendWaitingDeliveries',
    extension: true,
    resource: 'webhook',
    run: m.sendWaiting,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/{webhook_id}/waiting',
    operationId: 'GetWebHookWaiting',
    extension: true,
    resource: 'webhook',
    run: m.getWaiting,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{webhook_id}/test',
    operationId: 'SendTestEvent',
    extension: true,
    resource: 'webhook',
    run: m.sendTestEvent,
  },
  // Signing formats and endpoint auth
  {
    method: 'GET',
    path: '/api/v1/webhooks/{webhook_id}/secret',
    operationId: 'GetWebHookSecret',
    extension: true,
    resource: 'webhook',
    run: getSecret,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/{webhook_id}/secret/rotate',
    operationId: 'RotateWebHookSecret',
    extension: true,
    resource: 'webhook',
    run: rotateSecret,
  },
  { method: 'GET', path: '/api/v1/events', operationId: 'SearchEvents', extension: true, run: m.searchEvents },
  { method: 'GET', path: '/api/v1/events/{event_id}', operationId: 'GetEvent', extension: false, resource: 'event', run: m.getEvent },
  { method: 'GET', path: '/api/v1/event_types', operationId: 'GetEventTypes', extension: false, run: m.listEventTypes },
  { method: 'GET', path: '/api/v1/verification', operationId: 'GetVerification', extension: true, run: m.getVerification },
] satisfies Route[]);
