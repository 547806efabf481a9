import { ENDPOINT_LIMITS } from '../endpoint-options.js';
import { LIMITS } from '../validate.js';
import type { SUCCESS } from './operations.js';

/** The parts the OpenAPI document's schemas are made of: field schemas, envelopes, query parameters. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const str = { type: 'string' };
export const time = { type: 'string', format: 'date-time' };
export const nullableTime = { type: ['string', 'null'], format: 'date-time' };
export const code = (...codes: (keyof typeof SUCCESS)[]) => ({ type: 'string', enum: codes, description: 'Machine-readable outcome.' });
export const envelope = (codes: (keyof typeof SUCCESS)[], extra: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  required: ['code', 'message', ...required],
  properties: { code: code(...codes), message: { type: 'string', description: 'Human-readable outcome.' }, ...extra },
});

export const name = { type: 'string', minLength: 1, maxLength: LIMITS.nameLength };
export const description = { type: ['string', 'null'], maxLength: LIMITS.descriptionLength };
export const endpoint = {
  type: 'string',
  format: 'uri',
  maxLength: LIMITS.endpointLength,
  description: 'Absolute http(s) URL, no credentials, no #fragment.',
};
export const eventTypes = {
  type: 'array',
  minItems: 1,
  maxItems: LIMITS.eventTypesPerWebhook,
  items: { type: 'string' },
  description: 'Event type codes (see GET /api/v1/event_types).',
};

/* Endpoint options (extensions; docs/endpoint-options.md). */
export const headers = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: ENDPOINT_LIMITS.headerValueLength },
  description:
    'Extension: up to 20 custom request headers sent with every attempt (names of at most 64 token characters, not content-type, content-length, host, user-agent, traceparent, webhook-* or the connection headers; values of visible ASCII). Values of credential headers (authorization, proxy-authorization, cookie, *-key, *-token, *-secret) are write-only: read as ••••••••, which sent back keeps the stored value; they need the host to set secretsKey (else 400 SECRETS_KEY_REQUIRED).',
};
export const timeoutMs = {
  type: ['integer', 'null'],
  minimum: ENDPOINT_LIMITS.minTimeoutMs,
  maximum: ENDPOINT_LIMITS.maxTimeoutMs,
  description: "Extension: this webhook's attempt deadline in milliseconds; null for the engine's.",
};
export const ordering = {
  type: 'string',
  enum: ['none', 'per-subject'],
  description:
    'Extension (docs/ordering.md): none (default: each delivery on its own back-off, no order promised), or per-subject (a delivery is not attempted while an earlier one of the same subject to this webhook is pending or held; other subjects flow). Set back to none, what waited is sent at once.',
};
export const ratePerSecond = {
  type: ['integer', 'null'],
  minimum: ENDPOINT_LIMITS.minPerSecond,
  maximum: ENDPOINT_LIMITS.maxPerSecond,
  description: 'Extension: most attempts started per second, across every process; null for no limit.',
};

export const ERROR_CODES_DOC = [
  '400: INVALID_JSON, INVALID_BODY, UNKNOWN_FIELD, INVALID_NAME, INVALID_DESCRIPTION, INVALID_ENDPOINT, INVALID_EVENT_TYPES,',
  'UNKNOWN_EVENT_TYPE, ENDPOINT_NOT_ALLOWED, INVALID_RESUME_HELD, WEBHOOK_LIMIT_REACHED, INVALID_REQUEST,',
  'UNKNOWN_PARAMETER, INVALID_STATUS, INVALID_EVENT_TYPE, INVALID_PAGE_SIZE, INVALID_NEXT_TOKEN, INVALID_SINCE, INVALID_UNTIL,',
  'INVALID_HEADERS, INVALID_TIMEOUT_MS, INVALID_RATE_LIMIT_PER_SECOND, SECRETS_KEY_REQUIRED, INVALID_SEARCH, INVALID_SUBJECT, INVALID_RANGE,',
  'INVALID_FORMAT, INVALID_AUTH, INVALID_GRACE_MS, INVALID_ORDERING;',
  '403: INVALID_CREDENTIALS, CROSS_SITE_REQUEST; 404: ROUTE_NOT_FOUND, WEBHOOK_NOT_FOUND, EVENT_NOT_FOUND, DELIVERY_NOT_FOUND; 405: METHOD_NOT_ALLOWED;',
  '409: WEBHOOK_DISABLED;',
  '413: PAYLOAD_TOO_LARGE; 415: UNSUPPORTED_MEDIA_TYPE; 429: returned by the host, not this library;',
  '500: INTERNAL_ERROR; 503: SERVICE_UNAVAILABLE.',
].join(' ');

// --- Signing formats and endpoint auth ---
export const MASKED = 'Write-only: answered as ******** (sent back unchanged on update, it keeps the stored one).';
export const format = {
  type: 'string',
  enum: ['jwt', 'standard-webhooks'],
  description:
    'Extension: jwt (default: an RS256 JWT body, verified against the JWKS) or standard-webhooks (a JSON body signed with the webhook-signature header; needs the host option secretsKey).',
};
export const asymmetric = {
  type: 'boolean',
  description: 'Extension: also sign v1a with an Ed25519 key of the webhook (standard-webhooks only).',
};
export const auth = {
  type: ['object', 'null'],
  description:
    'Extension: how the engine authenticates to the endpoint (needs the host option secretsKey). type oauth2_client_credentials: token_url, client_id, client_secret, scope?, audience?; type mtls: certificate, private_key, ca? (PEM). null removes it. ' +
    MASKED,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['oauth2_client_credentials', 'mtls'] },
    token_url: { type: 'string', format: 'uri' },
    client_id: str,
    client_secret: { type: 'string', description: MASKED },
    scope: { type: ['string', 'null'] },
    audience: { type: ['string', 'null'] },
    certificate: { type: 'string', description: 'PEM client certificate (chain).' },
    private_key: { type: 'string', description: `PEM private key. ${MASKED}` },
    ca: { type: ['string', 'null'], description: "PEM CAs to trust for the endpoint's server certificate (default: the system's)." },
  },
};
export const signingFields = { format, asymmetric, auth };

export const deliveryStatus = {
  type: 'string',
  enum: ['pending', 'held', 'delivered', 'failed'],
  description: 'pending (due or being attempted), held (webhook disabled), delivered, failed (back-off spent, or dropped on enable).',
};

/** Query parameters of `GET /api/v1/webhooks/{webhook_id}/deliveries`; an empty value is the same as none. */
export const LOG_QUERY = [
  { name: 'status', in: 'query', required: false, schema: deliveryStatus, description: 'Only deliveries in this state.' },
  { name: 'event_type', in: 'query', required: false, schema: str, description: 'Only deliveries of this event type code.' },
  { name: 'since', in: 'query', required: false, schema: time, description: 'Only deliveries created at or after this time.' },
  { name: 'until', in: 'query', required: false, schema: time, description: 'Only deliveries created before this time.' },
  {
    name: 'search',
    in: 'query',
    required: false,
    schema: str,
    description: 'An event id (event_…) or a delivery id (msg_…, its webhook-id header): only the deliveries of that event, or that one.',
  },
  {
    name: 'page_size',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    description: 'Deliveries per page.',
  },
  {
    name: 'next_token',
    in: 'query',
    required: false,
    schema: str,
    description: 'The next_token of the previous page (a position, so pages do not shift as new deliveries arrive).',
  },
] as const;

/** The query of `GET /api/v1/events` (search by subject). */
export const SEARCH_QUERY = [
  {
    name: 'subject',
    in: 'query',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 255 },
    description: "A subject (a user's id, an organization's code: the event type's subject) or a user's email, in any case.",
  },
  {
    name: 'page_size',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    description: 'Events per page.',
  },
  {
    name: 'next_token',
    in: 'query',
    required: false,
    schema: str,
    description: 'The next_token of the previous page.',
  },
] as const;

/** The query of `GET …/webhooks/{webhook_id}/stats`. */
export const STATS_QUERY = [
  {
    name: 'range',
    in: 'query',
    required: false,
    schema: { type: 'string', enum: ['24h', '7d', '30d'], default: '24h' },
    description: 'The period: 24 hourly points, 28 of six hours, or 30 days.',
  },
] as const;

export const activityPoint = {
  type: 'object',
  required: ['at', 'succeeded', 'failed'],
  properties: {
    at: { ...time, description: 'The start of the point.' },
    succeeded: { type: 'integer', minimum: 0 },
    failed: { type: 'integer', minimum: 0 },
  },
};
export const counts = {
  attempts: { type: 'integer', minimum: 0 },
  succeeded: { type: 'integer', minimum: 0, description: 'Attempts answered HTTP 200.' },
  failed: { type: 'integer', minimum: 0, description: 'Attempts that failed (any other answer, or none).' },
  success_rate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'succeeded / attempts; null without attempts.' },
};
