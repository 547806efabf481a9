import type { WebhookPatch } from '../store.js';
import type { EventType, WebhookInput } from '../types.js';
import { HttpError } from './errors.js';
import { SIGNING_FIELDS, signingFromWire } from './signing.js';

/**
 * Wire bodies (snake_case, as Kinde's clients send them) to engine input. Only shapes are handled
 * here; the values (lengths, URL, known event types) are the engine's to judge, so HTTP and
 * in-process callers get the same rules and the same messages.
 */

/** Endpoint options (extensions, docs/endpoint-options.md): optional in both bodies; in a PATCH, null clears one. */
const OPTION_FIELDS = ['headers', 'timeout_ms', 'rate_limit_per_second', 'ordering'];
const CREATE_FIELDS = ['name', 'endpoint', 'event_types', 'description', ...OPTION_FIELDS, ...SIGNING_FIELDS];
/** `endpoint` is our extension: Kinde's PATCH cannot move a webhook. */
const PATCH_FIELDS = ['name', 'endpoint', 'event_types', 'description', ...OPTION_FIELDS, ...SIGNING_FIELDS];
const ENABLE_FIELDS = ['resume_held'];

/** `POST /api/v1/webhooks` body. */
export function createInput(body: Record<string, unknown>, environment: string): WebhookInput {
  onlyFields(body, CREATE_FIELDS);
  return {
    environment,
    name: body.name as string,
    endpoint: body.endpoint as string,
    // Any value: the engine checks it against the catalog and answers 400 for what it is not.
    eventTypes: body.event_types as EventType[],
    description: body.description as string | null | undefined,
    ...optionsInput(body),
    // Signing formats and endpoint auth: checked by the engine.
    ...(signingFromWire(body) as Partial<WebhookInput>),
  };
}

/** The endpoint options of a body, in the engine's names (their values are the engine's to judge). */
function optionsInput(body: Record<string, unknown>): Pick<WebhookInput, 'headers' | 'timeoutMs' | 'rateLimit' | 'ordering'> {
  const out: Pick<WebhookInput, 'headers' | 'timeoutMs' | 'rateLimit' | 'ordering'> = {};
  // Ordered delivery per subject: null leaves it as it is, like the other PATCH fields.
  if (body.ordering !== undefined && body.ordering !== null) out.ordering = body.ordering as WebhookInput['ordering'];
  if (body.headers !== undefined) out.headers = body.headers as Record<string, string> | null;
  if (body.timeout_ms !== undefined) out.timeoutMs = body.timeout_ms as number | null;
  const rate = body.rate_limit_per_second;
  if (rate !== undefined) out.rateLimit = rate === null ? null : { perSecond: rate as number };
  return out;
}

/**
 * `PATCH /api/v1/webhooks/{id}` body. A null name, endpoint or event_types means "leave as is"
 * (generated clients send null for unset optionals); a null description clears it.
 */
export function patchInput(body: Record<string, unknown>): WebhookPatch {
  onlyFields(body, PATCH_FIELDS);
  const patch: WebhookPatch = {};
  if (body.name !== undefined && body.name !== null) patch.name = body.name as string;
  if (body.endpoint !== undefined && body.endpoint !== null) patch.endpoint = body.endpoint as string;
  if (body.event_types !== undefined && body.event_types !== null) patch.eventTypes = body.event_types as string[];
  if (body.description !== undefined) patch.description = body.description as string | null;
  Object.assign(patch, optionsInput(body));
  // Signing formats and endpoint auth: checked by the engine.
  Object.assign(patch, signingFromWire(body));
  return patch;
}

/** `POST /api/v1/webhooks/{id}/enable` body (optional): `{ resume_held?: boolean }`, default true. */
export function enableInput(body: Record<string, unknown>): { resumeHeld: boolean } {
  onlyFields(body, ENABLE_FIELDS);
  const value = body.resume_held ?? true;
  if (typeof value !== 'boolean') throw new HttpError('INVALID_RESUME_HELD', 'resume_held must be a boolean', { status: 400 });
  return { resumeHeld: value };
}

/** `POST /api/v1/webhooks/{id}/disable` body (optional): no fields. */
export function disableInput(body: Record<string, unknown>): void {
  onlyFields(body, []);
}

/** An unknown field is refused rather than ignored: a typo (`eventTypes`) must not pass as success. */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw new HttpError(
        'UNKNOWN_FIELD',
        `${JSON.stringify(key.slice(0, 64))} is not a field of this request (allowed: ${allowed.join(', ') || 'none'})`,
        { status: 400 },
      );
    }
  }
}
