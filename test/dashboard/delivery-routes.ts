import { WebhooksError } from '../../src/errors.js';
import type { Webhooks } from '../../src/index.js';
import type { AttemptRecord, DeliveryRecord } from '../../src/model.js';

/**
 * TEMPORARY, for tests only: issue 11's five delivery routes (the log, attempts, resend, recover,
 * test) in exactly the wire shapes the lead fixed for them, over the engine's real in-process
 * functions, until main's management API serves them itself. Delete this file, and its one use in
 * site.ts, when it does: the browser tests then run against the real routes unchanged.
 */
type Handler = (request: Request) => Promise<Response>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const error = (status: number, code: string, message: string) => json(status, { errors: [{ code, message }] });

const wireDelivery = (d: DeliveryRecord) => ({
  id: d.id,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  attempt_count: d.attemptCount,
  created_on: iso(d.createdAt),
  next_attempt_on: iso(d.nextAttemptAt),
  last_attempt_on: iso(d.lastAttemptAt),
  last_status_code: d.lastResult && /^\d+$/.test(d.lastResult) ? Number(d.lastResult) : null,
  last_error: d.lastError,
});
const wireAttempt = (a: AttemptRecord) => ({
  id: a.id,
  started_on: iso(a.startedAt),
  duration_ms: a.durationMs,
  status_code: a.statusCode,
  error_kind: a.errorKind,
  error: a.errorMessage,
  response_excerpt: a.responseExcerpt,
  success: a.success,
});

export function withDeliveryRoutes(hooks: Webhooks, api: Handler, authorize: (r: Request) => { environment: string } | null): Handler {
  return async (request) => {
    const url = new URL(request.url);
    const m = /\/api\/v1\/webhooks\/([^/]+)\/(deliveries(?:\/([^/]+)\/(attempts|resend))?|recover|test)$/.exec(url.pathname);
    if (!m) return api(request);
    const auth = authorize(request);
    if (!auth) return error(403, 'INVALID_CREDENTIALS', 'the request is not authorized for this API');
    const { environment } = auth;
    const webhookId = decodeURIComponent(m[1]!);
    const [, , what, deliveryId, action] = m;
    try {
      await hooks.webhooks.get(webhookId, { environment });
      if (what === 'deliveries' && request.method === 'GET') {
        const q = url.searchParams;
        const page = await hooks.deliveries.list({
          environment,
          webhookId,
          ...(q.get('status') ? { status: q.get('status') as DeliveryRecord['status'] } : {}),
          ...(q.get('page_size') ? { limit: Number(q.get('page_size')) } : {}),
          cursor: q.get('next_token'),
        });
        return json(200, { code: 'OK', message: 'Success', deliveries: page.deliveries.map(wireDelivery), next_token: page.nextCursor });
      }
      if (deliveryId && (await hooks.deliveries.get(decodeURIComponent(deliveryId), { environment })).webhookId !== webhookId) {
        return error(404, 'DELIVERY_NOT_FOUND', 'no such delivery');
      }
      if (action === 'attempts' && request.method === 'GET') {
        const attempts = await hooks.deliveries.attempts(decodeURIComponent(deliveryId!), { environment });
        return json(200, { code: 'OK', message: 'Success', attempts: attempts.map(wireAttempt) });
      }
      if (action === 'resend' && request.method === 'POST') {
        const delivery = await hooks.deliveries.resend(decodeURIComponent(deliveryId!), { environment });
        return json(200, { code: 'DELIVERY_RESENT', message: 'Delivery queued', delivery: wireDelivery(delivery) });
      }
      const text = request.method === 'POST' ? await request.text() : '';
      const body = text ? JSON.parse(text) : {};
      if (what === 'recover' && request.method === 'POST') {
        const { recovered } = await hooks.webhooks.recover(webhookId, { environment, since: Date.parse(body.since) });
        return json(200, { code: 'WEBHOOK_RECOVERED', message: 'Deliveries queued', recovered });
      }
      if (what === 'test' && request.method === 'POST') {
        const sent = await hooks.webhooks.test(webhookId, { environment, ...(body.event_type ? { eventType: body.event_type } : {}) });
        return json(200, { code: 'TEST_EVENT_SENT', message: 'Test event sent', event_id: sent.eventId, delivery_id: sent.deliveryId });
      }
      return error(405, 'METHOD_NOT_ALLOWED', 'not allowed');
    } catch (e) {
      if (e instanceof WebhooksError && e.code === 'ERR_NOT_FOUND') return error(404, 'WEBHOOK_NOT_FOUND', e.message);
      if (e instanceof WebhooksError && e.code === 'ERR_WEBHOOK_DISABLED') return error(409, 'WEBHOOK_DISABLED', e.message);
      if (e instanceof WebhooksError) return error(400, 'INVALID_REQUEST', e.message);
      throw e;
    }
  };
}
