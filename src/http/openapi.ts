import { JWKS_PATHS } from './jwks.js';
import { LOG_QUERY, SEARCH_QUERY, STATS_QUERY } from './openapi-fields.js';
import { SCHEMAS } from './openapi-schemas.js';
import { API_BASE, ROUTES, type Route } from './routes.js';

/** Where the document itself is served. */
export const OPENAPI_PATH = `${API_BASE}/openapi.json`;

type Op = {
  summary: string;
  request?: string;
  requestRequired?: boolean;
  response: string;
  errors: string[];
  /** Query parameters, described in `openapi-schemas.ts`. */
  query?: readonly Record<string, unknown>[];
};

const RESPONSES: Record<string, { description: string }> = {
  BadRequest: { description: 'Invalid request: the code names the problem, the message names the field.' },
  Forbidden: {
    description:
      'INVALID_CREDENTIALS: the host authorize() refused the request; CROSS_SITE_REQUEST: a write from another site (Origin, Sec-Fetch-Site).',
  },
  NotFound: { description: 'Not found (also for ids of another environment: ids do not leak).' },
  PayloadTooLarge: { description: 'Request body over 64 KiB.' },
  UnsupportedMediaType: { description: 'Request body is not application/json.' },
  TooManyRequests: { description: 'Throttled. Returned by the host in front of this API (the library has no limiter).' },
  InternalError: { description: 'Unexpected failure; logged by the server, no detail is returned.' },
  ServiceUnavailable: { description: 'The webhooks engine is shutting down.' },
  Conflict: { description: 'WEBHOOK_DISABLED: the webhook is disabled; enable it first.' },
};
const STATUS: Record<string, string> = {
  BadRequest: '400',
  Forbidden: '403',
  NotFound: '404',
  Conflict: '409',
  PayloadTooLarge: '413',
  UnsupportedMediaType: '415',
  TooManyRequests: '429',
  InternalError: '500',
  ServiceUnavailable: '503',
};

const BODY = ['BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType'];
const OPS: Record<string, Op> = {
  GetWebHooks: { summary: 'List webhooks', response: 'GetWebhooksResponse', errors: [] },
  CreateWebHook: {
    summary: 'Create a webhook',
    request: 'CreateWebhookRequest',
    requestRequired: true,
    response: 'CreateWebhookResponse',
    errors: BODY,
  },
  GetWebHook: { summary: 'Get a webhook, with its status (extension)', response: 'WebhookResponse', errors: ['NotFound'] },
  UpdateWebHook: {
    summary: 'Update a webhook (changing endpoint is an extension)',
    request: 'UpdateWebhookRequest',
    requestRequired: true,
    response: 'UpdateWebhookResponse',
    errors: [...BODY, 'NotFound'],
  },
  DeleteWebHook: { summary: 'Delete a webhook', response: 'DeleteWebhookResponse', errors: ['NotFound', 'UnsupportedMediaType'] },
  EnableWebHook: {
    summary: 'Enable a webhook, resuming held deliveries (extension)',
    request: 'EnableWebhookRequest',
    response: 'WebhookResponse',
    errors: [...BODY, 'NotFound'],
  },
  DisableWebHook: {
    summary: 'Disable a webhook; deliveries are held (extension)',
    response: 'WebhookResponse',
    errors: [...BODY, 'NotFound'],
  },
  GetWebHookDeliveries: {
    summary: "The webhook's deliveries, newest first, in pages (extension)",
    response: 'GetDeliveriesResponse',
    errors: ['BadRequest', 'NotFound'],
    query: LOG_QUERY,
  },
  GetWebHookStats: {
    summary: 'Every webhook over the last 24 hours: attempts, success rate, an hourly series (extension)',
    response: 'GetWebhookStatsResponse',
    errors: [],
  },
  GetWebHookOverview: {
    summary: "A webhook's attempts over 24 hours, 7 or 30 days, with median and p95 durations (extension)",
    response: 'GetWebhookOverviewResponse',
    errors: ['BadRequest', 'NotFound'],
    query: STATS_QUERY,
  },
  GetDeliveryMessage: {
    summary: 'One delivery as its receiver got it: payload, headers sent, every attempt (extension)',
    response: 'GetDeliveryMessageResponse',
    errors: ['NotFound'],
  },
  GetDeliveryAttempts: {
    summary: 'The attempts of one delivery, oldest first (extension)',
    response: 'GetAttemptsResponse',
    errors: ['NotFound'],
  },
  ResendDelivery: {
    summary: 'Send a delivery again now, with the same webhook-id (extension)',
    response: 'ResendDeliveryResponse',
    errors: [...BODY, 'NotFound', 'Conflict'],
  },
  RecoverWebHookDeliveries: {
    summary: 'Send again every failed delivery of events emitted in [since, until) (extension)',
    request: 'RecoverRequest',
    requestRequired: true,
    response: 'RecoverResponse',
    errors: [...BODY, 'NotFound', 'Conflict'],
  },
  SendWaitingDeliveries: {
    summary: 'Send now every pending delivery that waits for a later attempt (extension)',
    response: 'SendWaitingResponse',
    errors: [...BODY, 'NotFound', 'Conflict'],
  },
  GetWebHookWaiting: {
    summary: 'How many deliveries are pending and held, and when a failing webhook will be disabled (extension)',
    response: 'GetWaitingResponse',
    errors: ['BadRequest', 'NotFound'],
  },
  SendTestEvent: {
    summary: "Send a test event (the type's sample data) to this webhook only (extension)",
    request: 'TestEventRequest',
    response: 'TestEventResponse',
    errors: [...BODY, 'NotFound', 'Conflict'],
  },
  // Signing formats and endpoint auth
  GetWebHookSecret: {
    summary: "The webhook's Standard Webhooks signing secret, in clear, for its verifier (extension)",
    response: 'SecretResponse',
    errors: ['BadRequest', 'NotFound'],
  },
  RotateWebHookSecret: {
    summary: 'A new signing secret; the old one keeps signing beside it for grace_ms (extension)',
    request: 'RotateSecretRequest',
    response: 'SecretResponse',
    errors: [...BODY, 'NotFound'],
  },
  SearchEvents: {
    summary:
      "What was sent about a user or an organization: the environment's events by subject or email, with their deliveries (extension)",
    response: 'SearchEventsResponse',
    errors: ['BadRequest'],
    query: SEARCH_QUERY,
  },
  GetEvent: { summary: 'Get an event', response: 'GetEventResponse', errors: ['NotFound'] },
  GetEventTypes: { summary: 'List event types', response: 'GetEventTypesResponse', errors: [] },
  GetVerification: {
    summary: "What a receiver needs to verify this environment's deliveries: issuer and JWKS URL (extension)",
    response: 'GetVerificationResponse',
    errors: [],
  },
};

const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });

function operation(route: Route) {
  const op = OPS[route.operationId];
  if (!op) throw new Error(`no OpenAPI description for ${route.operationId}`);
  const responses: Record<string, unknown> = { '200': { description: 'Success', content: json(op.response) } };
  for (const name of [...op.errors, 'Forbidden', 'TooManyRequests', 'InternalError', 'ServiceUnavailable']) {
    responses[STATUS[name]!] = { $ref: `#/components/responses/${name}` };
  }
  const params: Record<string, unknown>[] = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  params.push(...(op.query ?? []));
  return {
    operationId: route.operationId,
    summary: op.summary,
    tags: [route.extension ? 'Extensions' : 'Kinde-compatible'],
    ...(route.extension ? { 'x-extension': true } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(op.request ? { requestBody: { required: op.requestRequired === true, content: json(op.request) } } : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of everything `hooks.handler` serves: Kinde's management routes, our
 * extensions (tagged `Extensions`, `x-extension: true`), the JWKS and this document. Built from
 * the route table, so the two cannot drift.
 *
 * `serverUrl` defaults to `/`. `hooks.handler` passes the mount prefix only (`/auth`), which
 * clients resolve against the document's own address: the document is served with
 * `cache-control: public`, so it must not echo the request's Host header, or one forged Host would
 * poison a shared cache for everyone. To publish the file, pass the absolute address.
 *
 * @example
 * ```ts
 * writeFileSync('openapi.json', JSON.stringify(openApiDocument('https://auth.example.com'), null, 2));
 * ```
 */
export function openApiDocument(serverUrl = '/') {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation(route);
  }
  const jwks = { 'application/json': { schema: { $ref: '#/components/schemas/Jwks' } } };
  for (const p of JWKS_PATHS) {
    paths[p] = {
      get: {
        operationId: p.endsWith('.json') ? 'GetJwksJson' : 'GetJwks',
        summary: 'Public signing keys',
        security: [],
        tags: ['Keys'],
        responses: { '200': { description: 'Key set', content: jwks } },
      },
      head: {
        summary: 'Public signing keys (headers only)',
        security: [],
        tags: ['Keys'],
        responses: { '200': { description: 'Key set headers' } },
      },
    };
  }
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'GetOpenApi',
      summary: 'This document',
      security: [],
      tags: ['Meta'],
      responses: {
        '200': {
          description: 'OpenAPI 3.1 document',
          content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'] } } },
        },
      },
    },
  };
  const responses = Object.fromEntries(Object.entries(RESPONSES).map(([name, r]) => [name, { ...r, content: json('ErrorResponse') }]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'identity-webhooks management API',
      version: '1',
      description:
        "Wire-compatible with the webhook routes of Kinde's management API, plus extensions (tag Extensions). Errors: { errors: [{ code, message }] }.",
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: structuredClone(SCHEMAS),
      responses,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "Whatever the host's authorize(request) accepts; a bearer token is typical.",
        },
      },
    },
  };
}
