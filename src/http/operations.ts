import type { HttpApi } from '../types.js';
import { readJsonObject } from './body.js';
import { createInput, disableInput, enableInput, patchInput } from './input.js';
import { jsonResponse } from './responses.js';
import { wireEvent, wireEventType, wireWebhook } from './wire.js';

/** What a route operation runs with: the management functions, the caller's environment and the path ids. */
export interface OperationContext {
  api: HttpApi;
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
} as const;

const ok = (code: keyof typeof SUCCESS, rest: Record<string, unknown> = {}) => jsonResponse(200, { code, message: SUCCESS[code], ...rest });

export async function listWebhooks({ api, environment }: OperationContext): Promise<Response> {
  const webhooks = await api.webhooks.list({ environment });
  return ok('OK', { webhooks: webhooks.map(wireWebhook) });
}

export async function createWebhook({ api, request, environment }: OperationContext): Promise<Response> {
  const body = await readJsonObject(request, { required: true });
  const created = await api.webhooks.create(createInput(body, environment));
  return ok('WEBHOOK_CREATED', { webhook: { id: created.id, endpoint: created.endpoint } });
}

/** Extension: one webhook, with its status. */
export async function getWebhook({ api, environment, params }: OperationContext): Promise<Response> {
  const webhook = await api.webhooks.get(params.webhook_id!, { environment });
  return ok('OK', { webhook: wireWebhook(webhook) });
}

export async function updateWebhook({ api, request, environment, params }: OperationContext): Promise<Response> {
  const body = await readJsonObject(request, { required: true });
  // The patch is checked by the engine (as from any JavaScript caller); its types are the wire's.
  const updated = await api.webhooks.update(params.webhook_id!, patchInput(body) as Parameters<HttpApi['webhooks']['update']>[1], {
    environment,
  });
  return ok('WEBHOOK_UPDATED', { webhook: { id: updated.id } });
}

export async function deleteWebhook({ api, environment, params }: OperationContext): Promise<Response> {
  await api.webhooks.delete(params.webhook_id!, { environment });
  return ok('WEBHOOK_DELETED');
}

/** Extension: re-enable, resuming held deliveries unless `{ "resume_held": false }`. */
export async function enableWebhook({ api, request, environment, params }: OperationContext): Promise<Response> {
  const { resumeHeld } = enableInput(await readJsonObject(request, { required: false }));
  const webhook = await api.webhooks.enable(params.webhook_id!, { environment, resumeHeld });
  return ok('WEBHOOK_ENABLED', { webhook: wireWebhook(webhook) });
}

/** Extension: disable by hand (reason `manual`); pending deliveries are held until re-enabled. */
export async function disableWebhook({ api, request, environment, params }: OperationContext): Promise<Response> {
  disableInput(await readJsonObject(request, { required: false }));
  const webhook = await api.webhooks.disable(params.webhook_id!, { environment });
  return ok('WEBHOOK_DISABLED', { webhook: wireWebhook(webhook) });
}

export async function getEvent({ api, environment, params }: OperationContext): Promise<Response> {
  const event = await api.events.get(params.event_id!, { environment });
  return ok('OK', { event: wireEvent(event) });
}

export async function listEventTypes({ api }: OperationContext): Promise<Response> {
  return ok('OK', { event_types: api.eventTypes.list().map(wireEventType) });
}
