/**
 * A webhook's endpoint options (docs/endpoint-options.md): custom request headers,
 * its own attempt deadline and rate limit. Checked here for the JavaScript and HTTP callers
 * alike; a credential header's value is write-only (sealed at rest, {@link HEADER_MASK} on every
 * read).
 */
import { ValidationError } from './errors.js';

export const ENDPOINT_LIMITS = Object.freeze({
  headers: 20,
  headerNameLength: 64,
  headerValueLength: 1024,
  /**
   * The most the custom headers may take on the wire, names, values and line ends: 8 KiB, what
   * nginx's and Apache's defaults accept per request line group and half of Node's 16 KiB for all
   * headers, leaving room for ours (the signature, a bearer token).
   */
  headersTotalBytes: 8192,
  minTimeoutMs: 1_000,
  maxTimeoutMs: 30_000,
  minPerSecond: 1,
  maxPerSecond: 1_000,
});

/**
 * What every read shows in place of a credential header's value. Its characters are outside the
 * visible ASCII a header value may hold, so no stored value can equal it: sent back unchanged in
 * an update, it keeps the stored value.
 */
export const HEADER_MASK = '••••••••';

/** RFC 9110 token characters: what a header name may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space and tab; no CR, LF, NUL or other controls, nothing outside ASCII. */
const VALUE = /^[\t\x20-\x7e]*$/;

/** Names we set ourselves or that HTTP reserves for the connection: a custom header may not use them. */
const RESERVED = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'host',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'user-agent',
  'traceparent',
  'tracestate',
]);

/**
 * Credential-like headers, whose values are write-only (sealed at rest, masked on every read and
 * in every echo): `Authorization`, cookies, and any name with a word (between `-`, `_` or `.`)
 * that speaks of a key, token, secret, password, signature, session or credential (`X-Api-Key`,
 * `apikey`, `X-Password`, `X-Auth-Token`; not `X-Author` or `X-Bypass-Cache`).
 */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL.test(name);
}
const CREDENTIAL =
  /(?:^|[-_.])(?:auth|authorization|cookie|key|apikey|token|secret|pass|passwd|password|pwd|signature|sig|session|credentials?)(?:$|[-_.])/i;

function refuse(message: string, field: string): never {
  throw new ValidationError(message, { field });
}

/**
 * Custom headers as given (`{ name: value }`), checked: at most 20, names RFC 9110 tokens of at
 * most 64 characters and none of ours or HTTP's, values of visible ASCII (tab and space inside)
 * of at most 1,024. Names keep their case; two names differing only by case are refused. A
 * value equal to {@link HEADER_MASK} is allowed only for a credential header (it keeps the
 * stored value: see {@link mergeHeaders}).
 */
export function headersInput(value: unknown): Record<string, string> {
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) refuse('headers must be an object of header names and values', 'headers');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > ENDPOINT_LIMITS.headers) refuse(`headers may hold at most ${ENDPOINT_LIMITS.headers} headers`, 'headers');
  const seen = new Set<string>();
  const out: Record<string, string> = {};
  for (const [name, v] of entries) {
    const shown = JSON.stringify(name.slice(0, ENDPOINT_LIMITS.headerNameLength));
    const field = `headers.${name.slice(0, ENDPOINT_LIMITS.headerNameLength)}`;
    if (name.length === 0 || name.length > ENDPOINT_LIMITS.headerNameLength)
      refuse(`header name ${shown} must be 1-${ENDPOINT_LIMITS.headerNameLength} characters`, field);
    if (!TOKEN.test(name)) refuse(`header name ${shown} may hold only letters, digits and !#$%&'*+-.^_\`|~`, field);
    const lower = name.toLowerCase();
    if (RESERVED.has(lower) || lower.startsWith('webhook-'))
      refuse(`header ${shown} is set by the engine or reserved by HTTP: it cannot be a custom header`, field);
    if (seen.has(lower)) refuse(`header ${shown} is given twice (header names ignore case)`, field);
    seen.add(lower);
    if (typeof v !== 'string') refuse(`header ${shown} must have a string value`, field);
    if (v === HEADER_MASK && isCredentialHeader(name)) {
      out[name] = v;
      continue;
    }
    if (v.length > ENDPOINT_LIMITS.headerValueLength)
      refuse(`header ${shown} must have a value of at most ${ENDPOINT_LIMITS.headerValueLength} characters`, field);
    if (!VALUE.test(v)) refuse(`header ${shown} must have a value of visible ASCII characters (no line breaks, NUL or controls)`, field);
    if (v !== v.trim()) refuse(`header ${shown} must have a value without spaces at either end`, field);
    out[name] = v;
  }
  // (A masked value keeps a stored one: counted here as nothing, and exactly by mergeHeaders.)
  refuseOverTotal(Object.entries(out).map(([name, v]) => [name, v === HEADER_MASK ? 0 : v.length]));
  return out;
}

/** Refuses headers (name and value length) over {@link ENDPOINT_LIMITS}.headersTotalBytes in all. */
function refuseOverTotal(sizes: ReadonlyArray<readonly [string, number]>): void {
  const total = sizes.reduce((sum, [name, length]) => sum + name.length + 4 + length, 0);
  if (total > ENDPOINT_LIMITS.headersTotalBytes)
    refuse(
      `headers may take at most ${ENDPOINT_LIMITS.headersTotalBytes} bytes in all (names, values, line ends; these take ${total}): many servers refuse more`,
      'headers',
    );
}

/** The length of the text a sealed value holds (`sealed:v1:<key>:<iv>:<ciphertext and 16-byte tag>`), without opening it. */
function sealedLength(sealed: string): number {
  if (!sealed.startsWith('sealed:v1:')) return sealed.length; // kept in clear by an older engine
  const body = sealed.split(':').at(-1) ?? '';
  return Math.max(0, Buffer.from(body, 'base64url').length - 16);
}

/** A per-webhook deadline: whole milliseconds, 1,000-30,000; null for the engine's. */
export function timeoutInput(value: unknown): number | null {
  if (value === null) return null;
  const { minTimeoutMs: min, maxTimeoutMs: max } = ENDPOINT_LIMITS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    refuse(`timeoutMs must be a whole number of milliseconds from ${min} to ${max}`, 'timeoutMs');
  return value;
}

/** `{ perSecond }`, 1-1,000 attempts started per second; null for none. */
export function rateLimitInput(value: unknown): { perSecond: number } | null {
  if (value === null) return null;
  const { minPerSecond: min, maxPerSecond: max } = ENDPOINT_LIMITS;
  const perSecond = typeof value === 'object' && !Array.isArray(value) ? (value as { perSecond?: unknown }).perSecond : undefined;
  if (typeof perSecond !== 'number' || !Number.isInteger(perSecond) || perSecond < min || perSecond > max)
    refuse(`rateLimit must be { perSecond } with a whole number from ${min} to ${max}`, 'rateLimit.perSecond');
  return { perSecond };
}

/** Whether any header of the set needs sealing (a credential value that is not the mask). */
export function needsSeal(headers: Record<string, string>): boolean {
  return Object.entries(headers).some(([name, value]) => isCredentialHeader(name) && value !== HEADER_MASK);
}

/**
 * The headers to store: credential values sealed by `seal`, a masked value replaced by the one
 * stored under the same name (any case), refused when there is none.
 */
export function mergeHeaders(
  given: Record<string, string>,
  stored: Record<string, string>,
  seal: (plaintext: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!isCredentialHeader(name)) {
      out[name] = value;
      continue;
    }
    if (value !== HEADER_MASK) {
      out[name] = seal(value);
      continue;
    }
    const kept = Object.entries(stored).find(([n]) => n.toLowerCase() === name.toLowerCase());
    if (!kept) refuse(`header ${JSON.stringify(name)} has no stored value to keep: give its value`, `headers.${name}`);
    out[name] = kept[1];
  }
  // What goes on the wire, kept values at their own length.
  refuseOverTotal(
    Object.entries(out).map(([name, value]) => [
      name,
      given[name] === HEADER_MASK ? sealedLength(value) : isCredentialHeader(name) ? given[name]!.length : value.length,
    ]),
  );
  return out;
}

/** Headers as every read shows them: credential values masked. */
export function maskHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name] = isCredentialHeader(name) ? HEADER_MASK : value;
  return out;
}
