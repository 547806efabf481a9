import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/http/routes.js';
import { ManualClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { startReceiver } from '../helpers/http.js';
import { checked, createBody, engineAndClient, makeHttpEngine, type TestEngine } from './setup.js';

// This file alone answers every documented operation successfully at least once.
afterAll(() => {
  const seen = new Set(checked.map((c) => c.key));
  const wanted = [...ROUTES.map((r) => `${r.method} ${r.path} 200`), 'GET /.well-known/jwks 200', 'GET /api/v1/openapi.json 200'];
  expect(wanted.filter((k) => !seen.has(k))).toEqual([]);
});

/**
 * The management API route by route, each test run twice: with `Request` objects handed to the
 * handler, and over real HTTP on 127.0.0.1. Every response is checked against the OpenAPI
 * document (see http-setup.ts).
 */

const cleanups = useCleanups();

const setup = (mode: 'direct' | 'http', options: Parameters<typeof makeHttpEngine>[0] = {}) => engineAndClient(mode, cleanups, options);

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe.each(['direct', 'http'] as const)('management routes (%s)', (mode) => {
  test('create, list, get, update, delete: Kinde shapes and codes', async () => {
    const { api } = await setup(mode);
    const created = await api('POST', '/api/v1/webhooks', {
      body: createBody({ description: 'to the CRM', endpoint: 'https://CRM.example.com/hooks' }),
    });
    expect(created.status).toBe(200);
    expect(created.json).toEqual({
      code: 'WEBHOOK_CREATED',
      message: 'Webhook created',
      webhook: { id: expect.stringMatching(/^webhook_/), endpoint: 'https://crm.example.com/hooks' },
    });
    const id = created.json.webhook.id as string;

    const list = await api('GET', '/api/v1/webhooks');
    expect(list.status).toBe(200);
    expect(list.json.code).toBe('OK');
    expect(list.json.webhooks).toEqual([
      {
        id,
        name: 'CRM sync',
        endpoint: 'https://crm.example.com/hooks',
        description: 'to the CRM',
        event_types: ['user.created'],
        created_on: expect.stringMatching(ISO),
        status: 'enabled',
        disabled_reason: null,
        disabled_on: null,
        failing_since: null,
        last_error: null,
        updated_on: expect.stringMatching(ISO),
        circuit: 'closed',
        headers: {},
        timeout_ms: null,
        rate_limit_per_second: null,
        format: 'jwt',
        signing: null,
        auth: null,
        ordering: 'none',
      },
    ]);

    const patched = await api('PATCH', `/api/v1/webhooks/${id}`, {
      body: { name: 'Renamed', event_types: ['user.updated', 'user.deleted'], description: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toEqual({ code: 'WEBHOOK_UPDATED', message: 'Webhook updated', webhook: { id } });
    // Extension: the endpoint may move.
    expect((await api('PATCH', `/api/v1/webhooks/${id}`, { body: { endpoint: 'https://new.example.com/in' } })).status).toBe(200);

    const got = await api('GET', `/api/v1/webhooks/${id}`);
    expect(got.status).toBe(200);
    expect(got.json.webhook).toMatchObject({
      id,
      name: 'Renamed',
      description: null,
      event_types: ['user.updated', 'user.deleted'],
      endpoint: 'https://new.example.com/in',
    });

    const deleted = await api('DELETE', `/api/v1/webhooks/${id}`);
    expect(deleted.json).toEqual({ code: 'WEBHOOK_DELETED', message: 'Webhook deleted' });
    for (const [method, path] of [
      ['GET', `/api/v1/webhooks/${id}`],
      ['DELETE', `/api/v1/webhooks/${id}`],
      ['PATCH', `/api/v1/webhooks/${id}`],
    ] as const) {
      const gone = await api(method, path, method === 'PATCH' ? { body: { name: 'x' } } : {});
      expect(gone.status).toBe(404);
      expect(gone.json.errors[0].code).toBe('WEBHOOK_NOT_FOUND');
    }
    expect((await api('GET', '/api/v1/webhooks')).json.webhooks).toEqual([]);
  });

  test('disable and re-enable (extension): status and reason are shown', async () => {
    const { api } = await setup(mode);
    const id = (await api('POST', '/api/v1/webhooks', { body: createBody() })).json.webhook.id;
    const disabled = await api('POST', `/api/v1/webhooks/${id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.json).toMatchObject({
      code: 'WEBHOOK_DISABLED',
      webhook: { id, status: 'disabled', disabled_reason: 'manual', disabled_on: expect.stringMatching(ISO) },
    });
    expect((await api('GET', '/api/v1/webhooks')).json.webhooks[0]).toMatchObject({ status: 'disabled', disabled_reason: 'manual' });

    const enabled = await api('POST', `/api/v1/webhooks/${id}/enable`, { body: { resume_held: false } });
    expect(enabled.json).toMatchObject({
      code: 'WEBHOOK_ENABLED',
      webhook: { id, status: 'enabled', disabled_reason: null, disabled_on: null },
    });
    // No body at all is fine for these action routes.
    expect((await api('POST', `/api/v1/webhooks/${id}/disable`, { raw: '' })).status).toBe(200);
    expect((await api('POST', `/api/v1/webhooks/${id}/enable`)).json.webhook.status).toBe('enabled');
    const bad = await api('POST', `/api/v1/webhooks/${id}/enable`, { body: { resume_held: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0]).toEqual({ code: 'INVALID_RESUME_HELD', message: 'resume_held must be a boolean' });
    expect((await api('POST', `/api/v1/webhooks/${id}/disable`, { body: { reason: 'x' } })).json.errors[0].code).toBe('UNKNOWN_FIELD');
    expect((await api('POST', '/api/v1/webhooks/webhook_nope/enable')).status).toBe(404);
  });

  test('GET /api/v1/events/{event_id}: type, source, event_id, timestamp (the event time), data', async () => {
    const { engine, api } = await setup(mode);
    const data = { user: { id: 'kp_1' } };
    const event = await engine.hooks.emit({
      type: 'user.deleted',
      source: 'admin',
      data,
      eventTimestamp: Date.UTC(2024, 0, 2, 3, 4, 5, 6),
      environment: 'env-a',
    });
    const res = await api('GET', `/api/v1/events/${event.id}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      code: 'OK',
      message: 'Success',
      event: { type: 'user.deleted', source: 'admin', event_id: event.id, timestamp: '2024-01-02T03:04:05.006Z', data },
    });
    const missing = await api('GET', '/api/v1/events/event_0000');
    expect(missing.status).toBe(404);
    expect(missing.json.errors[0].code).toBe('EVENT_NOT_FOUND');
  });

  test('GET /api/v1/verification: the issuer and JWKS URL a receiver verifies with', async () => {
    const { engine, api } = await setup(mode);
    const res = await api('GET', '/api/v1/verification');
    expect(res.status).toBe(200);
    const { issuer, jwksUrl } = engine.hooks.verification.get({ environment: 'env-a' });
    expect(res.json).toMatchObject({ code: 'OK', issuer, jwks_url: jwksUrl });
    expect(res.json.jwks_url).toBe(`${issuer.replace(/\/+$/, '')}/.well-known/jwks`);
  });

  test('GET /api/v1/event_types: id, code, name, origin, schema, and our sample data', async () => {
    const { engine, api } = await setup(mode);
    const res = await api('GET', '/api/v1/event_types');
    expect(res.status).toBe(200);
    expect(res.json.event_types).toHaveLength(engine.hooks.eventTypes.list().length);
    expect(res.json.event_types.find((t: { code: string }) => t.code === 'user.created')).toEqual({
      id: 'evtype_user_created',
      code: 'user.created',
      name: expect.any(String),
      origin: 'kinde',
      schema: expect.objectContaining({ type: 'object' }),
      example: expect.objectContaining({ user: expect.any(Object) }),
      subject: '/user/id',
    });
  });

  test('routing: prefixes and trailing slashes work; unknown routes 404; wrong methods 405 with Allow', async () => {
    const { api } = await setup(mode);
    expect((await api('GET', '/auth/api/v1/webhooks')).status).toBe(200);
    expect((await api('GET', '/a/b/api/v1/event_types/')).status).toBe(200);
    expect((await api('GET', '/api/v1/api/v1/webhooks')).status).toBe(200); // a prefix may itself contain /api/v1
    for (const path of [
      '/',
      '/api/v1',
      '/api/v1/nope',
      '/api/v2/webhooks',
      '/api/v1/webhooks/a/b',
      '/api/v1/eventz',
      '/api/v1/webhooks/x/enable/y',
      '//api/v1/webhooks', // an empty segment names nothing (it was folded into a prefix of `/`)
      '/auth//api/v1/webhooks',
      '/api//v1/webhooks',
      '/api/v1//webhooks',
      '/api/v1/webhooks//',
      '//.well-known/jwks',
      '//api/v1/openapi.json',
    ]) {
      const res = await api('GET', path);
      expect([path, res.status, res.json.errors[0].code]).toEqual([path, 404, 'ROUTE_NOT_FOUND']);
    }
    const cases = [
      ['PUT', '/api/v1/webhooks', 'GET, POST'],
      ['POST', '/api/v1/event_types', 'GET'],
      ['GET', '/api/v1/webhooks/w/enable', 'POST'],
      ['POST', '/api/v1/webhooks/w', 'GET, PATCH, DELETE'],
      ['DELETE', '/.well-known/jwks', 'GET, HEAD'],
      ['POST', '/api/v1/openapi.json', 'GET'],
    ] as const;
    for (const [method, path, allow] of cases) {
      const res = await api(method, path);
      expect([method, path, res.status, res.headers.get('allow'), res.json.errors[0].code]).toEqual([
        method,
        path,
        405,
        allow,
        'METHOD_NOT_ALLOWED',
      ]);
    }
  });

  test('the JWKS is still served, publicly', async () => {
    const { api } = await setup(mode);
    const res = await api('GET', '/auth/.well-known/jwks', { env: null });
    expect(res.status).toBe(200);
    expect(res.json.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
  });

  test('plan cap: creating past limits.maxWebhooks is refused with WEBHOOK_LIMIT_REACHED; other environments unaffected', async () => {
    const { api } = await setup(mode, { limits: { maxWebhooks: (env) => (env === 'env-a' ? 2 : 5) } });
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push((await api('POST', '/api/v1/webhooks', { body: createBody() })).json.webhook.id);
    const refused = await api('POST', '/api/v1/webhooks', { body: createBody() });
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual([{ code: 'WEBHOOK_LIMIT_REACHED', message: expect.stringContaining('maximum of 2 webhooks') }]);
    expect((await api('GET', '/api/v1/webhooks')).json.webhooks).toHaveLength(2);
    expect((await api('POST', '/api/v1/webhooks', { env: 'env-b', body: createBody() })).status).toBe(200);
    await api('DELETE', `/api/v1/webhooks/${ids[0]}`);
    expect((await api('POST', '/api/v1/webhooks', { body: createBody() })).status).toBe(200);
  });

  test('signing secret (extension): standard-webhooks format, the reveal, the rotation; auth masked; 400s name the field', async () => {
    const { api } = await setup(mode, { secretsKey: randomBytes(32).toString('base64') });
    const created = await api('POST', '/api/v1/webhooks', {
      body: createBody({
        format: 'standard-webhooks',
        asymmetric: true,
        auth: {
          type: 'oauth2_client_credentials',
          token_url: 'https://idp.example.com/token',
          client_id: 'c1',
          client_secret: 'cs-wire-secret',
        },
      }),
    });
    expect(created.status).toBe(200);
    const id = created.json.webhook.id as string;
    const got = await api('GET', `/api/v1/webhooks/${id}`);
    expect(got.json.webhook).toMatchObject({
      format: 'standard-webhooks',
      signing: { public_key: expect.stringMatching(/^whpk_/), previous_secret_until: null },
      auth: { type: 'oauth2_client_credentials', token_url: 'https://idp.example.com/token', client_id: 'c1', client_secret: '********' },
    });
    expect(got.text).not.toContain('cs-wire-secret');
    const secret = await api('GET', `/api/v1/webhooks/${id}/secret`);
    expect(secret.status).toBe(200);
    expect(secret.json.secret).toMatchObject({ secret: expect.stringMatching(/^whsec_/), previous_secret_until: null });
    const rotated = await api('POST', `/api/v1/webhooks/${id}/secret/rotate`, { body: { grace_ms: 3600_000 } });
    expect(rotated.status).toBe(200);
    expect(rotated.json.code).toBe('SECRET_ROTATED');
    expect(rotated.json.secret.secret).not.toBe(secret.json.secret.secret);
    expect(rotated.json.secret.previous_secret_until).toMatch(ISO);
    const tooLong = await api('POST', `/api/v1/webhooks/${id}/secret/rotate`, { body: { grace_ms: 8 * 24 * 3600_000 } });
    expect([tooLong.status, tooLong.json.errors[0].code]).toEqual([400, 'INVALID_GRACE_MS']);
    const badFormat = await api('PATCH', `/api/v1/webhooks/${id}`, { body: { format: 'xml' } });
    expect([badFormat.status, badFormat.json.errors[0].code]).toEqual([400, 'INVALID_FORMAT']);
    const badAuth = await api('PATCH', `/api/v1/webhooks/${id}`, { body: { auth: { type: 'mtls', certificate: 'nope' } } });
    expect([badAuth.status, badAuth.json.errors[0].code]).toEqual([400, 'INVALID_AUTH']);
    // Sent back masked, the stored client secret stays; null removes the auth.
    const kept = await api('PATCH', `/api/v1/webhooks/${id}`, { body: { auth: got.json.webhook.auth } });
    expect(kept.status).toBe(200);
    expect((await api('PATCH', `/api/v1/webhooks/${id}`, { body: { auth: null } })).status).toBe(200);
    expect((await api('GET', `/api/v1/webhooks/${id}`)).json.webhook.auth).toBeNull();
    const plain = await api('POST', '/api/v1/webhooks', { body: createBody() });
    const noSecret = await api('GET', `/api/v1/webhooks/${plain.json.webhook.id}/secret`);
    expect([noSecret.status, noSecret.json.errors[0].code]).toEqual([400, 'INVALID_FORMAT']);
  });

  test('without secretsKey a webhook that needs a secret is refused with SECRETS_KEY_REQUIRED', async () => {
    const { api } = await setup(mode);
    const refused = await api('POST', '/api/v1/webhooks', { body: createBody({ format: 'standard-webhooks' }) });
    expect([refused.status, refused.json.errors[0].code]).toEqual([400, 'SECRETS_KEY_REQUIRED']);
    expect((await api('GET', '/api/v1/webhooks')).json.webhooks).toEqual([]);
  });

  test('delivery operations (extension): log, attempts, resend, recover, test event', async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { engine, api } = await setup(mode, { allowPrivateNetworks: true });
    await engine.hooks.start();
    const id = (await api('POST', '/api/v1/webhooks', { body: createBody({ endpoint: `${receiver.url}/in` }) })).json.webhook.id;
    const base = `/api/v1/webhooks/${id}`;

    const sent = await api('POST', `${base}/test`);
    expect(sent.json).toEqual({
      code: 'TEST_EVENT_SENT',
      message: 'Test event queued',
      event_id: expect.stringMatching(/^event_/),
      delivery_id: expect.stringMatching(/^msg_/),
    });
    await engine.hooks.drain();
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([sent.json.delivery_id]);

    const log = await api('GET', `${base}/deliveries`);
    expect(log.json).toEqual({
      code: 'OK',
      message: 'Success',
      deliveries: [
        {
          id: sent.json.delivery_id,
          event_id: sent.json.event_id,
          event_type: 'user.created',
          status: 'delivered',
          attempt_count: 1,
          created_on: expect.stringMatching(ISO),
          next_attempt_on: null,
          last_attempt_on: expect.stringMatching(ISO),
          last_status_code: 200,
          last_error: null,
          // what the event is about (the sample user), and that it is a test event
          subject: expect.stringMatching(/^kp_/),
          test: true,
        },
      ],
      next_token: null,
    });
    // what was sent about that user, across webhooks
    const about = await api('GET', `/api/v1/events?subject=${log.json.deliveries[0].subject}`);
    expect(about.json.events.map((e: { event_id: string; test: boolean }) => [e.event_id, e.test])).toEqual([[sent.json.event_id, true]]);
    expect(about.json.events[0].deliveries.map((d: { id: string; webhook_id: string }) => [d.id, d.webhook_id])).toEqual([
      [sent.json.delivery_id, id],
    ]);
    const attempts = await api('GET', `${base}/deliveries/${sent.json.delivery_id}/attempts`);
    expect(attempts.json).toEqual({
      code: 'OK',
      message: 'Success',
      attempts: [
        {
          id: expect.any(String),
          started_on: expect.stringMatching(ISO),
          duration_ms: expect.any(Number),
          status_code: 200,
          error_kind: null,
          error: null,
          response_excerpt: 'ok',
          success: true,
        },
      ],
    });
    // The message, and the stats (test/http/stats.test.ts has the details).
    const message = await api('GET', `${base}/deliveries/${sent.json.delivery_id}`);
    expect(message.json).toMatchObject({
      code: 'OK',
      delivery: { id: sent.json.delivery_id },
      headers: { 'webhook-id': sent.json.delivery_id },
    });
    expect((await api('GET', '/api/v1/webhooks/stats')).json.stats).toMatchObject([{ attempts: 1, succeeded: 1 }]);
    expect((await api('GET', `${base}/stats?range=7d`)).json.overview).toMatchObject({ range: '7d', attempts: 1 });
    const resent = await api('POST', `${base}/deliveries/${sent.json.delivery_id}/resend`);
    expect(resent.json).toMatchObject({ code: 'DELIVERY_RESENT', delivery: { id: sent.json.delivery_id, status: 'pending' } });
    await engine.hooks.drain();
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([sent.json.delivery_id, sent.json.delivery_id]);

    const recovered = await api('POST', `${base}/recover`, { body: { since: '2000-01-01T00:00:00Z' } });
    expect(recovered.json).toEqual({ code: 'DELIVERIES_RECOVERED', message: 'Failed deliveries queued to be sent again', recovered: 0 });
    const sentNow = await api('POST', `${base}/send_waiting`);
    expect(sentNow.json).toEqual({ code: 'WAITING_SENT', message: 'Waiting deliveries queued to be sent now', sent: 0 });
    expect((await api('GET', `${base}/waiting`)).json.waiting).toEqual({ pending: 0, held: 0, sendable: 0, disables_on: null });
  });
});

test('an auto-disabled webhook shows status, reason, failing_since and last_error over HTTP, and re-enabling over HTTP resumes it', async () => {
  let healthy = false;
  const receiver = await startReceiver(() => (healthy ? 200 : 500));
  cleanups.push(() => receiver.close());
  const clock = new ManualClock(Date.UTC(2024, 0, 1));
  // Polling hourly: the clock jumps 101 hours, and a 1 s poll would mean 363,600 wake-ups.
  // No jitter: with it, one run in ~70 had its 14th attempt land just before 72 hours, so the
  // 15th, the schedule's last, both disabled the webhook and failed the delivery for good
  // (spent schedule), leaving nothing held for the re-enable to resume.
  const { engine, api } = await setup('http', {
    clock,
    delivery: { timeoutMs: 2000, pollIntervalMs: 3600_000 },
    backoff: { jitter: 0 },
  });
  await engine.hooks.start();
  const id = (
    await api('POST', '/api/v1/webhooks', { body: createBody({ endpoint: `${receiver.url}/dead`, event_types: ['user.deleted'] }) })
  ).json.webhook.id;
  await engine.hooks.emit({ type: 'user.deleted', source: 'admin', data: { user: { id: 'kp_1' } }, environment: 'env-a' });
  await engine.hooks.drain();
  expect((await api('GET', `/api/v1/webhooks/${id}`)).json.webhook).toMatchObject({
    status: 'enabled',
    failing_since: '2024-01-01T00:00:00.000Z',
    last_error: expect.stringContaining('500'),
    circuit: 'half_open',
  });

  await clock.advance(101 * 3600_000);
  const [listed] = (await api('GET', '/api/v1/webhooks')).json.webhooks;
  expect(listed).toMatchObject({
    id,
    status: 'disabled',
    disabled_reason: 'failing',
    disabled_on: expect.stringMatching(ISO),
    failing_since: '2024-01-01T00:00:00.000Z',
    circuit: 'half_open', // not attempted at all while disabled: status says so
  });

  healthy = true;
  const sent = receiver.requests.length; // before enabling: the resumed delivery may arrive before the answer does
  const enabled = await api('POST', `/api/v1/webhooks/${id}/enable`);
  expect(enabled.json.webhook).toMatchObject({ status: 'enabled', disabled_reason: null, failing_since: null, circuit: 'closed' });
  await engine.hooks.drain();
  expect(receiver.requests.length).toBe(sent + 1); // the held delivery went out
});

test('OpenAPI document: served publicly at /api/v1/openapi.json, servers follow the mount prefix', async () => {
  const engine: TestEngine = await makeHttpEngine({ authorize: undefined });
  cleanups.push(() => engine.close());
  const res = await engine.handler(new Request('https://auth.example.com/tenant/api/v1/openapi.json'));
  expect(res.status).toBe(200);
  const doc = (await res.json()) as any;
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.servers).toEqual([{ url: '/tenant' }]); // relative: never the Host header (test/http/openapi-servers.test.ts)
  expect(Object.keys(doc.paths).sort()).toEqual([
    '/.well-known/jwks',
    '/.well-known/jwks.json',
    '/api/v1/event_types',
    '/api/v1/events',
    '/api/v1/events/{event_id}',
    '/api/v1/openapi.json',
    '/api/v1/verification',
    '/api/v1/webhooks',
    '/api/v1/webhooks/stats',
    '/api/v1/webhooks/{webhook_id}',
    '/api/v1/webhooks/{webhook_id}/deliveries',
    '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}',
    '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/attempts',
    '/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/resend',
    '/api/v1/webhooks/{webhook_id}/disable',
    '/api/v1/webhooks/{webhook_id}/enable',
    '/api/v1/webhooks/{webhook_id}/recover',
    '/api/v1/webhooks/{webhook_id}/secret',
    '/api/v1/webhooks/{webhook_id}/secret/rotate',
    '/api/v1/webhooks/{webhook_id}/send_waiting',
    '/api/v1/webhooks/{webhook_id}/stats',
    '/api/v1/webhooks/{webhook_id}/test',
    '/api/v1/webhooks/{webhook_id}/waiting',
  ]);
  // Every $ref resolves.
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/([^"]+)"/g)].map((m) => m[1]!);
  for (const ref of refs)
    expect(
      ref.split('/').reduce((at: any, k) => at?.[k], doc),
      ref,
    ).toBeDefined();
  expect(doc.paths['/api/v1/webhooks/{webhook_id}/enable'].post['x-extension']).toBe(true);
  for (const route of ROUTES.filter((r) => r.path.includes('deliveries') || /\/(recover|send_waiting|waiting|test)$/.test(r.path)))
    expect(doc.paths[route.path][route.method.toLowerCase()]['x-extension'], route.path).toBe(true);
  expect(
    doc.paths['/api/v1/webhooks/{webhook_id}/deliveries'].get.parameters.map((p: { name: string; in: string }) => `${p.in} ${p.name}`),
  ).toEqual([
    'path webhook_id',
    'query status',
    'query event_type',
    'query since',
    'query until',
    'query search',
    'query page_size',
    'query next_token',
  ]);
  expect(doc.paths['/api/v1/webhooks'].post['x-extension']).toBeUndefined();
});
