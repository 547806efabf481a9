import { WebhooksError, type WebhooksErrorCode } from '../errors.js';
import { errorResponse } from './responses.js';

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
    readonly code: string,
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
const ENGINE_ERRORS: Record<WebhooksErrorCode, { status: number; code: string } | null> = {
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
};

/** Request fields the engine may name in `error.field`, and the code each gets. */
const FIELD_CODES: Record<string, string> = {
  name: 'INVALID_NAME',
  description: 'INVALID_DESCRIPTION',
  endpoint: 'INVALID_ENDPOINT',
  event_types: 'INVALID_EVENT_TYPES',
};

/**
 * Parameters of the delivery operations, by the engine's name for them (`limit` is `page_size`
 * on the wire, `cursor` is `next_token`). A refusal about one of them names it in the code
 * whatever the engine's code, an unknown `event_type` included: the caller must learn which
 * parameter to fix.
 */
const PARAMETER_CODES: Record<string, string> = {
  limit: 'INVALID_PAGE_SIZE',
  cursor: 'INVALID_NEXT_TOKEN',
  next_token: 'INVALID_NEXT_TOKEN',
  status: 'INVALID_STATUS',
  eventType: 'INVALID_EVENT_TYPE',
  since: 'INVALID_SINCE',
  until: 'INVALID_UNTIL',
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
  if (error instanceof HttpError) return errorResponse(error.status, error.code, error.message, error.headers);
  if (error instanceof WebhooksError) {
    const mapped = Object.hasOwn(ENGINE_ERRORS, error.code) ? ENGINE_ERRORS[error.code] : null;
    if (mapped) return errorResponse(mapped.status, refine(error, mapped.code, resource), error.message);
  }
  onError('unexpected error in the HTTP handler', error);
  return errorResponse(500, 'INTERNAL_ERROR', 'internal error');
}

function refine(error: WebhooksError, code: string, resource: Resource | undefined): string {
  if (error.code === 'ERR_NOT_FOUND' && resource) return `${resource.toUpperCase()}_NOT_FOUND`;
  if (error.field !== undefined && Object.hasOwn(PARAMETER_CODES, error.field)) {
    if (error.code === 'ERR_VALIDATION' || error.code === 'ERR_UNKNOWN_EVENT_TYPE') return PARAMETER_CODES[error.field]!;
  }
  if (error.code === 'ERR_VALIDATION' && error.field !== undefined) {
    const root = error.field.split(/[.[]/, 1)[0] ?? '';
    return Object.hasOwn(FIELD_CODES, root) ? FIELD_CODES[root]! : code;
  }
  return code;
}
