import { activityPoint, counts, endpoint, envelope, ref, str, time } from './openapi-fields.js';

/** The component schemas of the document's responses (the records' and requests' are in openapi-schemas.ts). */
export const RESPONSE_SCHEMAS = {
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
