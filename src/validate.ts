import type { Catalog } from './catalog/catalog.js';
import { ValidationError } from './errors.js';
import type { EventSource } from './model.js';
import type { WebhookPatch } from './store.js';

/** Bounds on what a customer may store. */
export const LIMITS = Object.freeze({
  nameLength: 255,
  descriptionLength: 1000,
  endpointLength: 2048,
  eventTypesPerWebhook: 50,
  environmentLength: 128,
  idLength: 128,
});

export const SOURCES: readonly EventSource[] = ['admin', 'api', 'user'];

/**
 * A lone UTF-16 surrogate has no UTF-8 form: SQLite hands back different text than was written,
 * and node-pg encodes it as U+FFFD, so two different inputs become one stored value (for an
 * environment: two tenants sharing rows). Refused rather than rewritten.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function environmentOf(value: unknown): string {
  if (value === undefined) return 'default';
  if (typeof value !== 'string' || value.length === 0 || value.length > LIMITS.environmentLength || LONE_SURROGATE.test(value)) {
    throw new ValidationError(`environment must be a string of 1-${LIMITS.environmentLength} characters`, 'environment');
  }
  return value;
}

/** An id argument: a string of sane length (anything else cannot exist, so it is "not found"). */
export function isPlausibleId(id: unknown, prefix: string): id is string {
  return typeof id === 'string' && id.startsWith(`${prefix}_`) && id.length <= LIMITS.idLength;
}

export function name(value: unknown): string {
  if (typeof value !== 'string') throw new ValidationError('name is required and must be a string', 'name');
  const trimmed = value.trim();
  if (trimmed.length === 0) throw new ValidationError('name must not be empty', 'name');
  if ([...trimmed].length > LIMITS.nameLength) throw new ValidationError(`name must be at most ${LIMITS.nameLength} characters`, 'name');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new ValidationError('name must not contain control characters', 'name');
  if (LONE_SURROGATE.test(trimmed)) throw new ValidationError('name must be valid Unicode text', 'name');
  return trimmed;
}

export function description(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new ValidationError('description must be a string', 'description');
  if ([...value].length > LIMITS.descriptionLength) {
    throw new ValidationError(`description must be at most ${LIMITS.descriptionLength} characters`, 'description');
  }
  if (value.includes('\u0000')) throw new ValidationError('description must not contain NUL characters', 'description');
  if (LONE_SURROGATE.test(value)) throw new ValidationError('description must be valid Unicode text', 'description');
  return value.length === 0 ? null : value;
}

/**
 * An absolute http(s) URL without credentials (they would show up in every listing), returned in
 * the WHATWG parser's normal form, at most `LIMITS.endpointLength` characters both as given (so a
 * huge input is never parsed) and as normalised (what is stored).
 */
export function endpoint(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ValidationError('endpoint is required and must be a URL string', 'endpoint');
  if (value.length > LIMITS.endpointLength)
    throw new ValidationError(`endpoint must be at most ${LIMITS.endpointLength} characters`, 'endpoint');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError('endpoint must be an absolute URL, like https://example.com/webhooks', 'endpoint');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ValidationError('endpoint must use http or https', 'endpoint');
  if (!url.hostname) throw new ValidationError('endpoint must name a host', 'endpoint');
  if (url.username || url.password) throw new ValidationError('endpoint must not contain a user name or password', 'endpoint');
  if (url.hash) throw new ValidationError('endpoint must not contain a #fragment', 'endpoint');
  // The bound is on what is stored and sent: normalising percent-encodes non-ASCII text (a 4-byte
  // character becomes 12 characters), so an input within the bound can come out six times longer.
  if (url.href.length > LIMITS.endpointLength) {
    throw new ValidationError(
      `endpoint must be at most ${LIMITS.endpointLength} characters once normalised (it has ${url.href.length}: non-ASCII characters are percent-encoded)`,
      'endpoint',
    );
  }
  return url.href;
}

export function eventTypes(value: unknown, catalog: Catalog): string[] {
  if (!Array.isArray(value)) throw new ValidationError('event_types must be an array of event type codes', 'event_types');
  if (value.length === 0) throw new ValidationError('event_types must contain at least one event type', 'event_types');
  if (value.length > LIMITS.eventTypesPerWebhook) {
    throw new ValidationError(`event_types may contain at most ${LIMITS.eventTypesPerWebhook} entries`, 'event_types');
  }
  const out: string[] = [];
  value.forEach((t, i) => {
    if (typeof t !== 'string') throw new ValidationError(`event_types[${i}] must be a string`, `event_types[${i}]`);
    if (!catalog.has(t)) {
      throw new ValidationError(
        `event_types[${i}]: ${JSON.stringify(t.slice(0, 100))} is not a known event type`,
        `event_types[${i}]`,
        'ERR_UNKNOWN_EVENT_TYPE',
      );
    }
    if (!out.includes(t)) out.push(t);
  });
  return out;
}

export interface WebhookInput {
  name: string;
  description?: string | null;
  endpoint: string;
  eventTypes: string[];
  environment?: string;
}

export function webhookInput(input: unknown, catalog: Catalog): Required<Omit<WebhookInput, 'environment'>> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ValidationError('webhook input must be an object');
  const i = input as Partial<WebhookInput>;
  return {
    name: name(i.name),
    description: description(i.description),
    endpoint: endpoint(i.endpoint),
    eventTypes: eventTypes(i.eventTypes, catalog),
  };
}

export function webhookPatch(input: unknown, catalog: Catalog): WebhookPatch {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ValidationError('webhook changes must be an object');
  const i = input as Partial<WebhookInput>;
  const patch: WebhookPatch = {};
  if (i.name !== undefined) patch.name = name(i.name);
  if (i.description !== undefined) patch.description = description(i.description);
  if (i.endpoint !== undefined) patch.endpoint = endpoint(i.endpoint);
  if (i.eventTypes !== undefined) patch.eventTypes = eventTypes(i.eventTypes, catalog);
  return patch;
}
