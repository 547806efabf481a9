import { ENDPOINT_LIMITS } from '../endpoint-options.js';
import { LIMITS } from '../validate.js';
import type { SUCCESS } from './operations.js';

/**
 * Component schemas of the OpenAPI document. JSON Schema 2020-12 as OpenAPI 3.1 allows, kept to
 * the subset `src/catalog/schema.ts` enforces (plus `$ref`), so the test-suite can check every
 * response against them with our own validator.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: 'string' };
const time = { type: 'string', format: 'date-time' };
const nullableTime = { type: ['string', 'null'], format: 'date-time' };
const code = (...codes: (keyof typeof SUCCESS)[]) => ({ type: 'string', enum: codes, description: 'Machine-readable outcome.' });
const envelope = (codes: (keyof typeof SUCCESS)[], extra: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  required: ['code', 'message', ...required],
  properties: { code: code(...codes), message: { type: 'string', description: 'Human-readable outcome.' }, ...extra },
});

const name = { type: 'string', minLength: 1, maxLength: LIMITS.nameLength };
const description = { type: ['string', 'null'], maxLength: LIMITS.descriptionLength };
const endpoint = {
  type: 'string',
  format: 'uri',
  maxLength: LIMITS.endpointLength,
  description: 'Absolute http(s) URL, no credentials, no #fragment.',
};
const eventTypes = {
  type: 'array',
  minItems: 1,
  maxItems: LIMITS.eventTypesPerWebhook,
  items: { type: 'string' },
  description: 'Event type codes (see GET /api/v1/event_types).',
};

/* Endpoint options (extensions; docs/endpoint-options.md). */
const headers = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: ENDPOINT_LIMITS.headerValueLength },
  description:
    'Extension: up to 20 custom request headers sent with every attempt (names of at most 64 token characters, not content-type, content-length, host, user-agent, traceparent, webhook-* or the connection headers; values of visible ASCII). Values of credential headers (authorization, proxy-authorization, cookie, *-key, *-token, *-secret) are write-only: read as ••••••••, which sent back keeps the stored value; they need the host to set secretsKey (else 400 SECRETS_KEY_REQUIRED).',
};
const timeoutMs = {
  type: ['integer', 'null'],
  minimum: ENDPOINT_LIMITS.minTimeoutMs,
  maximum: ENDPOINT_LIMITS.maxTimeoutMs,
  description: "Extension: this webhook's attempt deadline in milliseconds; null for the engine's.",
};
const ordering = {
  type: 'string',
  enum: ['none', 'per-subject'],
  description:
    'Extension (docs/ordering.md): none (default: each delivery on its own back-off, no order promised), or per-subject (a delivery is not attempted while an earlier one of the same subject to this webhook is pending or held; other subjects flow). Set back to none, what waited is sent at once.',
};
const ratePerSecond = {
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
const MASKED = 'Write-only: answered as ******** (sent back unchanged on update, it keeps the stored one).';
const format = {
  type: 'string',
  enum: ['jwt', 'standard-webhooks'],
  description:
    'Extension: jwt (default: an RS256 JWT body, verified against the JWKS) or standard-webhooks (a JSON body signed with the webhook-signature header; needs the host option secretsKey).',
};
const asymmetric = {
  type: 'boolean',
  description: 'Extension: also sign v1a with an Ed25519 key of the webhook (standard-webhooks only).',
};
const auth = {
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
const signingFields = { format, asymmetric, auth };

const deliveryStatus = {
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

const activityPoint = {
  type: 'object',
  required: ['at', 'succeeded', 'failed'],
  properties: {
    at: { ...time, description: 'The start of the point.' },
    succeeded: { type: 'integer', minimum: 0 },
    failed: { type: 'integer', minimum: 0 },
  },
};
const counts = {
  attempts: { type: 'integer', minimum: 0 },
  succeeded: { type: 'integer', minimum: 0, description: 'Attempts answered HTTP 200.' },
  failed: { type: 'integer', minimum: 0, description: 'Attempts that failed (any other answer, or none).' },
  success_rate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'succeeded / attempts; null without attempts.' },
};

export const SCHEMAS = {
  Error: { type: 'object', required: ['code', 'message'], properties: { code: { ...str, description: ERROR_CODES_DOC }, message: str } },
  ErrorResponse: { type: 'object', required: ['errors'], properties: { errors: { type: 'array', minItems: 1, items: ref('Error') } } },
  Webhook: {
    type: 'object',
    required: [
      'id',
      'name',
      'endpoint',
      'description',
      'event_types',
      'created_on',
      'status',
      'disabled_reason',
      'disabled_on',
      'failing_since',
      'last_error',
      'updated_on',
    ],
    properties: {
      id: str,
      name,
      endpoint,
      description,
      event_types: { type: 'array', items: str },
      created_on: time,
      status: { type: 'string', enum: ['enabled', 'disabled'], description: 'Extension.' },
      disabled_reason: {
        type: ['string', 'null'],
        description:
          'Extension: `manual`, `failing` (every delivery failed for 72 hours), or `gone` (the endpoint answered 410 and the host set disableOnGone).',
      },
      disabled_on: { ...nullableTime, description: 'Extension.' },
      failing_since: { ...nullableTime, description: 'Extension: first failure since the last success; null while healthy.' },
      last_error: { type: ['string', 'null'], description: 'Extension: the last delivery failure seen.' },
      updated_on: { ...time, description: 'Extension.' },
      circuit: {
        type: 'string',
        enum: ['closed', 'half_open'],
        description:
          'Extension, derived from failing_since: closed (healthy: several attempts at once), or half_open (failing: one attempt at a time per process until a success closes it). A disabled webhook is not attempted at all: see status.',
      },
      headers,
      timeout_ms: timeoutMs,
      rate_limit_per_second: ratePerSecond,
      format,
      signing: {
        type: ['object', 'null'],
        description: 'Extension (standard-webhooks): public facts of the signing keys; the secret is read from GET .../secret.',
        required: ['public_key', 'previous_secret_until'],
        properties: {
          public_key: { type: ['string', 'null'], description: 'The Ed25519 public key (whpk_…) of v1a signatures.' },
          previous_secret_until: { ...nullableTime, description: 'Until when the secret before the last rotation still signs.' },
        },
      },
      auth,
      ordering,
    },
  },
  CreateWebhookRequest: {
    type: 'object',
    additionalProperties: false,
    required: ['endpoint', 'event_types', 'name'],
    properties: {
      endpoint,
      event_types: eventTypes,
      name,
      description,
      headers: { ...headers, type: ['object', 'null'] },
      timeout_ms: timeoutMs,
      rate_limit_per_second: ratePerSecond,
      ...signingFields,
      ordering,
    },
  },
  UpdateWebhookRequest: {
    type: 'object',
    additionalProperties: false,
    description: 'Every field optional; null name, endpoint or event_types leave them as they are, a null description clears it.',
    properties: {
      endpoint: { ...endpoint, type: ['string', 'null'], description: 'Extension: Kinde cannot change an endpoint.' },
      event_types: { ...eventTypes, type: ['array', 'null'] },
      name: { ...name, type: ['string', 'null'] },
      description,
      headers: { ...headers, type: ['object', 'null'], description: `${headers.description} Replaces the whole set; null clears it.` },
      timeout_ms: timeoutMs,
      rate_limit_per_second: ratePerSecond,
      ...signingFields,
      ordering: {
        ...ordering,
        type: ['string', 'null'],
        enum: ['none', 'per-subject', null],
        description: `${ordering.description} Null leaves it as it is.`,
      },
    },
  },
  RotateSecretRequest: {
    type: 'object',
    additionalProperties: false,
    properties: {
      grace_ms: {
        type: ['integer', 'null'],
        minimum: 0,
        maximum: 7 * 24 * 3600_000,
        description: 'How long the current secret keeps signing beside the new one (default a day, at most 7 days; 0: at once).',
      },
    },
  },
  SecretResponse: envelope(
    ['OK', 'SECRET_ROTATED'],
    {
      secret: {
        type: 'object',
        required: ['secret', 'public_key', 'previous_secret_until'],
        properties: {
          secret: { type: 'string', description: 'whsec_ followed by base64: give it to a Standard Webhooks verifier.' },
          public_key: { type: ['string', 'null'] },
          previous_secret_until: nullableTime,
        },
      },
    },
    ['secret'],
  ),
  EnableWebhookRequest: {
    type: 'object',
    additionalProperties: false,
    properties: { resume_held: { type: 'boolean', description: 'Deliver what was held while disabled (default true); false drops it.' } },
  },
  Delivery: {
    type: 'object',
    description: 'Extension: one event owed to this webhook.',
    required: [
      'id',
      'event_id',
      'event_type',
      'status',
      'attempt_count',
      'created_on',
      'next_attempt_on',
      'last_attempt_on',
      'last_status_code',
      'last_error',
    ],
    properties: {
      id: { ...str, description: 'The webhook-id header value, the same on every attempt.' },
      event_id: str,
      event_type: str,
      status: deliveryStatus,
      attempt_count: { type: 'integer', minimum: 0 },
      created_on: time,
      next_attempt_on: { ...nullableTime, description: 'While pending: when it is (or, during an attempt, would again be) due.' },
      last_attempt_on: nullableTime,
      last_status_code: { type: ['integer', 'null'], description: 'HTTP status of the last attempt; null if none was received.' },
      last_error: { type: ['string', 'null'], description: 'What went wrong in the last attempt; null after a success.' },
      webhook_id: { ...str, description: 'In a search by subject: the webhook it is owed to.' },
      subject: { type: ['string', 'null'], description: "In the log: what its event is about (the event type's subject), or null." },
      test: { type: 'boolean', description: 'In the log: whether its event is a test event (Send test event).' },
    },
  },
  Attempt: {
    type: 'object',
    description: 'Extension: one HTTP try of a delivery.',
    required: ['id', 'started_on', 'duration_ms', 'status_code', 'error_kind', 'error', 'response_excerpt', 'success'],
    properties: {
      id: str,
      started_on: time,
      duration_ms: { type: 'integer', minimum: 0 },
      status_code: { type: ['integer', 'null'] },
      error_kind: {
        type: ['string', 'null'],
        enum: ['timeout', 'network', 'dns', 'blocked', 'redirect', 'status', 'internal', 'auth', null],
        description: 'Null on success.',
      },
      error: { type: ['string', 'null'] },
      response_excerpt: { type: ['string', 'null'], description: 'The first bytes of the response body (at most 4 KiB).' },
      success: { type: 'boolean' },
    },
  },
  RecoverRequest: {
    type: 'object',
    additionalProperties: false,
    required: ['since'],
    properties: {
      since: { ...time, description: 'Failed deliveries of events emitted at or after this time are sent again.' },
      until: { ...nullableTime, description: 'And before this time (default: now).' },
    },
  },
  TestEventRequest: {
    type: 'object',
    additionalProperties: false,
    properties: {
      event_type: { type: ['string', 'null'], description: "Any type of the catalog (default: the webhook's first subscribed type)." },
    },
  },
  GetDeliveriesResponse: envelope(
    ['OK'],
    {
      deliveries: { type: 'array', items: ref('Delivery') },
      next_token: { type: ['string', 'null'], description: 'Pass as next_token for the next page; null on the last page.' },
    },
    ['deliveries', 'next_token'],
  ),
  SearchEventsResponse: envelope(
    ['OK'],
    {
      events: {
        type: 'array',
        description: 'Newest first.',
        items: {
          type: 'object',
          required: ['event_id', 'type', 'source', 'subject', 'test', 'timestamp', 'created_on', 'deliveries'],
          properties: {
            event_id: str,
            type: str,
            source: { type: 'string', enum: ['admin', 'api', 'user'] },
            subject: {
              type: ['string', 'null'],
              description: "The event type's subject in its data, or null (found by its user's email).",
            },
            test: { type: 'boolean', description: 'A test event (Send test event).' },
            timestamp: { ...time, description: 'When the event happened.' },
            created_on: { ...time, description: 'When it was emitted.' },
            deliveries: { type: 'array', items: ref('Delivery'), description: 'To every webhook, each with its webhook_id.' },
          },
        },
      },
      next_token: { type: ['string', 'null'], description: 'Pass as next_token for the next page; null on the last page.' },
    },
    ['events', 'next_token'],
  ),
  WebhookActivity: {
    type: 'object',
    description: 'Extension: a webhook over the last 24 hours, from hourly counters.',
    required: ['webhook_id', 'attempts', 'succeeded', 'failed', 'success_rate', 'series'],
    properties: {
      webhook_id: str,
      ...counts,
      series: { type: 'array', items: activityPoint, description: '24 hourly points, oldest first; the last is the current hour.' },
    },
  },
  GetWebhookStatsResponse: envelope(['OK'], { stats: { type: 'array', items: ref('WebhookActivity') } }, ['stats']),
  GetWebhookOverviewResponse: envelope(
    ['OK'],
    {
      overview: {
        type: 'object',
        required: [
          'webhook_id',
          'range',
          'since',
          'until',
          'step_ms',
          'attempts',
          'succeeded',
          'failed',
          'success_rate',
          'median_ms',
          'p95_ms',
          'points',
        ],
        properties: {
          webhook_id: str,
          range: { type: 'string', enum: ['24h', '7d', '30d'] },
          since: time,
          until: time,
          step_ms: { type: 'integer', minimum: 1, description: 'Each point: an hour, six hours or a day.' },
          ...counts,
          median_ms: { type: ['integer', 'null'], description: 'Median attempt duration, estimated from buckets.' },
          p95_ms: { type: ['integer', 'null'], description: '95th percentile attempt duration, estimated from buckets.' },
          points: { type: 'array', items: activityPoint },
        },
      },
    },
    ['overview'],
  ),
  GetDeliveryMessageResponse: envelope(
    ['OK'],
    {
      delivery: ref('Delivery'),
      format: { type: 'string', enum: ['jwt', 'standard-webhooks'], description: "The webhook's signing format." },
      payload: {
        type: 'object',
        description:
          'The body as the receiver got it, built again from the stored event: the token claims (jwt) or the JSON body (standard-webhooks); its timestamp is that of the last attempt.',
      },
      headers: {
        type: 'object',
        description:
          "The request headers the attempts sent (lower-case names): the format's, the webhook's own, its auth's; credential values, signatures and tokens masked.",
      },
      attempts: { type: 'array', items: ref('Attempt') },
    },
    ['delivery', 'format', 'payload', 'headers', 'attempts'],
  ),
  GetAttemptsResponse: envelope(['OK'], { attempts: { type: 'array', items: ref('Attempt') } }, ['attempts']),
  ResendDeliveryResponse: envelope(['DELIVERY_RESENT'], { delivery: ref('Delivery') }, ['delivery']),
  RecoverResponse: envelope(
    ['DELIVERIES_RECOVERED'],
    { recovered: { type: 'integer', minimum: 0, description: 'How many failed deliveries were queued again.' } },
    ['recovered'],
  ),
  SendWaitingResponse: envelope(
    ['WAITING_SENT'],
    { sent: { type: 'integer', minimum: 0, description: 'How many waiting deliveries were made due now.' } },
    ['sent'],
  ),
  GetWaitingResponse: envelope(
    ['OK'],
    {
      waiting: {
        type: 'object',
        additionalProperties: false,
        required: ['pending', 'held', 'sendable', 'disables_on'],
        properties: {
          pending: { type: 'integer', minimum: 0, description: 'Deliveries still to be attempted.' },
          held: { type: 'integer', minimum: 0, description: 'Deliveries held while the webhook is disabled.' },
          sendable: {
            type: 'integer',
            minimum: 0,
            description:
              'Pending deliveries that POST …/send_waiting would send now (waiting for a later attempt, not in flight, not ordered behind another).',
          },
          disables_on: {
            type: ['string', 'null'],
            format: 'date-time',
            description: 'When the webhook will be disabled if it keeps failing; null when it is not failing or nothing is pending.',
          },
        },
      },
    },
    ['waiting'],
  ),
  TestEventResponse: envelope(['TEST_EVENT_SENT'], { event_id: str, delivery_id: { ...str, description: 'Its webhook-id.' } }, [
    'event_id',
    'delivery_id',
  ]),
  GetWebhooksResponse: envelope(['OK'], { webhooks: { type: 'array', items: ref('Webhook') } }, ['webhooks']),
  CreateWebhookResponse: envelope(
    ['WEBHOOK_CREATED'],
    { webhook: { type: 'object', required: ['id', 'endpoint'], properties: { id: str, endpoint } } },
    ['webhook'],
  ),
  UpdateWebhookResponse: envelope(['WEBHOOK_UPDATED'], { webhook: { type: 'object', required: ['id'], properties: { id: str } } }, [
    'webhook',
  ]),
  DeleteWebhookResponse: envelope(['WEBHOOK_DELETED'], {}, []),
  WebhookResponse: envelope(['OK', 'WEBHOOK_ENABLED', 'WEBHOOK_DISABLED'], { webhook: ref('Webhook') }, ['webhook']),
  GetEventResponse: envelope(
    ['OK'],
    {
      event: {
        type: 'object',
        required: ['type', 'source', 'event_id', 'timestamp', 'data'],
        properties: {
          type: str,
          source: { type: 'string', enum: ['admin', 'api', 'user'] },
          event_id: str,
          timestamp: { ...time, description: 'When the event happened.' },
          data: { type: 'object', description: 'As described by the event type schema.' },
        },
      },
    },
    ['event'],
  ),
  GetEventTypesResponse: envelope(
    ['OK'],
    {
      event_types: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'code', 'name', 'origin', 'schema'],
          properties: {
            id: str,
            code: str,
            name: str,
            origin: str,
            schema: { type: 'object', description: 'JSON Schema of the event data.' },
            example: { type: 'object', description: 'Extension: sample `data` of this type (what a test event carries).' },
            subject: {
              type: ['string', 'null'],
              description:
                "Extension (docs/ordering.md): a JSON pointer into `data` to the event's subject (what a per-subject webhook orders its deliveries by), or null: events of this type have none.",
            },
          },
        },
      },
    },
    ['event_types'],
  ),
  GetVerificationResponse: envelope(
    ['OK'],
    {
      issuer: { type: 'string', description: 'The `iss` of every token sent to this environment.' },
      jwks_url: { type: 'string', description: 'Where the public keys that verify them are served.' },
    },
    ['issuer', 'jwks_url'],
  ),
  Jwks: {
    type: 'object',
    required: ['keys'],
    properties: {
      keys: {
        type: 'array',
        items: {
          type: 'object',
          required: ['kty', 'kid', 'alg', 'use', 'n', 'e'],
          properties: { kty: { const: 'RSA' }, kid: str, alg: { const: 'RS256' }, use: { const: 'sig' }, n: str, e: str },
        },
      },
    },
  },
} as const;
