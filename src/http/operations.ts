import { NotFoundError } from '../errors.js';
import type { DeliveryRecord } from '../model.js';
import type { Management } from '../types.js';
import { readJsonObject } from './body.js';
import { createInput, disableInput, enableInput, patchInput } from './input.js';
import { logQuery, overviewQuery, recoverInput, resendInput, searchQuery, testInput } from './log-input.js';
import { jsonResponse } from './responses.js';
import {
  wireActivity,
  wireAttempt,
  wireDelivery,
  wireEvent,
  wireEventType,
  wireFoundEvent,
  wireLogDelivery,
  wireMessage,
  wireOverview,
  wireWebhook,
} from './wire.js';

/** What a route operation runs with: the management functions, the caller's environment and the path ids. */
export interface OperationContext {
  management: Management;
  request: Request;
  environment: string;
  params: Record<string, string>;
}

/**
 * Success `code`s, one per outcome, documented in the OpenAPI document. Reads answer `OK`, as
 * Kinde's do; writes name what happened.
 */
export const SUCCESS = {
  OK: 'Success',
  WEBHOOK_CREATED: 'Webhook created',
  WEBHOOK_UPDATED: 'Webhook updated',
  WEBHOOK_DELETED: 'Webhook deleted',
  WEBHOOK_ENABLED: 'Webhook enabled',
  WEBHOOK_DISABLED: 'Webhook disabled',
  DELIVERY_RESENT: 'Delivery queued to be sent again',
  DELIVERIES_RECOVERED: 'Failed deliveries queued to be sent again',
  WAITING_SENT: 'Waiting deliveries queued to be sent now',
  TEST_EVENT_SENT: 'Test event queued',
  // Signing formats and endpoint auth
  SECRET_ROTATED: 'Signing secret rotated',
} as const;

const ok = (code: keyof typeof SUCCESS, rest: Record<string, unknown> = {}) => jsonResponse(200, { code, message: SUCCESS[code], ...rest });

export async function listWebhooks({ management, environment }: OperationContext): Promise<Response> {
  const webhooks = await management.webhooks.list({ environment });
  return ok('OK', { webhooks: webhooks.map(wireWebhook) });
}

export async function createWebhook({ management, request, environment }: OperationContext): Promise<Response> {
  const body = await readJsonObject(request, { required: true });
  const created = await management.webhooks.create(createInput(body, environment));
  return ok('WEBHOOK_CREATED', { webhook: { id: created.id, endpoint: created.endpoint } });
}

/** Extension: one webhook, with its status. */
export async function getWebhook({ management, environment, params }: OperationContext): Promise<Response> {
  const webhook = await management.webhooks.get(params.webhook_id!, { environment });
  return ok('OK', { webhook: wireWebhook(webhook) });
}

export async function updateWebhook({ management, request, environment, params }: OperationContext): Promise<Response> {
  const body = await readJsonObject(request, { required: true });
  // The patch is checked by the engine (as from any JavaScript caller); its types are the wire's.
  const updated = await management.webhooks.update(
    params.webhook_id!,
    patchInput(body) as Parameters<Management['webhooks']['update']>[1],
    {
      environment,
    },
  );
  return ok('WEBHOOK_UPDATED', { webhook: { id: updated.id } });
}

export async function deleteWebhook({ management, environment, params }: OperationContext): Promise<Response> {
  await management.webhooks.delete(params.webhook_id!, { environment });
  return ok('WEBHOOK_DELETED');
}

/** Extension: re-enable, resuming held deliveries unless `{ "resume_held": false }`. */
export async function enableWebhook({ management, request, environment, params }: OperationContext): Promise<Response> {
  const { resumeHeld } = enableInput(await readJsonObject(request, { required: false }));
  const webhook = await management.webhooks.enable(params.webhook_id!, { environment, resumeHeld });
  return ok('WEBHOOK_ENABLED', { webhook: wireWebhook(webhook) });
}

/** Extension: disable by hand (reason `manual`); pending deliveries are held until re-enabled. */
export async function disableWebhook({ management, request, environment, params }: OperationContext): Promise<Response> {
  disableInput(await readJsonObject(request, { required: false }));
  const webhook = await management.webhooks.disable(params.webhook_id!, { environment });
  return ok('WEBHOOK_DISABLED', { webhook: wireWebhook(webhook) });
}

export async function getEvent({ management, environment, params }: OperationContext): Promise<Response> {
  const event = await management.events.get(params.event_id!, { environment });
  return ok('OK', { event: wireEvent(event) });
}

/** Extension: what was sent about a user or an organization, across the environment's webhooks. */
export async function searchEvents({ management, request, environment }: OperationContext): Promise<Response> {
  const page = await management.events.search({ environment, ...searchQuery(new URL(request.url)) });
  return ok('OK', { events: page.events.map(wireFoundEvent), next_token: page.nextCursor });
}

/** Extension: the issuer and JWKS URL a receiver verifies this environment's deliveries with (the dashboard's "How to verify"). */
export async function getVerification({ management, environment }: OperationContext): Promise<Response> {
  const { issuer, jwksUrl } = management.verification.get({ environment });
  return ok('OK', { issuer, jwks_url: jwksUrl });
}

export async function listEventTypes({ management }: OperationContext): Promise<Response> {
  return ok('OK', { event_types: management.eventTypes.list().map(wireEventType) });
}

/** Extension: the webhook's delivery log, newest first, in pages (`next_token` null on the last). */
export async function listDeliveries({ management, request, environment, params }: OperationContext): Promise<Response> {
  const query = logQuery(new URL(request.url));
  // The webhook first (a 404, not an empty page, when it is not there or is another
  // environment's): the page query then never walks another environment's log to find nothing.
  const webhook = await management.webhooks.get(params.webhook_id!, { environment });
  const page = await management.deliveries.list({ webhookId: webhook.id, environment, ...query });
  return ok('OK', { deliveries: page.deliveries.map((d) => wireLogDelivery(d, page.events[d.eventId])), next_token: page.nextCursor });
}

/** Extension: the attempts of one delivery of this webhook, oldest first. */
export async function listAttempts({ management, environment, params }: OperationContext): Promise<Response> {
  const delivery = await deliveryOf(management, environment, params);
  const attempts = await management.deliveries.attempts(delivery.id, { environment });
  return ok('OK', { attempts: attempts.map(wireAttempt) });
}

/** Extension: one new attempt now, same `webhook-id`; 409 WEBHOOK_DISABLED on a disabled webhook. */
export async function resendDelivery({ management, request, environment, params }: OperationContext): Promise<Response> {
  resendInput(await readJsonObject(request, { required: false }));
  const delivery = await deliveryOf(management, environment, params);
  return ok('DELIVERY_RESENT', { delivery: wireDelivery(await management.deliveries.resend(delivery.id, { environment })) });
}

/** Extension: queue again the failed deliveries of events emitted in `[since, until)`. */
export async function recoverDeliveries({ management, request, environment, params }: OperationContext): Promise<Response> {
  const range = recoverInput(await readJsonObject(request, { required: true }));
  const { recovered } = await management.webhooks.recover(params.webhook_id!, { environment, ...range });
  return ok('DELIVERIES_RECOVERED', { recovered });
}

/** Extension: "send waiting now": every pending delivery waiting for a later attempt is due now. */
export async function sendWaiting({ management, request, environment, params }: OperationContext): Promise<Response> {
  resendInput(await readJsonObject(request, { required: false }));
  const { sent } = await management.webhooks.sendWaiting(params.webhook_id!, { environment });
  return ok('WAITING_SENT', { sent });
}

/** Extension: what waits on the webhook (pending, held) and when it will be disabled if it keeps failing. */
export async function getWaiting({ management, environment, params }: OperationContext): Promise<Response> {
  const { pending, held, sendable, disablesAt } = await management.webhooks.waiting(params.webhook_id!, { environment });
  const disables_on = disablesAt === null ? null : new Date(disablesAt).toISOString();
  return ok('OK', { waiting: { pending, held, sendable, disables_on } });
}

/** Extension: send one event of a type (default: the first subscribed) with the type's example data. */
export async function sendTestEvent({ management, request, environment, params }: OperationContext): Promise<Response> {
  const options = testInput(await readJsonObject(request, { required: false }));
  const sent = await management.webhooks.test(params.webhook_id!, { environment, ...options });
  return ok('TEST_EVENT_SENT', { event_id: sent.eventId, delivery_id: sent.deliveryId });
}

/** Extension: every webhook over the last 24 hours, in the list's order. */
export async function webhookStats({ management, request, environment }: OperationContext): Promise<Response> {
  overviewQuery(new URL(request.url), []);
  const stats = await management.webhooks.stats({ environment });
  return ok('OK', { stats: stats.map(wireActivity) });
}

/** Extension: one webhook's chart over `range` (24h, 7d, 30d). */
export async function webhookOverview({ management, request, environment, params }: OperationContext): Promise<Response> {
  const { range } = overviewQuery(new URL(request.url), ['range']);
  const overview = await management.webhooks.overview(params.webhook_id!, { environment, ...(range ? { range } : {}) });
  return ok('OK', { overview: wireOverview(overview) });
}

/** Extension: one delivery of this webhook as its receiver got it. */
export async function deliveryMessage({ management, environment, params }: OperationContext): Promise<Response> {
  const delivery = await deliveryOf(management, environment, params);
  return ok('OK', wireMessage(await management.deliveries.message(delivery.id, { environment })));
}

/**
 * The delivery in the path, if it belongs to the webhook in the path. Another webhook's delivery
 * gets the very answer an unknown id gets, so a path cannot be used to learn what exists.
 */
async function deliveryOf(management: Management, environment: string, params: Record<string, string>): Promise<DeliveryRecord> {
  const id = params.delivery_id!;
  const delivery = await management.deliveries.get(id, { environment });
  if (delivery.webhookId !== params.webhook_id) throw new NotFoundError('delivery', id.slice(0, 128));
  return delivery;
}
