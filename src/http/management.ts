import type { Webhooks } from '../engine.js';
import { readJsonObject } from './body.js';
import { createInput, disableInput, enableInput, patchInput } from './input.js';
import { jsonResponse } from './responses.js';
import { wireEvent, wireEventType, wireWebhook } from './wire.js';

/** What a management route runs with: the engine, the caller's environment and the path ids. */
export interface ManagementContext {
  hooks: Webhooks;
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

export async function listWebhooks({ hooks, environment }: ManagementContext): Promise<Response> {
  const webhooks = await hooks.webhooks.list({ environment });
  return ok('OK', { webhooks: webhooks.map(wireWebhook) });
}

export async function createWebhook({ hooks, request, environment }: ManagementContext): Promise<Response> {
  const body = await readJsonObject(request, { required: true });
  const created = await hooks.webhooks.create(createInput(body, environment));
  return ok('WEBHOOK_CREATED', { webhook: { id: created.id, endpoint: created.endpoint } });
}

/** Extension: one webhook, with its status. */
export async function getWebhook({ hooks, environment, params }: ManagementContext): Promise<Response> {
  const webhook = await hooks.webhooks.get(params.webhook_id!, { environment });
  return ok('OK', { webhook: wireWebhook(webhook) });
}

export async function updateWebhook({ hooks, request, environment, params }: ManagementContext): Promise<Response> {
  const body = await readJsonObject(request, { required: true });
  const updated = await hooks.webhooks.update(params.webhook_id!, patchInput(body), { environment });
  return ok('WEBHOOK_UPDATED', { webhook: { id: updated.id } });
}

export async function deleteWebhook({ hooks, environment, params }: ManagementContext): Promise<Response> {
  await hooks.webhooks.delete(params.webhook_id!, { environment });
  return ok('WEBHOOK_DELETED');
}

/** Extension: re-enable, resuming held deliveries unless `{ "resume_held": false }`. */
export async function enableWebhook({ hooks, request, environment, params }: ManagementContext): Promise<Response> {
  const { resumeHeld } = enableInput(await readJsonObject(request, { required: false }));
  const webhook = await hooks.webhooks.enable(params.webhook_id!, { environment, resumeHeld });
  return ok('WEBHOOK_ENABLED', { webhook: wireWebhook(webhook) });
}

/** Extension: disable by hand (reason `manual`); pending deliveries are held until re-enabled. */
export async function disableWebhook({ hooks, request, environment, params }: ManagementContext): Promise<Response> {
  disableInput(await readJsonObject(request, { required: false }));
  const webhook = await hooks.webhooks.disable(params.webhook_id!, { environment });
  return ok('WEBHOOK_DISABLED', { webhook: wireWebhook(webhook) });
}

export async function getEvent({ hooks, environment, params }: ManagementContext): Promise<Response> {
  const event = await hooks.events.get(params.event_id!, { environment });
  return ok('OK', { event: wireEvent(event) });
}

export async function listEventTypes({ hooks }: ManagementContext): Promise<Response> {
  return ok('OK', { event_types: hooks.eventTypes.list().map(wireEventType) });
}
