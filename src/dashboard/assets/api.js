/**
 * The element's one way to the management API. Every call goes through `portal.fetch` (default:
 * the page's `fetch`, sending the page's cookies to its own origin) with the headers from
 * `portal.headers` (an object, or a function that returns one or a promise of one): that is where
 * a host that uses bearer tokens puts its `authorization`.
 */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export function createClient(portal) {
  async function call(method, path, body) {
    const extra = typeof portal.headers === 'function' ? await portal.headers() : portal.headers;
    const headers = { accept: 'application/json', ...extra };
    const init = { method, headers, credentials: 'same-origin' };
    if (method !== 'GET') {
      // Always JSON, even without a body: the dashboard refuses writes of any other type.
      headers['content-type'] = 'application/json';
      if (body !== undefined) init.body = JSON.stringify(body);
    }
    const doFetch = portal.fetch ?? globalThis.fetch.bind(globalThis);
    let response;
    try {
      response = await doFetch(`${portal.apiBase}${path}`, init);
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
  let eventTypes;
  return {
    listWebhooks: () => call('GET', '/webhooks').then((r) => r.webhooks ?? []),
    getWebhook: (webhookId) => call('GET', `/webhooks/${id(webhookId)}`).then((r) => r.webhook),
    createWebhook: (fields) => call('POST', '/webhooks', fields).then((r) => r.webhook),
    updateWebhook: (webhookId, fields) => call('PATCH', `/webhooks/${id(webhookId)}`, fields),
    deleteWebhook: (webhookId) => call('DELETE', `/webhooks/${id(webhookId)}`),
    enable: (webhookId) => call('POST', `/webhooks/${id(webhookId)}/enable`, {}),
    disable: (webhookId) => call('POST', `/webhooks/${id(webhookId)}/disable`, {}),
    /** The catalog changes only with a deploy: asked once per element. */
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
    deliveries: (webhookId, { status, pageSize, nextToken } = {}) => {
      const query = new URLSearchParams();
      if (status) query.set('status', status);
      if (pageSize) query.set('page_size', String(pageSize));
      if (nextToken) query.set('next_token', nextToken);
      return call('GET', `/webhooks/${id(webhookId)}/deliveries?${query}`);
    },
    attempts: (webhookId, deliveryId) =>
      call('GET', `/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/attempts`).then((r) => r.attempts ?? []),
    resend: (webhookId, deliveryId) => call('POST', `/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/resend`, {}),
    recover: (webhookId, since) => call('POST', `/webhooks/${id(webhookId)}/recover`, { since }),
    sendTest: (webhookId, eventType) => call('POST', `/webhooks/${id(webhookId)}/test`, eventType ? { event_type: eventType } : {}),
  };
}
