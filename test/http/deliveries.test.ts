import { decodeJwt } from 'jose';
import { describe, expect, test } from 'vitest';
import type { EmitInput, EventTypeDefinition, WebhooksOptions } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine as baseEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { serveHandler, startReceiver } from '../helpers/http.js';
import { bearerAuth, client, conforming, createBody } from './setup.js';

/**
 * The delivery operations over real HTTP: the log, attempts, resend, recover and test
 * events, against a real receiver, on a ManualClock engine whose back-off is one retry after 5 s
 * (so a delivery fails after two attempts). Every response is checked against the OpenAPI
 * document (setup.ts).
 */

const cleanups = useCleanups();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function setup(options: Partial<WebhooksOptions> = {}) {
  const engine = await baseEngine({ authorize: bearerAuth, backoff: { schedule: [5_000], jitter: 0 }, ...options });
  cleanups.push(() => engine.close());
  const handler = conforming(engine.hooks.handler);
  const server = await serveHandler(handler);
  cleanups.push(() => server.close());
  const api = client(handler, server.url);
  const createWebhook = async (body: Record<string, unknown>, env = 'env-a') => {
    const res = await api('POST', '/api/v1/webhooks', { body: createBody(body), env });
    expect(res.status).toBe(200);
    return res.json.webhook.id as string;
  };
  return { engine, hooks: engine.hooks, clock: engine.clock, api, createWebhook };
}

const emit = (hooks: Awaited<ReturnType<typeof setup>>['hooks'], type = 'user.created', environment = 'env-a') =>
  hooks.emit({ type, source: 'api', data: userData(), environment } as EmitInput);

describe('a flaky endpoint (500, then 200)', () => {
  test('the log shows the failed deliveries and their attempts; resend is another attempt with the same webhook-id; recover sends each failed one once', async () => {
    let healthy = true;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    cleanups.push(() => receiver.close());
    const { engine, hooks, clock, api, createWebhook } = await setup();
    await hooks.start();
    const id = await createWebhook({ endpoint: `${receiver.url}/flaky` });
    const base = `/api/v1/webhooks/${id}`;

    const [fine] = (await emit(hooks)).deliveryIds;
    await hooks.drain();
    healthy = false;
    const failing: string[] = [];
    for (let i = 0; i < 3; i++) {
      await clock.advance(1);
      failing.push(...(await emit(hooks)).deliveryIds);
    }
    await hooks.drain();
    await clock.advance(5_000); // the one retry, failing too: the back-off is spent
    await hooks.drain();
    expect(receiver.requests).toHaveLength(1 + 2 * 3);

    const failed = await api('GET', `${base}/deliveries?status=failed`);
    expect(failed.status).toBe(200);
    expect(failed.json.next_token).toBeNull();
    expect(failed.json.deliveries.map((d: { id: string }) => d.id)).toEqual([...failing].reverse()); // newest first
    for (const d of failed.json.deliveries) {
      expect(d).toEqual({
        id: d.id,
        event_id: expect.stringMatching(/^event_/),
        event_type: 'user.created',
        status: 'failed',
        attempt_count: 2,
        created_on: expect.stringMatching(ISO),
        next_attempt_on: null,
        last_attempt_on: expect.stringMatching(ISO),
        last_status_code: 500,
        last_error: expect.stringContaining('500'),
        subject: 'kp_0123456789abcdef',
        test: false,
      });
      const tries = (await api('GET', `${base}/deliveries/${d.id}/attempts`)).json.attempts;
      expect(tries.map((a: { started_on: string }) => a.started_on).at(-1)).toBe(d.last_attempt_on);
    }
    const all = await api('GET', `${base}/deliveries`);
    expect(all.json.deliveries.map((d: { id: string }) => d.id)).toEqual([...failing].reverse().concat(fine!));
    expect(all.json.deliveries[3]).toMatchObject({ status: 'delivered', attempt_count: 1, last_status_code: 200, last_error: null });

    const attempts = await api('GET', `${base}/deliveries/${failing[0]}/attempts`);
    expect(attempts.json.attempts).toHaveLength(2);
    for (const a of attempts.json.attempts) {
      expect(a).toEqual({
        id: expect.any(String),
        started_on: expect.stringMatching(ISO),
        duration_ms: expect.any(Number),
        status_code: 500,
        error_kind: 'status',
        error: expect.stringContaining('500'),
        response_excerpt: 'status 500',
        success: false,
      });
    }
    const [first, second] = attempts.json.attempts.map((a: { started_on: string }) => Date.parse(a.started_on));
    expect(second - first).toBe(5_000); // oldest first, the back-off between them

    // Resend: the same message again (same webhook-id), a fresh timestamp, a third attempt.
    healthy = true;
    const before = receiver.requests.length;
    const resent = await api('POST', `${base}/deliveries/${failing[0]}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.json).toEqual({
      code: 'DELIVERY_RESENT',
      message: 'Delivery queued to be sent again',
      delivery: expect.objectContaining({
        id: failing[0],
        status: 'pending',
        attempt_count: 2,
        next_attempt_on: new Date(clock.now()).toISOString(),
      }),
    });
    await hooks.drain();
    const sentAgain = receiver.requests.slice(before);
    expect(sentAgain.map((r) => r.headers['webhook-id'])).toEqual([failing[0]]);
    const copies = receiver.requests.filter((r) => r.headers['webhook-id'] === failing[0]);
    expect(copies).toHaveLength(3);
    const firstClaims = decodeJwt(copies[0]!.body);
    const { payload } = await engine.verify(copies[2]!.body);
    expect(payload.event_id).toBe(firstClaims.event_id);
    expect(payload.timestamp).not.toBe(firstClaims.timestamp);
    const third = await api('GET', `${base}/deliveries/${failing[0]}/attempts`);
    expect(third.json.attempts.map((a: { status_code: number; success: boolean }) => [a.status_code, a.success])).toEqual([
      [500, false],
      [500, false],
      [200, true],
    ]);

    // Recover: [since, until) is honoured; a second call while they are queued queues nothing.
    const beforeRecover = receiver.requests.length; // recovered deliveries go out at once, before the answer
    const creation = (d: string) => all.json.deliveries.find((x: { id: string }) => x.id === d).created_on;
    const firstPart = await api('POST', `${base}/recover`, { body: { since: '2026-01-01T00:00:00Z', until: creation(failing[2]!) } });
    expect(firstPart.json).toEqual({ code: 'DELIVERIES_RECOVERED', message: 'Failed deliveries queued to be sent again', recovered: 1 });
    // Two at once: the one left is queued by one of them only.
    const twice = await Promise.all([1, 2].map(() => api('POST', `${base}/recover`, { body: { since: '2026-01-01T00:00:00Z' } })));
    expect(twice.map((r) => r.json.recovered).sort()).toEqual([0, 1]);
    await hooks.drain();
    expect(
      receiver.requests
        .slice(beforeRecover)
        .map((r) => r.headers['webhook-id'] as string)
        .sort(),
    ).toEqual([failing[1], failing[2]].sort());
    expect((await api('POST', `${base}/recover`, { body: { since: '2026-01-01T00:00:00Z' } })).json.recovered).toBe(0);
    await hooks.drain();
    expect(receiver.requests).toHaveLength(beforeRecover + 2);
    expect((await api('GET', `${base}/deliveries?status=failed`)).json).toMatchObject({ deliveries: [], next_token: null });
    const delivered = await api('GET', `${base}/deliveries?status=delivered&page_size=100`);
    expect(delivered.json.deliveries).toHaveLength(4);
  });
});

test('test events of every type in the catalog reach only this webhook, with the type example as data, source admin, and verify against the JWKS', async () => {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const invoice = {
    code: 'billing.invoice_paid',
    name: 'Invoice paid',
    origin: 'acme',
    schema: { type: 'object', required: ['invoice_id'], properties: { invoice_id: { type: 'string' } } },
  } satisfies EventTypeDefinition;
  const { engine, hooks, api, createWebhook } = await setup({ eventTypes: [invoice] });
  await hooks.start();
  const types = hooks.eventTypes.list();
  expect(types.filter((t) => t.origin === 'kinde').length).toBeGreaterThanOrEqual(15);
  const id = await createWebhook({ endpoint: `${receiver.url}/tested`, event_types: ['user.deleted'] });
  // Subscribed to everything, in the same environment: a test event is not for it.
  await createWebhook({ endpoint: `${receiver.url}/other`, event_types: types.map((t) => t.code) });

  const sent = new Map<string, { event_id: string; delivery_id: string }>();
  for (const type of types) {
    const res = await api('POST', `/api/v1/webhooks/${id}/test`, { body: { event_type: type.code } });
    expect([type.code, res.status, res.json.code]).toEqual([type.code, 200, 'TEST_EVENT_SENT']);
    sent.set(res.json.delivery_id, res.json);
  }
  const byDefault = await api('POST', `/api/v1/webhooks/${id}/test`, { raw: '' }); // no body: the first subscribed type
  await hooks.drain();

  expect(receiver.requests.every((r) => r.path === '/tested')).toBe(true);
  expect(receiver.requests).toHaveLength(types.length + 1);
  const seen = new Set<string>();
  for (const request of receiver.requests) {
    const webhookId = String(request.headers['webhook-id']);
    const { payload, header } = await engine.verify(request.body); // remote JWKS over HTTP, RS256, issuer
    expect(header.alg).toBe('RS256');
    expect(payload.source).toBe('admin');
    if (webhookId === byDefault.json.delivery_id) {
      expect(payload.type).toBe('user.deleted');
      continue;
    }
    const entry = types.find((t) => t.code === payload.type)!;
    expect(payload.data, entry.code).toEqual({ ...entry.example, test: true }); // marked as a test, beside the example
    expect(payload.event_id).toBe(sent.get(webhookId)?.event_id);
    seen.add(entry.code);
  }
  expect([...seen].sort()).toEqual(types.map((t) => t.code).sort());
  expect(seen.has('billing.invoice_paid')).toBe(true);

  // Stored like any event, in the log like any delivery.
  const [one] = sent.values();
  const event = await api('GET', `/api/v1/events/${one!.event_id}`);
  expect(event.json.event).toMatchObject({ source: 'admin', event_id: one!.event_id });
  const log = await api('GET', `/api/v1/webhooks/${id}/deliveries?page_size=100`);
  expect(log.json.deliveries).toHaveLength(types.length + 1);
  expect(log.json.deliveries.every((d: { status: string }) => d.status === 'delivered')).toBe(true);
});

test('paging: 250 deliveries in pages of 100 (and of 7, filtered) are each visited exactly once while new ones are emitted during the walk', async () => {
  const { hooks, clock, api, createWebhook } = await setup();
  // Not started: the deliveries stay in the log as they are.
  const id = await createWebhook({ event_types: ['user.created', 'user.updated'] });
  const all: Array<{ id: string; type: string }> = [];
  const add = async (type: string) => all.push({ id: (await emit(hooks, type)).deliveryIds[0]!, type });
  for (let i = 0; i < 250; i++) {
    if (i % 10 === 0) await clock.advance(1); // runs of ten with one creation time: the id breaks the tie
    await add(i % 2 === 0 ? 'user.created' : 'user.updated');
  }
  const original = all.map((d) => d.id);

  const walk = async (query: string) => {
    const ids: string[] = [];
    const sizes: number[] = [];
    let token: string | null = null;
    let last: [string, string] | null = null;
    do {
      const path: string = `/api/v1/webhooks/${id}/deliveries?${query}${token ? `&next_token=${encodeURIComponent(token)}` : ''}`;
      const page = await api('GET', path);
      expect(page.status).toBe(200);
      for (const d of page.json.deliveries as Array<{ id: string; created_on: string }>) {
        if (last) expect(d.created_on < last[0] || (d.created_on === last[0] && d.id < last[1])).toBe(true); // newest first, strictly
        last = [d.created_on, d.id];
        ids.push(d.id);
      }
      sizes.push(page.json.deliveries.length);
      token = page.json.next_token;
      // New deliveries arrive during the walk: they are newer than every page still to come.
      await clock.advance(1);
      for (let i = 0; i < 5; i++) await add(i % 2 === 0 ? 'user.created' : 'user.updated');
    } while (token !== null);
    return { ids, sizes };
  };

  const full = await walk('page_size=100');
  expect(full.sizes).toEqual([100, 100, 50]);
  expect(full.ids).toHaveLength(250);
  expect(new Set(full.ids)).toEqual(new Set(original));

  const updated = all.filter((d) => d.type === 'user.updated').map((d) => d.id); // what exists when the walk starts
  const filtered = await walk('page_size=7&event_type=user.updated&status=pending');
  expect(filtered.ids).toHaveLength(125 + 2 * 3);
  expect(new Set(filtered.ids)).toEqual(new Set(updated));

  // A walk from the start now sees the ones that arrived during the two walks, newest first.
  const now = all.map((d) => d.id);
  const again = await walk('page_size=100');
  expect(again.ids).toHaveLength(now.length);
  expect(new Set(again.ids)).toEqual(new Set(now));
  expect(again.ids.slice(-250)).toEqual(full.ids);
});

test('the default page size is 25, over HTTP (no page_size) and in process (no limit): 30 deliveries are a page of 25 with a next_token, then 5', async () => {
  const { hooks, clock, api, createWebhook } = await setup();
  // Not started: the deliveries stay in the log as they are.
  const id = await createWebhook({ event_types: ['user.created'] });
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    await clock.advance(1);
    ids.push((await emit(hooks)).deliveryIds[0]!);
  }
  const newestFirst = [...ids].reverse();

  const first = await api('GET', `/api/v1/webhooks/${id}/deliveries`);
  expect(first.status).toBe(200);
  expect(first.json.deliveries.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(0, 25));
  expect(first.json.next_token).toEqual(expect.any(String));
  const rest = await api('GET', `/api/v1/webhooks/${id}/deliveries?next_token=${encodeURIComponent(first.json.next_token)}`);
  expect(rest.json.deliveries.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(25));
  expect(rest.json.next_token).toBeNull();

  const page = await hooks.deliveries.list({ webhookId: id, environment: 'env-a' });
  expect(page.deliveries.map((d) => d.id)).toEqual(newestFirst.slice(0, 25));
  expect(page.nextCursor).toEqual(expect.any(String));
  const next = await hooks.deliveries.list({ webhookId: id, environment: 'env-a', cursor: page.nextCursor });
  expect(next.deliveries.map((d) => d.id)).toEqual(newestFirst.slice(25));
  expect(next.nextCursor).toBeNull();
});

test("isolation: another environment's webhook and delivery ids, and another webhook's delivery, answer exactly as unknown ids do", async () => {
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const { hooks, api, createWebhook } = await setup();
  const a = await createWebhook({ endpoint: `${receiver.url}/a` });
  const a2 = await createWebhook({ endpoint: `${receiver.url}/a2` });
  await createWebhook({ endpoint: `${receiver.url}/b` }, 'env-b');
  expect((await emit(hooks)).deliveryIds).toHaveLength(2); // to a and a2
  const mine = (await hooks.deliveries.list({ webhookId: a, environment: 'env-a' })).deliveries[0]!;

  const requests: Array<[string, string, string, Record<string, unknown> | undefined]> = [
    ['env-b', 'GET', `/api/v1/webhooks/${a}/deliveries`, undefined],
    ['env-b', 'GET', `/api/v1/webhooks/${a}/deliveries?status=failed&page_size=5`, undefined],
    ['env-b', 'GET', `/api/v1/webhooks/${a}/deliveries/${mine.id}/attempts`, undefined],
    ['env-b', 'POST', `/api/v1/webhooks/${a}/deliveries/${mine.id}/resend`, undefined],
    ['env-b', 'POST', `/api/v1/webhooks/${a}/recover`, { since: '2025-01-01T00:00:00Z' }],
    ['env-b', 'POST', `/api/v1/webhooks/${a}/test`, undefined],
    // Same environment, but the delivery is not this webhook's.
    ['env-a', 'GET', `/api/v1/webhooks/${a2}/deliveries/${mine.id}/attempts`, undefined],
    ['env-a', 'POST', `/api/v1/webhooks/${a2}/deliveries/${mine.id}/resend`, undefined],
  ];
  const answer = async ([env, method, path, body]: (typeof requests)[number]) => {
    const res = await api(method, path, body ? { env, body } : { env });
    return `${res.status} ${res.text}`;
  };
  const foreign = [];
  for (const r of requests) foreign.push(await answer(r));
  expect(foreign.map((f) => f.slice(0, 3))).toEqual(requests.map(() => '404'));
  expect(foreign.map((f) => JSON.parse(f.slice(4)).errors[0].code)).toEqual([
    'WEBHOOK_NOT_FOUND',
    'WEBHOOK_NOT_FOUND',
    'DELIVERY_NOT_FOUND',
    'DELIVERY_NOT_FOUND',
    'WEBHOOK_NOT_FOUND',
    'WEBHOOK_NOT_FOUND',
    'DELIVERY_NOT_FOUND',
    'DELIVERY_NOT_FOUND',
  ]);
  // None of it touched anything.
  expect(await hooks.deliveries.get(mine.id, { environment: 'env-a' })).toEqual(mine);
  expect((await hooks.deliveries.list({ webhookId: a, environment: 'env-a' })).deliveries).toHaveLength(1);

  // Now make the ids unknown everywhere: the answers must not change by a byte.
  await hooks.webhooks.delete(a, { environment: 'env-a' });
  const unknown = [];
  for (const r of requests) unknown.push(await answer(r));
  expect(unknown).toEqual(foreign);
  // And the owner's own environment now gets that same answer.
  const own = [];
  for (const r of requests.slice(0, 6)) own.push(await answer(['env-a', r[1], r[2], r[3]]));
  expect(own).toEqual(foreign.slice(0, 6));
});

describe('bad parameters: 400 with the errors envelope and a code naming the parameter', () => {
  const token = (value: unknown) => `1.${Buffer.from(JSON.stringify(value)).toString('base64url')}`;
  const LOG: Array<[string, string]> = [
    ['page_size=0', 'INVALID_PAGE_SIZE'],
    ['page_size=101', 'INVALID_PAGE_SIZE'],
    ['page_size=-1', 'INVALID_PAGE_SIZE'],
    ['page_size=2.5', 'INVALID_PAGE_SIZE'],
    ['page_size=1e2', 'INVALID_PAGE_SIZE'],
    ['page_size=ten', 'INVALID_PAGE_SIZE'],
    ['page_size=99999999999', 'INVALID_PAGE_SIZE'],
    ['page_size=5&page_size=6', 'INVALID_PAGE_SIZE'],
    ['next_token=abc', 'INVALID_NEXT_TOKEN'],
    ['next_token=1.', 'INVALID_NEXT_TOKEN'],
    ['next_token=2.WzEsIm1zZ18xIl0', 'INVALID_NEXT_TOKEN'],
    [`next_token=${token([1, 'webhook_0123456789abcdef0123456789abcdef'])}`, 'INVALID_NEXT_TOKEN'],
    [`next_token=${token([-1, `msg_${'0'.repeat(32)}`])}`, 'INVALID_NEXT_TOKEN'],
    [`next_token=${token({ createdAt: 1 })}`, 'INVALID_NEXT_TOKEN'],
    ['status=nope', 'INVALID_STATUS'],
    ['status=FAILED', 'INVALID_STATUS'],
    ['status=failed&status=pending', 'INVALID_STATUS'],
    ['event_type=nope.nothing', 'INVALID_EVENT_TYPE'],
    ['event_type=user.created&event_type=user.updated', 'INVALID_EVENT_TYPE'],
    ['pagesize=10', 'UNKNOWN_PARAMETER'],
    ['limit=10', 'UNKNOWN_PARAMETER'],
    ['cursor=x', 'UNKNOWN_PARAMETER'],
  ];
  const RECOVER: Array<[unknown, string]> = [
    [{}, 'INVALID_SINCE'],
    [{ since: null }, 'INVALID_SINCE'],
    [{ since: 1767225600000 }, 'INVALID_SINCE'],
    [{ since: '2026-01-01' }, 'INVALID_SINCE'],
    [{ since: '2026-01-01T00:00:00' }, 'INVALID_SINCE'], // no offset: local time, refused
    [{ since: '2026-01-01 00:00:00Z' }, 'INVALID_SINCE'],
    [{ since: '2026-02-30T00:00:00Z' }, 'INVALID_SINCE'],
    [{ since: '2026-01-01T24:00:00Z' }, 'INVALID_SINCE'],
    [{ since: 'yesterday' }, 'INVALID_SINCE'],
    [{ since: '2026-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'INVALID_SINCE'], // until must be after since
    [{ since: '2026-01-02T00:00:00Z', until: '2026-01-01T23:59:59+00:00' }, 'INVALID_SINCE'],
    [{ since: '2026-01-01T00:00:00Z', until: 'now' }, 'INVALID_UNTIL'],
    [{ since: '2026-01-01T00:00:00Z', until: 1 }, 'INVALID_UNTIL'],
    [{ since: '2026-01-01T00:00:00Z', sinse: 'x' }, 'UNKNOWN_FIELD'],
  ];
  const TEST: Array<[unknown, string]> = [
    [{ event_type: 'nope.nothing' }, 'INVALID_EVENT_TYPE'],
    [{ event_type: 5 }, 'INVALID_EVENT_TYPE'],
    [{ event_type: ['user.created'] }, 'INVALID_EVENT_TYPE'],
    [{ type: 'user.created' }, 'UNKNOWN_FIELD'],
  ];

  test('every one, on the log, recover, test and resend; nothing is queued or sent', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { hooks, api, createWebhook } = await setup();
    await hooks.start();
    const id = await createWebhook({ endpoint: `${receiver.url}/in` });
    const [delivery] = (await emit(hooks)).deliveryIds;
    await hooks.drain();
    const problems: string[] = [];
    const expectRefused = (what: string, res: { status: number; json: any }, code: string, name: string) => {
      const error = res.json?.errors?.[0];
      if (res.status !== 400 || error?.code !== code) problems.push(`${what}: ${res.status} ${JSON.stringify(res.json)} (wanted ${code})`);
      // The message says what is wrong with which parameter (an unknown event type is named by its value).
      else if (!String(error.message).includes(name))
        problems.push(`${what}: message ${JSON.stringify(error.message)} does not name ${name}`);
    };
    for (const [query, code] of LOG) {
      const res = await api('GET', `/api/v1/webhooks/${id}/deliveries?${query}`);
      const name = query.startsWith('event_type=nope') ? 'nope.nothing' : query.split('=')[0]!;
      expectRefused(query, res, code, name);
    }
    for (const [body, code] of RECOVER) {
      const name = code === 'UNKNOWN_FIELD' ? 'sinse' : code === 'INVALID_UNTIL' ? 'until' : 'since';
      expectRefused(`recover ${JSON.stringify(body)}`, await api('POST', `/api/v1/webhooks/${id}/recover`, { body }), code, name);
    }
    for (const [body, code] of TEST) {
      const name =
        code === 'UNKNOWN_FIELD' ? 'type' : (body as { event_type: unknown }).event_type === 'nope.nothing' ? 'nope.nothing' : 'event_type';
      expectRefused(`test ${JSON.stringify(body)}`, await api('POST', `/api/v1/webhooks/${id}/test`, { body }), code, name);
    }
    expectRefused(
      'resend with a field',
      await api('POST', `/api/v1/webhooks/${id}/deliveries/${delivery}/resend`, { body: { now: true } }),
      'UNKNOWN_FIELD',
      'now',
    );
    expect(problems).toEqual([]);

    await hooks.drain();
    expect(receiver.requests).toHaveLength(1);
    expect((await hooks.deliveries.list({ webhookId: id, environment: 'env-a' })).deliveries).toHaveLength(1);
    // Empty values are the same as none; an offset other than Z and fractions are fine.
    expect((await api('GET', `/api/v1/webhooks/${id}/deliveries?status=&event_type=&page_size=&next_token=`)).json.deliveries).toHaveLength(
      1,
    );
    const ok = await api('POST', `/api/v1/webhooks/${id}/recover`, { body: { since: '2025-12-31T22:00:00.5-01:00', until: null } });
    expect(ok.json).toMatchObject({ recovered: 0 });
  });
});

test('a disabled webhook: resend, recover and test answer 409 WEBHOOK_DISABLED and send nothing; enabled again, they work', async () => {
  let healthy = false;
  const receiver = await startReceiver(() => (healthy ? 200 : 500));
  cleanups.push(() => receiver.close());
  const { hooks, clock, api, createWebhook } = await setup();
  await hooks.start();
  const id = await createWebhook({ endpoint: `${receiver.url}/in` });
  const [delivery] = (await emit(hooks)).deliveryIds;
  await hooks.drain();
  await clock.advance(5_000);
  await hooks.drain();
  expect((await hooks.deliveries.get(delivery!, { environment: 'env-a' })).status).toBe('failed');
  expect((await api('POST', `/api/v1/webhooks/${id}/disable`)).status).toBe(200);
  const sent = receiver.requests.length;

  const calls: Array<[string, Record<string, unknown> | undefined]> = [
    [`/api/v1/webhooks/${id}/deliveries/${delivery}/resend`, undefined],
    [`/api/v1/webhooks/${id}/recover`, { since: '2026-01-01T00:00:00Z' }],
    [`/api/v1/webhooks/${id}/test`, undefined],
    [`/api/v1/webhooks/${id}/test`, { event_type: 'user.deleted' }],
  ];
  for (const [path, body] of calls) {
    const res = await api('POST', path, body ? { body } : {});
    expect([path, res.status, res.json.errors]).toEqual([
      path,
      409,
      [{ code: 'WEBHOOK_DISABLED', message: expect.stringContaining('is disabled; enable it first') }],
    ]);
  }
  await clock.advance(60_000);
  await hooks.drain();
  expect(receiver.requests).toHaveLength(sent);
  expect((await hooks.deliveries.list({ webhookId: id, environment: 'env-a' })).deliveries).toHaveLength(1); // no test event stored
  expect((await hooks.deliveries.get(delivery!, { environment: 'env-a' })).status).toBe('failed');

  healthy = true;
  expect((await api('POST', `/api/v1/webhooks/${id}/enable`)).status).toBe(200);
  for (const [path, body] of calls.slice(0, 3)) expect((await api('POST', path, body ? { body } : {})).status).toBe(200);
  await hooks.drain();
  expect(receiver.requests.length).toBe(sent + 2); // the resent delivery (recover found it already queued) and the test event
});

describe('send waiting now (the endpoint was fixed)', () => {
  test('what waits is counted with the date of the disable; sending what waits sends it now, once each, and a disabled webhook is refused', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    cleanups.push(() => receiver.close());
    const { hooks, clock, api, createWebhook } = await setup({ backoff: { schedule: [3_600_000, 3_600_000], jitter: 0 } });
    await hooks.start();
    const id = await createWebhook({ endpoint: `${receiver.url}/fixed-later` });
    const base = `/api/v1/webhooks/${id}`;
    const started = clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(...(await emit(hooks)).deliveryIds);
    await hooks.drain();
    expect(receiver.requests).toHaveLength(5);

    const waiting = await api('GET', `${base}/waiting`);
    expect(waiting.status).toBe(200);
    const webhook = (await api('GET', base)).json.webhook;
    expect(waiting.json.waiting).toEqual({
      pending: 5,
      held: 0,
      sendable: 5,
      disables_on: new Date(Date.parse(webhook.failing_since) + 72 * 3600_000).toISOString(),
    });
    expect(Date.parse(webhook.failing_since)).toBe(started);

    healthy = true;
    await clock.advance(60_000); // fixed a minute later
    const sent = await api('POST', `${base}/send_waiting`, { body: {} });
    expect(sent.json).toEqual({ code: 'WAITING_SENT', message: 'Waiting deliveries queued to be sent now', sent: 5 });
    await hooks.drain();
    // Each sent once more, with its own webhook-id; nothing waits; a second send finds nothing.
    expect(
      receiver.requests
        .slice(5)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual([...ids].sort());
    expect((await api('GET', `${base}/waiting`)).json.waiting).toEqual({ pending: 0, held: 0, sendable: 0, disables_on: null });
    expect((await api('POST', `${base}/send_waiting`, { body: {} })).json.sent).toBe(0);

    await api('POST', `${base}/disable`, { body: {} });
    const refused = await api('POST', `${base}/send_waiting`, { body: {} });
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].code).toBe('WEBHOOK_DISABLED');
    expect((await api('POST', `${base}/send_waiting`, { body: { now: true } })).status).toBe(400);
    expect((await api('GET', '/api/v1/webhooks/webhook_0123456789abcdef0123456789abcdef/waiting')).status).toBe(404);
  });
});

describe('what was sent about a user (GET /api/v1/events?subject=)', () => {
  test("a user's events by id or email, across webhooks, with each delivery's outcome; pages; the log names subjects and test events", async () => {
    const receiver = await startReceiver(() => 200);
    cleanups.push(() => receiver.close());
    const { hooks, clock, api, createWebhook } = await setup();
    await hooks.start();
    const crm = await createWebhook({ endpoint: `${receiver.url}/crm` });
    const billing = await createWebhook({ endpoint: `${receiver.url}/billing` });
    const other = await createWebhook({ endpoint: `${receiver.url}/other` }, 'env-b');
    const ada = userData({ id: 'kp_ada', email: 'Ada.Lovelace@Example.com' });
    const bob = userData({ id: 'kp_bob', email: 'bob@example.com' });
    for (const data of [ada, bob, ada]) {
      await hooks.emit({ type: 'user.created', source: 'api', data, environment: 'env-a' } as EmitInput);
      await clock.advance(1);
    }
    await hooks.emit({ type: 'user.created', source: 'api', data: ada, environment: 'env-b' } as EmitInput);
    const test = await api('POST', `/api/v1/webhooks/${crm}/test`, { body: {} });
    expect(test.status).toBe(200);
    await hooks.drain();

    const byId = await api('GET', '/api/v1/events?subject=kp_ada');
    expect(byId.status).toBe(200);
    expect(byId.json.events).toHaveLength(2);
    for (const e of byId.json.events) {
      expect(e).toMatchObject({ type: 'user.created', subject: 'kp_ada', test: false, source: 'api' });
      expect(e.created_on).toMatch(ISO);
      expect(e.deliveries.map((d: { webhook_id: string }) => d.webhook_id).sort()).toEqual([crm, billing].sort());
      for (const d of e.deliveries) expect(d).toMatchObject({ status: 'delivered', attempt_count: 1, last_status_code: 200 });
    }
    expect(byId.json.events[0].created_on > byId.json.events[1].created_on).toBe(true);
    expect(byId.json.next_token).toBeNull();
    // the same by email, in another case; another environment's webhook is never in it
    const byEmail = await api('GET', `/api/v1/events?subject=${encodeURIComponent('ADA.LOVELACE@example.com')}`);
    expect(byEmail.json.events.map((e: { event_id: string }) => e.event_id)).toEqual(
      byId.json.events.map((e: { event_id: string }) => e.event_id),
    );
    expect(JSON.stringify(byEmail.json)).not.toContain(other);

    // pages of one
    const first = await api('GET', '/api/v1/events?subject=kp_ada&page_size=1');
    expect(first.json.events).toHaveLength(1);
    const second = await api('GET', `/api/v1/events?subject=kp_ada&page_size=1&next_token=${first.json.next_token}`);
    expect(second.json.events[0].event_id).toBe(byId.json.events[1].event_id);
    expect(second.json.next_token).toBeNull();

    // the log: each row's subject, and the test event marked
    const log = await api('GET', `/api/v1/webhooks/${crm}/deliveries`);
    const rows = log.json.deliveries as Array<{ subject: string | null; test: boolean }>;
    expect(rows).toHaveLength(4);
    expect(rows.filter((r) => r.test)).toHaveLength(1);
    expect(rows.filter((r) => !r.test).map((r) => r.subject)).toEqual(['kp_ada', 'kp_bob', 'kp_ada']);

    // bad input: 400 naming the parameter
    for (const [query, code] of [
      ['', 'INVALID_SUBJECT'],
      ['subject=', 'INVALID_SUBJECT'],
      [`subject=${'x'.repeat(256)}`, 'INVALID_SUBJECT'],
      ['subject=kp_ada&page_size=0', 'INVALID_PAGE_SIZE'],
      ['subject=kp_ada&next_token=nope', 'INVALID_NEXT_TOKEN'],
      ['subject=kp_ada&subject=kp_bob', 'INVALID_SUBJECT'],
      ['subject=kp_ada&q=1', 'UNKNOWN_PARAMETER'],
    ]) {
      const res = await api('GET', `/api/v1/events?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.errors[0].code, query).toBe(code);
    }
    // a log page token is not a search's
    const logToken = (await api('GET', `/api/v1/webhooks/${crm}/deliveries?page_size=1`)).json.next_token;
    expect((await api('GET', `/api/v1/events?subject=kp_ada&next_token=${logToken}`)).json.errors[0].code).toBe('INVALID_NEXT_TOKEN');
  });
});
