import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/http/routes.js';
import type { Webhooks } from '../../src/index.js';
import { startAuth } from '../better-auth/harness.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';

/**
 * Cross-site writes are refused on every write route of every mount: the management handler with
 * a session-based (cookie) authorize, the dashboard, and the better-auth plugin's paths (the API,
 * the dashboard's API, and any other path under the mount). Refused by Origin and by
 * Sec-Fetch-Site (403), and a cookie-carrying write that is not JSON by its content type (415, a
 * form's types), before authorize runs; nothing changes.
 */
const cleanups = useCleanups();
const WRITES = ROUTES.filter((r) => r.method !== 'GET');
const EVIL: Array<[string, Record<string, string>]> = [
  ['Origin of another site', { origin: 'https://evil.example' }],
  ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
  ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
  ['Origin null', { origin: 'null' }],
];
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain'];

/** Every write route's path with ids filled in. */
const pathOf = (route: (typeof WRITES)[number], ids: { webhook: string; delivery: string }) =>
  route.path.replace('{webhook_id}', ids.webhook).replace('{delivery_id}', ids.delivery);

async function expectRefused(
  send: (path: string, init: { method: string; headers: Record<string, string>; body?: string }) => Promise<Response>,
  prefix: string,
  ids: { webhook: string; delivery: string },
) {
  for (const route of WRITES) {
    const path = `${prefix}${pathOf(route, ids)}`;
    for (const [label, headers] of EVIL) {
      const res = await send(path, { method: route.method, headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
      expect(res.status, `${route.method} ${path} (${label})`).toBe(403);
      expect(((await res.json()) as { errors: Array<{ code: string }> }).errors[0]!.code).toBe('CROSS_SITE_REQUEST');
    }
    for (const type of FORM_TYPES) {
      const res = await send(path, { method: route.method, headers: { 'content-type': type }, body: 'a=1' });
      expect(res.status, `${route.method} ${path} (${type})`).toBe(415);
    }
  }
}

async function expectUnchanged(hooks: Webhooks, id: string, environment: string) {
  const webhook = await hooks.webhooks.get(id, { environment });
  expect(webhook).toMatchObject({ name: 'target', status: 'enabled' });
  expect((await hooks.deliveries.list({ environment, webhookId: id })).deliveries).toHaveLength(1);
}

describe('the management handler with an authorize that reads a cookie', () => {
  test('every write route refuses another site and a form; the same site and a bearer client still write', async () => {
    const engine = await makeEngine({
      authorize: (request) => (request.headers.get('cookie') === 'session=ok' ? { environment: 'default' } : null),
    });
    cleanups.push(() => engine.close());
    const { hooks } = engine;
    const webhook = await hooks.webhooks.create({ name: 'target', endpoint: 'https://example.com/h', eventTypes: ['user.created'] });
    const { deliveryIds } = await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    const ids = { webhook: webhook.id, delivery: deliveryIds[0]! };
    const send = (path: string, init: { method: string; headers: Record<string, string>; body?: string }) =>
      hooks.handler(new Request(`https://auth.example.com${path}`, { ...init, headers: { cookie: 'session=ok', ...init.headers } }));
    await expectRefused(send, '', ids);
    await expectUnchanged(hooks, webhook.id, 'default');
    // The same origin, JSON: allowed.
    const same = await send(`/api/v1/webhooks/${webhook.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', origin: 'https://auth.example.com', 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ name: 'renamed' }),
    });
    expect(same.status).toBe(200);
    // A bearer token a page had to set itself (an admin app on another origin): no cross-site risk.
    const bearer = await hooks.handler(
      new Request(`https://auth.example.com/api/v1/webhooks/${webhook.id}`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer t', origin: 'https://admin.example.net', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'by bearer' }),
      }),
    );
    expect(bearer.status).toBe(403); // refused by authorize (it reads the cookie), not as cross-site
    expect(((await bearer.json()) as { errors: Array<{ code: string }> }).errors[0]!.code).toBe('INVALID_CREDENTIALS');
    // The dashboard element calling this handler directly: PATCH and DELETE as a POST naming them.
    const overridden = await send(`/api/v1/webhooks/${webhook.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://auth.example.com', 'x-http-method-override': 'PATCH' },
      body: JSON.stringify({ name: 'via override' }),
    });
    expect(overridden.status).toBe(200);
    expect((await hooks.webhooks.get(webhook.id, { environment: 'default' })).name).toBe('via override');
    const evilOverride = await send(`/api/v1/webhooks/${webhook.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example', 'x-http-method-override': 'DELETE' },
    });
    expect(evilOverride.status).toBe(403);
  });
});

describe('the dashboard', () => {
  test('every write route under the dashboard refuses another site and a form', async () => {
    const engine = await makeEngine({
      authorize: (request) => (request.headers.get('cookie') === 'session=ok' ? { environment: 'default' } : null),
    });
    cleanups.push(() => engine.close());
    const { hooks } = engine;
    const webhook = await hooks.webhooks.create({ name: 'target', endpoint: 'https://example.com/h', eventTypes: ['user.created'] });
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    const [delivery] = (await hooks.deliveries.list({ webhookId: webhook.id })).deliveries;
    const send = (path: string, init: { method: string; headers: Record<string, string>; body?: string }) =>
      hooks.dashboard(new Request(`https://auth.example.com${path}`, { ...init, headers: { cookie: 'session=ok', ...init.headers } }));
    await expectRefused(send, '/settings/webhooks', { webhook: webhook.id, delivery: delivery!.id });
    await expectUnchanged(hooks, webhook.id, 'default');
  });
});

describe('the better-auth plugin', () => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  beforeAll(async () => {
    s = await startAuth('sqlite', {}, 'bauth_cross_site');
  });
  afterAll(async () => {
    await s?.close();
  });

  test('every write route, under every path that reaches the engine, refuses another site and a form', async () => {
    const root = s.client();
    expect(
      (await root.call('/sign-up/email', { body: { email: 'root@example.com', password: 'correct horse battery staple', name: 'Root' } }))
        .status,
    ).toBe(200);
    await s.sql(`update "user" set role = 'admin' where email = 'root@example.com'`);
    const webhook = await s.hooks.webhooks.create({ name: 'target', endpoint: 'https://example.com/h', eventTypes: ['user.created'] });
    await s.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    const [delivery] = (await s.hooks.deliveries.list({ webhookId: webhook.id })).deliveries;
    const send = async (path: string, init: { method: string; headers: Record<string, string>; body?: string }) => {
      const { origin, ...headers } = init.headers;
      // The browser's own cookie, as the client keeps it; another site's Origin when the case says so.
      const res = await root.call(path, { method: init.method, raw: init.body, headers, ...(origin ? { origin } : { origin: '' }) });
      return new Response(res.text, { status: res.status });
    };
    const ids = { webhook: webhook.id, delivery: delivery!.id };
    for (const prefix of ['/webhooks', '/webhooks/dashboard']) await expectRefused(send, prefix, ids);
    // Any other path under the mount answers 404, whatever it ends with.
    for (const route of WRITES) {
      const res = await send(`/webhooks/x${pathOf(route, ids)}`, {
        method: route.method,
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status, `/webhooks/x${pathOf(route, ids)}`).toBe(404);
    }
    await expectUnchanged(s.hooks, webhook.id, 'default');
  });
});
