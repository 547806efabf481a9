import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, systemClock, type WebhookInput, type WebhooksOptions } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey } from '../helpers/fixtures.js';

/**
 * `hooks.dashboard`, the public entry: the handler createWebhooks wires from its own options
 * (`authorize`, `dashboard: { allowedOrigins }`), as a host mounts it. The other dashboard tests
 * build theirs with createDashboard; these check that the one a host gets behaves the same.
 */

const cleanups = useCleanups();
const ORIGIN = 'https://auth.example.com';
const PREFIX = '/settings/webhooks';

const webhookInput: WebhookInput = {
  name: 'CRM sync',
  endpoint: 'https://crm.example.com/hooks',
  eventTypes: ['user.created'],
  environment: 'env-a',
};

async function setup(options: Partial<WebhooksOptions> = {}) {
  let authorizeCalls = 0;
  const engine = await makeEngine({
    clock: systemClock,
    authorize: (request) => {
      authorizeCalls++;
      const m = /(?:^|;\s*)session=(env-[a-z0-9-]+)/.exec(request.headers.get('cookie') ?? '');
      return m ? { environment: m[1]! } : null;
    },
    ...options,
  });
  cleanups.push(() => engine.close());
  const call = (path: string, init: RequestInit & { env?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    if (init.env !== null) headers.set('cookie', `session=${init.env ?? 'env-a'}`);
    return engine.hooks.dashboard(new Request(`${ORIGIN}${path}`, { ...init, headers }));
  };
  return { hooks: engine.hooks, call, authorizeCalls: () => authorizeCalls };
}

describe('hooks.dashboard from createWebhooks', () => {
  test.each([PREFIX, `${PREFIX}/`])('GET %s: the page, with the API under the same prefix', async (path) => {
    const { call } = await setup();
    const res = await call(path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await res.text();
    expect(html).toContain(`<webhooks-dashboard api="${PREFIX}/api/v1" history `);
    expect(html).toMatch(new RegExp(`<script type="module" src="${PREFIX}/assets/bundle-en\\.[0-9a-f]{12}\\.js"></script>`));
    // …and that API answers, scoped by the same authorize.
    const list = await call(`${PREFIX}/api/v1/webhooks`);
    expect(list.status).toBe(200);
    expect((await list.json()).webhooks).toEqual([]);
  });

  test('authorize refuses: 403 and a line of text, no page, no names, no ids', async () => {
    const { call, hooks } = await setup();
    const created = await hooks.webhooks.create(webhookInput);
    for (const env of [null, 'nobody']) {
      const res = await call(PREFIX, { env });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      const body = await res.text();
      expect(body).not.toMatch(/webhooks-dashboard|<script|CRM sync|webhook_/);
      expect(body).not.toContain(created.id);
    }
  });

  test('a cross-site write is refused with 403 before authorize runs, and nothing changes', async () => {
    const { call, hooks, authorizeCalls } = await setup();
    const webhook = await hooks.webhooks.create(webhookInput);
    const before = authorizeCalls();
    for (const headers of [{ origin: 'https://evil.example.net' }, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
      const res = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}`, {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint: 'https://evil.example.net/steal' }),
      });
      expect(res.status).toBe(403);
      expect((await res.json()).errors[0].code).toBe('CROSS_SITE_REQUEST');
    }
    expect(authorizeCalls()).toBe(before);
    expect(await hooks.webhooks.get(webhook.id, { environment: 'env-a' })).toEqual(webhook);
    // Control: the same write from the page's own origin goes through (and is authorized).
    const own = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}`, {
      method: 'PATCH',
      headers: { origin: ORIGIN, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Renamed here' }),
    });
    expect(own.status).toBe(200);
    expect(authorizeCalls()).toBe(before + 1);
    expect((await hooks.webhooks.get(webhook.id, { environment: 'env-a' })).name).toBe('Renamed here');
  });

  test('createWebhooks({ dashboard: { allowedOrigins } }) lets that origin write; without it, the same request is refused', async () => {
    const admin = 'https://admin.example.com';
    const disable = async (dashboard: { allowedOrigins: string[] } | undefined) => {
      const { call, hooks } = await setup(dashboard ? { dashboard } : {});
      const webhook = await hooks.webhooks.create(webhookInput);
      const res = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}/disable`, {
        method: 'POST',
        headers: { origin: admin, 'sec-fetch-site': 'same-site', 'content-type': 'application/json' },
      });
      return { status: res.status, after: (await hooks.webhooks.get(webhook.id, { environment: 'env-a' })).status };
    };
    expect(await disable(undefined)).toEqual({ status: 403, after: 'enabled' });
    expect(await disable({ allowedOrigins: ['https://other.example.com'] })).toEqual({ status: 403, after: 'enabled' });
    expect(await disable({ allowedOrigins: [admin] })).toEqual({ status: 200, after: 'disabled' });
  });

  test('allowedOrigins given to createWebhooks is checked at once', async () => {
    const store = sqliteStore({ filename: ':memory:' });
    cleanups.push(() => store.close());
    const base = { store, keys: [await testKey()], issuer: ORIGIN };
    expect(() => createWebhooks({ ...base, dashboard: { allowedOrigins: ['https://admin.example.com/'] } })).toThrow(
      /allowedOrigins entry "https:\/\/admin\.example\.com\/" is not an origin/,
    );
  });
});
