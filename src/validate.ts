import type { Catalog } from './catalog/catalog.js';
import { headersInput, rateLimitInput, timeoutInput } from './endpoint-options.js';
import { ValidationError } from './errors.js';
import type { EventSource, WebhookOrdering } from './model.js';
import type { WebhookPatch } from './store.js';

/** Bounds on what an account holder may store. */
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
  if (typeof value !== 'string' || value.length === 0 || value.length > LIMITS.environmentLength || !storable(value)) {
    throw new ValidationError(`environment must be a string of 1-${LIMITS.environmentLength} characters, without NUL or lone surrogates`, {
      field: 'environment',
    });
  }
  return value;
}

/**
 * Text both databases store as given: PostgreSQL refuses NUL in text (an error, which would be
 * a 500), and a lone surrogate has no UTF-8 form (stored as something else). Anything that fails
 * this cannot name a stored record.
 */
export function storable(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/** An id argument: a string of sane length and storable text (anything else cannot exist, so it is "not found"). */
export function isPlausibleId(id: unknown, prefix: string): id is string {
  return typeof id === 'string' && id.startsWith(`${prefix}_`) && id.length <= LIMITS.idLength && storable(id);
}

export function name(value: unknown): string {
  if (typeof value !== 'string') throw new ValidationError('name is required and must be a string', { field: 'name' });
  const trimmed = value.trim();
  if (trimmed.length === 0) throw new ValidationError('name must not be empty', { field: 'name' });
  if ([...trimmed].length > LIMITS.nameLength)
    throw new ValidationError(`name must be at most ${LIMITS.nameLength} characters`, { field: 'name' });
  if (LONE_SURROGATE.test(trimmed)) throw new ValidationError('name must be valid Unicode text', { field: 'name' });
  checkText(trimmed, 'name');
  return trimmed;
}

export function description(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new ValidationError('description must be a string', { field: 'description' });
  if ([...value].length > LIMITS.descriptionLength) {
    throw new ValidationError(`description must be at most ${LIMITS.descriptionLength} characters`, { field: 'description' });
  }
  if (LONE_SURROGATE.test(value)) throw new ValidationError('description must be valid Unicode text', { field: 'description' });
  if (value.length === 0) return null;
  checkText(value, 'description');
  return value;
}

/*
 * Names and descriptions are shown to people (a dashboard, an email, a terminal), so text that
 * displays as something other than what is stored is refused:
 * - C0 and C1 controls (ESC starts terminal sequences, NUL truncates in C, U+0085 is a line
 *   break); descriptions keep tab, line feed, and carriage return before a line feed (CRLF, as
 *   text areas send it), but not a lone CR, which returns a terminal to the start of the line;
 * - bidirectional controls (U+202E turns "invoice\u202Egpj.exe" into "invoiceexe.jpg");
 * - U+2028 / U+2029 (line breaks that JSON and many logs do not treat as one);
 * - tag characters (invisible ASCII look-alikes that can hide text), except in emoji flags;
 * - text that is empty once invisible characters and spaces are removed.
 * Invisible characters inside visible text stay: the ZWJ in 👩‍💻, the ZWNJ of Persian words.
 */
// \p{Cc} is exactly C0, DEL and C1. Then the bidi controls, U+2028/U+2029, the tag characters.
const REFUSED_IN_NAME = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\u{e0000}-\u{e007f}]/u;
const REFUSED_IN_DESCRIPTION = /(?![\t\n\r])\p{Cc}|\r(?!\n)|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\u{e0000}-\u{e007f}]/u;
/** An emoji flag of a subdivision (🏴 + tag letters + CANCEL TAG, e.g. Scotland's): the one valid use of tags. */
const TAG_SEQUENCE = /\u{1f3f4}[\u{e0020}-\u{e007e}]+\u{e007f}/gu;
/** What displays as nothing: spaces, default-ignorable characters (zero-width, BOM, soft hyphen, Hangul fillers...), braille blank. */
const INVISIBLE = /[\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/gu;

const CHARACTER_NAMES = new Map<number, string>([
  [0x00, 'NULL'],
  [0x09, 'CHARACTER TABULATION'],
  [0x0a, 'LINE FEED'],
  [0x0d, 'CARRIAGE RETURN'],
  [0x1b, 'ESCAPE'],
  [0x7f, 'DELETE'],
  [0x85, 'NEXT LINE'],
  [0x9b, 'CONTROL SEQUENCE INTRODUCER'],
  [0x061c, 'ARABIC LETTER MARK'],
  [0x200e, 'LEFT-TO-RIGHT MARK'],
  [0x200f, 'RIGHT-TO-LEFT MARK'],
  [0x202a, 'LEFT-TO-RIGHT EMBEDDING'],
  [0x202b, 'RIGHT-TO-LEFT EMBEDDING'],
  [0x202c, 'POP DIRECTIONAL FORMATTING'],
  [0x202d, 'LEFT-TO-RIGHT OVERRIDE'],
  [0x202e, 'RIGHT-TO-LEFT OVERRIDE'],
  [0x2066, 'LEFT-TO-RIGHT ISOLATE'],
  [0x2067, 'RIGHT-TO-LEFT ISOLATE'],
  [0x2068, 'FIRST STRONG ISOLATE'],
  [0x2069, 'POP DIRECTIONAL ISOLATE'],
  [0x2028, 'LINE SEPARATOR'],
  [0x2029, 'PARAGRAPH SEPARATOR'],
  [0x200b, 'ZERO WIDTH SPACE'],
  [0xfeff, 'ZERO WIDTH NO-BREAK SPACE'],
  [0x3164, 'HANGUL FILLER'],
  [0x2800, 'BRAILLE PATTERN BLANK'],
]);

/** `U+202E RIGHT-TO-LEFT OVERRIDE`, or `U+E0041` for characters without a name here. */
export function describeCodePoint(cp: number): string {
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const label = CHARACTER_NAMES.get(cp);
  return label ? `${hex} ${label}` : hex;
}

function whyRefused(cp: number, field: 'name' | 'description'): string {
  if (cp === 0x0d && field === 'description') return 'a carriage return is allowed only before a line feed';
  if (cp <= 0x9f)
    return field === 'name'
      ? 'names are one line of text without control characters'
      : 'control characters other than tab and line feed are refused';
  if (cp === 0x2028 || cp === 0x2029) return field === 'name' ? 'names are one line of text' : 'use a line feed (U+000A) for a new line';
  if (cp >= 0xe0000) return 'tag characters are invisible outside an emoji flag and can hide text';
  return 'bidirectional controls make text display in another order than it is stored';
}

function checkText(value: string, field: 'name' | 'description'): void {
  const masked = value.replace(TAG_SEQUENCE, (flag) => 'x'.repeat(flag.length)); // same length: indices stay valid
  const found = (field === 'name' ? REFUSED_IN_NAME : REFUSED_IN_DESCRIPTION).exec(masked);
  if (found) {
    const cp = value.codePointAt(found.index)!;
    const at = [...value.slice(0, found.index)].length + 1;
    throw new ValidationError(`${field} must not contain ${describeCodePoint(cp)} (character ${at}): ${whyRefused(cp, field)}`, {
      field: field,
    });
  }
  if (value.replace(INVISIBLE, '') === '') {
    throw new ValidationError(
      `${field} must contain visible text: it has only spaces or invisible characters (the first is ${describeCodePoint(value.codePointAt(0)!)})`,
      { field: field },
    );
  }
}

/**
 * An absolute http(s) URL without credentials (they would show up in every listing), returned in
 * the WHATWG parser's normal form, at most `LIMITS.endpointLength` characters both as given (so a
 * huge input is never parsed) and as normalised (what is stored).
 */
export function endpoint(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ValidationError('endpoint is required and must be a URL string', { field: 'endpoint' });
  if (value.length > LIMITS.endpointLength)
    throw new ValidationError(`endpoint must be at most ${LIMITS.endpointLength} characters`, { field: 'endpoint' });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError('endpoint must be an absolute URL, like https://example.com/webhooks', { field: 'endpoint' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ValidationError('endpoint must use http or https', { field: 'endpoint' });
  if (!url.hostname) throw new ValidationError('endpoint must name a host', { field: 'endpoint' });
  if (url.username || url.password) throw new ValidationError('endpoint must not contain a user name or password', { field: 'endpoint' });
  if (url.hash) throw new ValidationError('endpoint must not contain a #fragment', { field: 'endpoint' });
  // The bound is on what is stored and sent: normalising percent-encodes non-ASCII text (a 4-byte
  // character becomes 12 characters), so an input within the bound can come out six times longer.
  if (url.href.length > LIMITS.endpointLength) {
    throw new ValidationError(
      `endpoint must be at most ${LIMITS.endpointLength} characters once normalised (it has ${url.href.length}: non-ASCII characters are percent-encoded)`,
      { field: 'endpoint' },
    );
  }
  return url.href;
}

export function eventTypes(value: unknown, catalog: Catalog): string[] {
  if (!Array.isArray(value)) throw new ValidationError('event_types must be an array of event type codes', { field: 'event_types' });
  if (value.length === 0) throw new ValidationError('event_types must contain at least one event type', { field: 'event_types' });
  if (value.length > LIMITS.eventTypesPerWebhook) {
    throw new ValidationError(`event_types may contain at most ${LIMITS.eventTypesPerWebhook} entries`, { field: 'event_types' });
  }
  const out: string[] = [];
  value.forEach((t, i) => {
    if (typeof t !== 'string') throw new ValidationError(`event_types[${i}] must be a string`, { field: `event_types[${i}]` });
    if (!catalog.has(t)) {
      throw new ValidationError(`event_types[${i}]: ${JSON.stringify(t.slice(0, 100))} is not a known event type`, {
        field: `event_types[${i}]`,
        code: 'ERR_UNKNOWN_EVENT_TYPE',
      });
    }
    if (!out.includes(t)) out.push(t);
  });
  return out;
}

/** The shape validation reads (loose: its input comes from JavaScript and HTTP alike). */
interface RawWebhookInput {
  name: string;
  description?: string | null;
  endpoint: string;
  eventTypes: string[];
  environment?: string;
  headers?: Record<string, string> | null;
  timeoutMs?: number | null;
  rateLimit?: { perSecond: number } | null;
  ordering?: WebhookOrdering;
}

/** Endpoint options stay out of the record until the management functions seal them. */
export type CleanWebhookInput = Required<Omit<RawWebhookInput, 'environment' | 'headers' | 'timeoutMs' | 'rateLimit' | 'ordering'>> & {
  headers: Record<string, string>;
  timeoutMs: number | null;
  rateLimit: { perSecond: number } | null;
  ordering: WebhookOrdering;
};

/** Ordered delivery per subject (docs/ordering.md): `none` or `per-subject`. */
export function orderingInput(value: unknown): WebhookOrdering {
  if (value !== 'none' && value !== 'per-subject')
    throw new ValidationError("ordering must be 'none' or 'per-subject'", { field: 'ordering' });
  return value;
}

export function webhookInput(input: unknown, catalog: Catalog): CleanWebhookInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ValidationError('webhook input must be an object');
  const i = input as Partial<RawWebhookInput>;
  return {
    name: name(i.name),
    description: description(i.description),
    endpoint: endpoint(i.endpoint),
    eventTypes: eventTypes(i.eventTypes, catalog),
    headers: i.headers === undefined ? {} : headersInput(i.headers),
    timeoutMs: i.timeoutMs === undefined ? null : timeoutInput(i.timeoutMs),
    rateLimit: i.rateLimit === undefined ? null : rateLimitInput(i.rateLimit),
    ordering: i.ordering === undefined ? 'none' : orderingInput(i.ordering),
  };
}

export function webhookPatch(input: unknown, catalog: Catalog): WebhookPatch {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new ValidationError('webhook changes must be an object');
  const i = input as Partial<RawWebhookInput>;
  const patch: WebhookPatch = {};
  if (i.name !== undefined) patch.name = name(i.name);
  if (i.description !== undefined) patch.description = description(i.description);
  if (i.endpoint !== undefined) patch.endpoint = endpoint(i.endpoint);
  if (i.eventTypes !== undefined) patch.eventTypes = eventTypes(i.eventTypes, catalog);
  if (i.headers !== undefined) patch.headers = headersInput(i.headers);
  if (i.timeoutMs !== undefined) patch.timeoutMs = timeoutInput(i.timeoutMs);
  if (i.rateLimit !== undefined) patch.rateLimit = rateLimitInput(i.rateLimit);
  if (i.ordering !== undefined) patch.ordering = orderingInput(i.ordering);
  return patch;
}
