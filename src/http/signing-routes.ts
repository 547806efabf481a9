/**
 * The routes of a webhook's signing secret: its reveal, for the account holder's
 * verifier, and its rotation with a grace during which both secrets sign.
 */
import type { WebhookSecret } from '../types.js';
import { readJsonObject } from './body.js';
import { HttpError } from './errors.js';
import { onlyFields } from './input.js';
import { type OperationContext, SUCCESS } from './operations.js';
import { jsonResponse } from './responses.js';

const wireSecret = (s: WebhookSecret) => ({
  secret: s.secret,
  public_key: s.publicKey,
  previous_secret_until: s.previousUntil === null ? null : new Date(s.previousUntil).toISOString(),
});

/** Extension: the signing secret of a `standard-webhooks` webhook, in clear (for its verifier). */
export async function getSecret({ management, environment, params }: OperationContext): Promise<Response> {
  const secret = await management.webhooks.secret(params.webhook_id!, { environment });
  return jsonResponse(200, { code: 'OK', message: 'Success', secret: wireSecret(secret) });
}

/** Extension: a new signing secret; the old one keeps signing beside it for `grace_ms` (default a day, at most 7). */
export async function rotateSecret({ management, request, environment, params }: OperationContext): Promise<Response> {
  const body = await readJsonObject(request, { required: false });
  onlyFields(body, ['grace_ms']);
  const grace = body.grace_ms;
  if (grace !== undefined && grace !== null && typeof grace !== 'number')
    throw new HttpError('INVALID_GRACE_MS', 'grace_ms must be whole milliseconds', { status: 400 });
  const options: { environment: string; graceMs?: number } = { environment };
  if (typeof grace === 'number') options.graceMs = grace;
  const secret = await management.webhooks.rotateSecret(params.webhook_id!, options);
  return jsonResponse(200, { code: 'SECRET_ROTATED', message: SUCCESS.SECRET_ROTATED, secret: wireSecret(secret) });
}
