import { WebhooksError, type WebhooksErrorCode } from '../errors.js';
import { errorResponse } from './responses.js';

/**
 * Every `code` the management API and the dashboard's own routes answer an error with, by status
 * (a host's own codes, such as a 429 in front of the handler, are the host's). One list, so the
 * server and the dashboard's words (`src/dashboard/assets/words.js`, type-checked against it, and
 * tested to have words for each) cannot drift apart; a client may switch on it.
 *
 * @example
 * ```ts
 * import { HTTP_ERROR_CODES, type HttpErrorCode } from 'identity-webhooks/http';
 * const code = body.errors[0].code as HttpErrorCode;
 * if (code === 'WEBHOOK_LIMIT_REACHED') showUpgrade();
 * ```
 */
export const HTTP_ERROR_CODES = [
  // 400
  'INVALID_JSON',
  'INVALID_BODY',
  'UNKNOWN_FIELD',
  'INVALID_NAME',
  'INVALID_DESCRIPTION',
  'INVALID_ENDPOINT',
  'INVALID_EVENT_TYPES',
  'UNKNOWN_EVENT_TYPE',
  'ENDPOINT_NOT_ALLOWED',
  'INVALID_RESUME_HELD',
  'WEBHOOK_LIMIT_REACHED',
  'INVALID_REQUEST',
  'UNKNOWN_PARAMETER',
  'INVALID_STATUS',
  'INVALID_EVENT_TYPE',
  'INVALID_PAGE_SIZE',
  'INVALID_NEXT_TOKEN',
  'INVALID_SINCE',
  'INVALID_UNTIL',
  'INVALID_SEARCH',
  'INVALID_SUBJECT',
  'INVALID_RANGE',
  'INVALID_HOST',
  'INVALID_REQUEST_TARGET',
  'SECRETS_KEY_REQUIRED',
  'INVALID_HEADERS',
  'INVALID_TIMEOUT_MS',
  'INVALID_RATE_LIMIT_PER_SECOND',
  // Signing formats and endpoint auth
  'INVALID_FORMAT',
  'INVALID_AUTH',
  'INVALID_GRACE_MS',
  // Ordered delivery per subject
  'INVALID_ORDERING',
  // 403
  'INVALID_CREDENTIALS',
  'CROSS_SITE_REQUEST',
  // dashboard link access: a `read` session may not change anything
  'READ_ONLY_ACCESS',
  // 404
  'ROUTE_NOT_FOUND',
  'NOT_FOUND',
  'WEBHOOK_NOT_FOUND',
  'EVENT_NOT_FOUND',
  'DELIVERY_NOT_FOUND',
  'ASSET_NOT_FOUND',
  // 405, 409, 413, 415
  'METHOD_NOT_ALLOWED',
  'WEBHOOK_DISABLED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  // 500, 503
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

/** One of {@link HTTP_ERROR_CODES}. */
export type HttpErrorCode = (typeof HTTP_ERROR_CODES)[number];

/** {@link errorResponse} for our own codes: a code outside {@link HTTP_ERROR_CODES} does not compile. */
export function wireError(status: number, code: HttpErrorCode, message: string, headers?: Record<string, string>): Response {
  return errorResponse(status, code, message, headers);
}

/** The lower-case names `n` whose `INVALID_<N>` is a code: the fields and parameters a refusal may name. */
export type InvalidName = HttpErrorCode extends infer C ? (C extends `INVALID_${infer N}` ? Lowercase<N> : never) : never;

/** `INVALID_<NAME>` for a field or parameter named at run time; only names with a code type-check. */
export function invalidCode(name: InvalidName): HttpErrorCode {
  return `INVALID_${name.toUpperCase()}` as HttpErrorCode;
}

/**
 * A refusal decided by the HTTP layer itself (bad JSON, wrong content type, no credentials). Route
 * code throws it; {@link toErrorResponse} turns it into the response. Its arguments come in the
 * order of every other error class (src/errors.ts): the code, the message, then options, here the
 * HTTP `status` and any extra response `headers`.
 *
 * @example
 * ```ts
 * throw new HttpError('INVALID_JSON', 'request body is not valid JSON (UTF-8)', { status: 400 });
 * ```
 */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: HttpErrorCode,
    message: string,
    options: { status: number; headers?: Record<string, string> },
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = options.status;
    this.headers = options.headers ?? {};
  }
}

/** What a route is about, so "not found" can say which thing was not found. */
export type Resource = 'webhook' | 'event' | 'delivery';

/**
 * Engine error codes on the wire. A plan cap is 400, not 403: Kinde's clients read 403 as "your
 * credentials are wrong" (and may re-authenticate or alert), while 400 is "this request cannot be
 * done", which is what a full plan is; the code tells the two apart.
 */
const ENGINE_ERRORS: Record<WebhooksErrorCode, { status: number; code: HttpErrorCode } | null> = {
  ERR_VALIDATION: { status: 400, code: 'INVALID_REQUEST' }, // refined per field below
  ERR_UNKNOWN_EVENT_TYPE: { status: 400, code: 'UNKNOWN_EVENT_TYPE' },
  ERR_NOT_FOUND: { status: 404, code: 'NOT_FOUND' }, // refined per resource below
  ERR_LIMIT_REACHED: { status: 400, code: 'WEBHOOK_LIMIT_REACHED' },
  ERR_PAYLOAD_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE' },
  ERR_ENDPOINT_NOT_ALLOWED: { status: 400, code: 'ENDPOINT_NOT_ALLOWED' },
  ERR_WEBHOOK_DISABLED: { status: 409, code: 'WEBHOOK_DISABLED' },
  ERR_CLOSED: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  // A store failure is ours, not the caller's: its message may name tables or hosts.
  ERR_STORE: null,
  // Only `emit` in a host's transaction throws it, never a route: a bug of ours if it reaches one.
  ERR_TRANSACTION_REQUIRED: null,
  ERR_SECRETS_KEY_REQUIRED: { status: 400, code: 'SECRETS_KEY_REQUIRED' },
};

/** Request fields the engine may name in `error.field`, and the code each gets. */
const FIELD_CODES: Record<string, HttpErrorCode> = {
  name: 'INVALID_NAME',
  description: 'INVALID_DESCRIPTION',
  endpoint: 'INVALID_ENDPOINT',
  event_types: 'INVALID_EVENT_TYPES',
  // Endpoint options (the engine's names for them).
  headers: 'INVALID_HEADERS',
  timeoutMs: 'INVALID_TIMEOUT_MS',
  rateLimit: 'INVALID_RATE_LIMIT_PER_SECOND',
  // Signing formats and endpoint auth
  format: 'INVALID_FORMAT',
  asymmetric: 'INVALID_FORMAT',
  auth: 'INVALID_AUTH',
  ordering: 'INVALID_ORDERING',
};

/**
 * Parameters of the delivery operations, by the engine's name for them (`limit` is `page_size`
 * on the wire, `cursor` is `next_token`). A refusal about one of them names it in the code
 * whatever the engine's code, an unknown `event_type` included: the caller must learn which
 * parameter to fix.
 */
const PARAMETER_CODES: Record<string, HttpErrorCode> = {
  limit: 'INVALID_PAGE_SIZE',
  cursor: 'INVALID_NEXT_TOKEN',
  next_token: 'INVALID_NEXT_TOKEN',
  status: 'INVALID_STATUS',
  eventType: 'INVALID_EVENT_TYPE',
  since: 'INVALID_SINCE',
  until: 'INVALID_UNTIL',
  range: 'INVALID_RANGE',
  subject: 'INVALID_SUBJECT',
  graceMs: 'INVALID_GRACE_MS', // signing secret rotation
};

/**
 * The one place where failures become HTTP. Anything not recognised is logged through `onError`
 * and answered with a bare 500, so no internal detail reaches the caller.
 */
export function toErrorResponse(
  error: unknown,
  resource: Resource | undefined,
  onError: (message: string, error: unknown) => void,
): Response {
  if (error instanceof HttpError) return wireError(error.status, error.code, error.message, error.headers);
  if (error instanceof WebhooksError) {
    const mapped = Object.hasOwn(ENGINE_ERRORS, error.code) ? ENGINE_ERRORS[error.code] : null;
    if (mapped) return wireError(mapped.status, refine(error, mapped.code, resource), error.message);
  }
  onError('unexpected error in the HTTP handler', error);
  return wireError(500, 'INTERNAL_ERROR', 'internal error');
}

const NOT_FOUND_CODES: Record<Resource, HttpErrorCode> = {
  webhook: 'WEBHOOK_NOT_FOUND',
  event: 'EVENT_NOT_FOUND',
  delivery: 'DELIVERY_NOT_FOUND',
};

function refine(error: WebhooksError, code: HttpErrorCode, resource: Resource | undefined): HttpErrorCode {
  if (error.code === 'ERR_NOT_FOUND' && resource) return NOT_FOUND_CODES[resource];
  if (error.field !== undefined && Object.hasOwn(PARAMETER_CODES, error.field)) {
    if (error.code === 'ERR_VALIDATION' || error.code === 'ERR_UNKNOWN_EVENT_TYPE') return PARAMETER_CODES[error.field]!;
  }
  if (error.code === 'ERR_VALIDATION' && error.field !== undefined) {
    const root = error.field.split(/[.[]/, 1)[0] ?? '';
    return Object.hasOwn(FIELD_CODES, root) ? FIELD_CODES[root]! : code;
  }
  return code;
}
