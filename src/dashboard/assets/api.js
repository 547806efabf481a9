/**
 * The element's one way to the management API. Every call goes through `element.fetch` (default:
 * the page's `fetch`, sending the page's cookies to its own origin) with the headers from
 * `element.headers` (an object, or a function that returns one or a promise of one): that is where
 * a host that uses bearer tokens puts its `authorization`.
 *
 * The wire shapes are the server's own types (src/http/wire.ts), so the page and the server are
 * type-checked against one definition.
 */

/**
 * @import { WireWebhook, wireActivity, wireAttempt, wireEventType, wireFoundEvent, wireLogDelivery, wireMessage, wireOverview } from '../../http/wire.js'
 *
 * @typedef {WireWebhook} Webhook
 * @typedef {ReturnType<typeof wireLogDelivery>} Delivery
 * @typedef {ReturnType<typeof wireAttempt>} Attempt
 * @typedef {ReturnType<typeof wireEventType>} EventType
 * @typedef {ReturnType<typeof wireActivity>} Activity
 * @typedef {ReturnType<typeof wireOverview>} Overview
 * @typedef {ReturnType<typeof wireMessage>} Message
 * @typedef {ReturnType<typeof wireFoundEvent>} FoundEvent
 * @typedef {object} LogFilter The delivery log's filters, as the API takes them.
 * @property {string} [status]
 * @property {string} [eventType]
 * @property {string} [since] ISO 8601
 * @property {string} [until] ISO 8601
 * @property {string} [search] An event id or a delivery id.
 * @typedef {Record<string, string>} HeaderMap
 * @typedef {HeaderMap | (() => HeaderMap | Promise<HeaderMap>) | undefined} HeadersOption
 * @typedef {(url: string, init: RequestInit) => Promise<Response>} FetchOption
 *
 * @typedef {object} ClientHost What the client reads from the element.
 * @property {HeadersOption} headers
 * @property {FetchOption | undefined} fetch
 * @property {string} apiBase
 *
 * @typedef {object} WebhookFields What the form sends.
 * @property {string} name
 * @property {string | null} [description]
 * @property {string} endpoint
 * @property {string[]} event_types
 * @property {Record<string, string>} [headers] Endpoint options (the Advanced section): the whole set.
 * @property {number | string | null} [timeout_ms] A string is sent as typed, for the server to refuse.
 * @property {number | string | null} [rate_limit_per_second]
 * @property {string} [format] Signing format.
 * @property {Record<string, unknown> | null} [auth] Endpoint auth; a masked secret keeps the stored one.
 * @property {string} [ordering] Ordered delivery per subject: `none` or `per-subject`.
 *
 * @typedef {{ name: 'list' } | { name: 'new' } | { name: 'webhook', id: string, query?: string } | { name: 'message', id: string, deliveryId: string } | { name: 'catalog' } | { name: 'subject', subject: string }} Route
 *
 * @typedef {object} ViewContext What a view may do: call the API, go elsewhere, say something,
 *   open dialogs in the element's shadow root.
 * @property {Client} api
 * @property {ShadowRoot} root
 * @property {(route: Route, options?: { notice?: string, replace?: boolean }) => void} navigate
 * @property {(focus: string | false | undefined) => void} reload
 * @property {(text: string) => void} notify
 * @property {(query: string) => void} keepQuery Keeps a view's state (the log's filters) in the
 *   address, so the view can be linked, without showing it again.
 *
 * @typedef {ReturnType<typeof createClient>} Client
 */

export class ApiError extends Error {
  /**
   * @param {number} status The HTTP status; 0 when no answer came.
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** @param {ClientHost} element */
export function createClient(element) {
  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<any>} The answer's JSON, as the server's types above describe it.
   */
  async function call(method, path, body) {
    const extra = typeof element.headers === 'function' ? await element.headers() : element.headers;
    /** @type {HeaderMap} */
    const headers = { accept: 'application/json', ...extra };
    // PATCH and DELETE go as a POST that names them: better-auth's documented mounts (Hono's
    // `app.on(['GET', 'POST'], …)`, Next.js's `export const { GET, POST }`) forward nothing else.
    // The dashboard's handler honours the header only on a same-site JSON request.
    const sent = method === 'PATCH' || method === 'DELETE' ? 'POST' : method;
    if (sent !== method) headers['x-http-method-override'] = method;
    /** @type {RequestInit} */
    const init = { method: sent, headers, credentials: 'same-origin' };
    if (method !== 'GET') {
      // Always JSON, even without a body: the dashboard refuses writes of any other type.
      headers['content-type'] = 'application/json';
      if (body !== undefined) init.body = JSON.stringify(body);
    }
    const doFetch = element.fetch ?? globalThis.fetch.bind(globalThis);
    let response;
    try {
      response = await doFetch(`${element.apiBase}${path}`, init);
    } catch {
      throw new ApiError(0, 'NETWORK', 'network error');
    }
    let json = null;
    try {
      json = await response.json();
    } catch {
      // not JSON (a proxy's error page): judged by the status alone
    }
    if (!response.ok) {
      const first = json?.errors?.[0];
      throw new ApiError(response.status, first?.code ?? `HTTP_${response.status}`, first?.message ?? response.statusText);
    }
    return json ?? {};
  }
  const id = encodeURIComponent;
  /** @type {Promise<EventType[]> | undefined} */
  let eventTypes;
  /** @type {Promise<{ issuer: string, jwks_url: string }> | undefined} */
  let verification;
  return {
    /** @returns {Promise<Webhook[]>} */
    listWebhooks: () => call('GET', '/webhooks').then((r) => r.webhooks ?? []),
    /** @param {string} webhookId @returns {Promise<Webhook>} */
    getWebhook: (webhookId) => call('GET', `/webhooks/${id(webhookId)}`).then((r) => r.webhook),
    /** @param {WebhookFields} fields @returns {Promise<Webhook>} */
    createWebhook: (fields) => call('POST', '/webhooks', fields).then((r) => r.webhook),
    /** @param {string} webhookId @param {Partial<WebhookFields>} fields @returns {Promise<void>} */
    updateWebhook: (webhookId, fields) => call('PATCH', `/webhooks/${id(webhookId)}`, fields),
    /** @param {string} webhookId @returns {Promise<void>} */
    deleteWebhook: (webhookId) => call('DELETE', `/webhooks/${id(webhookId)}`),
    /**
     * `resumeHeld: false` drops what was held while it was disabled.
     * @param {string} webhookId @param {boolean} [resumeHeld] @returns {Promise<void>}
     */
    enable: (webhookId, resumeHeld = true) => call('POST', `/webhooks/${id(webhookId)}/enable`, resumeHeld ? {} : { resume_held: false }),
    /** @param {string} webhookId @returns {Promise<void>} */
    disable: (webhookId) => call('POST', `/webhooks/${id(webhookId)}/disable`, {}),
    /**
     * The catalog changes only with a deploy: asked once per element.
     * @returns {Promise<EventType[]>}
     */
    eventTypes: () => {
      eventTypes ??= call('GET', '/event_types').then(
        (r) => r.event_types ?? [],
        (error) => {
          eventTypes = undefined;
          throw error;
        },
      );
      return eventTypes;
    },
    /**
     * The issuer and JWKS URL receivers verify with (How to verify): asked once per element.
     * @returns {Promise<{ issuer: string, jwks_url: string }>}
     */
    verification: () => {
      verification ??= call('GET', '/verification').catch((error) => {
        verification = undefined;
        throw error;
      });
      return verification;
    },
    /**
     * @param {string} webhookId
     * @param {LogFilter & { pageSize?: number, nextToken?: string | null }} [options]
     * @returns {Promise<{ deliveries?: Delivery[], next_token?: string | null }>}
     */
    deliveries: (webhookId, { status, eventType, since, until, search, pageSize, nextToken } = {}) => {
      const query = new URLSearchParams();
      if (status) query.set('status', status);
      if (eventType) query.set('event_type', eventType);
      if (since) query.set('since', since);
      if (until) query.set('until', until);
      if (search) query.set('search', search);
      if (pageSize) query.set('page_size', String(pageSize));
      if (nextToken) query.set('next_token', nextToken);
      return call('GET', `/webhooks/${id(webhookId)}/deliveries?${query}`);
    },
    /** @returns {Promise<Activity[]>} Every webhook over the last 24 hours. */
    stats: () => call('GET', '/webhooks/stats').then((r) => r.stats ?? []),
    /** @param {string} webhookId @param {string} range @returns {Promise<Overview>} */
    overview: (webhookId, range) => call('GET', `/webhooks/${id(webhookId)}/stats?range=${id(range)}`).then((r) => r.overview),
    /** @param {string} webhookId @param {string} deliveryId @returns {Promise<Message>} */
    message: (webhookId, deliveryId) => call('GET', `/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}`),
    /**
     * What was sent about a user or an organization (a subject or an email), across webhooks.
     * @param {string} subject @param {string | null} [nextToken]
     * @returns {Promise<{ events?: FoundEvent[], next_token?: string | null }>}
     */
    eventsAbout: (subject, nextToken) => {
      const query = new URLSearchParams({ subject });
      if (nextToken) query.set('next_token', nextToken);
      return call('GET', `/events?${query}`);
    },
    /** @param {string} webhookId @param {string} deliveryId @returns {Promise<Attempt[]>} */
    attempts: (webhookId, deliveryId) =>
      call('GET', `/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/attempts`).then((r) => r.attempts ?? []),
    /** @param {string} webhookId @param {string} deliveryId @returns {Promise<void>} */
    resend: (webhookId, deliveryId) => call('POST', `/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/resend`, {}),
    /** @param {string} webhookId @returns {Promise<{ sent: number }>} */
    sendWaiting: (webhookId) => call('POST', `/webhooks/${id(webhookId)}/send_waiting`, {}),
    /**
     * What waits on the webhook, and when it will be disabled if it keeps failing.
     * @param {string} webhookId @returns {Promise<{ pending: number, held: number, sendable: number, disables_on: string | null }>}
     */
    waiting: (webhookId) => call('GET', `/webhooks/${id(webhookId)}/waiting`).then((r) => r.waiting),
    /** @param {string} webhookId @param {string} since @returns {Promise<{ recovered: number }>} */
    recover: (webhookId, since) => call('POST', `/webhooks/${id(webhookId)}/recover`, { since }),
    // Signing formats
    /** @param {string} webhookId @returns {Promise<{ secret: string, public_key: string | null }>} */
    secret: (webhookId) => call('GET', `/webhooks/${id(webhookId)}/secret`).then((r) => r.secret),
    /** @param {string} webhookId @returns {Promise<{ secret: string }>} */
    rotateSecret: (webhookId) => call('POST', `/webhooks/${id(webhookId)}/secret/rotate`, {}).then((r) => r.secret),
    /** @param {string} webhookId @param {string} [eventType] @returns {Promise<{ delivery_id: string }>} */
    sendTest: (webhookId, eventType) => call('POST', `/webhooks/${id(webhookId)}/test`, eventType ? { event_type: eventType } : {}),
  };
}
