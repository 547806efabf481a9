import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Dialect, startAuth } from './harness.js';

const PASSWORD = 'correct horse battery staple';

describe.each<Dialect>(['sqlite', 'postgres'])('better-auth on %s: the dashboard and the management API behind manage()', (dialect) => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  beforeAll(async () => {
    s = await startAuth(dialect, {}, `bauth_access_${dialect}`);
  });
  afterAll(async () => {
    await s?.close();
  });

  test('no session: 403 for the API and the dashboard; the JWKS is public', async () => {
    const anonymous = s.client();
    expect((await anonymous.call('/webhooks/api/v1/webhooks')).status).toBe(403);
    const page = await anonymous.call('/webhooks/dashboard');
    expect(page.status).toBe(403);
    expect(page.text).not.toContain('<webhooks-');
    for (const path of ['/webhooks/.well-known/jwks', '/webhooks/.well-known/jwks.json']) {
      const jwks = await anonymous.call(path);
      expect(jwks.status, path).toBe(200);
      expect(jwks.json.keys).toHaveLength(1);
    }
  });

  test('a session that manage() refuses (null): 403', async () => {
    const user = s.client();
    expect((await user.call('/sign-up/email', { body: { email: 'user@example.com', password: PASSWORD, name: 'User' } })).status).toBe(200);
    expect((await user.call('/webhooks/api/v1/webhooks')).status).toBe(403);
    expect((await user.call('/webhooks/dashboard')).status).toBe(403);
  });

  test("a session manage() accepts: the API and the dashboard work, in manage()'s environment", async () => {
    const root = s.client();
    expect((await root.call('/sign-up/email', { body: { email: 'root@example.com', password: PASSWORD, name: 'Root' } })).status).toBe(200);
    await s.sql(`update "user" set role = 'admin' where email = 'root@example.com'`);
    const created = await root.call('/webhooks/api/v1/webhooks', {
      body: { name: 'mine', endpoint: 'https://example.com/hooks', event_types: ['user.created'] },
    });
    expect(created.status, created.text).toBe(200);
    const listed = await root.call('/webhooks/api/v1/webhooks');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json)).toContain('mine');
    expect((await s.hooks.webhooks.list({ environment: 'default' })).map((w) => w.name)).toEqual(['mine']);
    const page = await root.call('/webhooks/dashboard');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    // Through the dashboard's own mount too.
    expect((await root.call('/webhooks/dashboard/api/v1/webhooks')).status).toBe(200);
    // The session is a cookie: a write from another site is refused, whatever the session.
    const forged = await root.call('/webhooks/api/v1/webhooks', {
      body: { name: 'evil', endpoint: 'https://evil.example/hooks', event_types: ['user.created'] },
      origin: 'https://evil.example',
    });
    expect(forged.status).toBe(403);
    expect(forged.json.errors[0].code).toBe('CROSS_SITE_REQUEST');
    expect((await s.hooks.webhooks.list({ environment: 'default' })).map((w) => w.name)).toEqual(['mine']);
  });

  test("portal links with no option beyond the plugin's: a read link opens the dashboard in its environment and may not write", async () => {
    await s.hooks.webhooks.create({
      environment: 'org_acme',
      name: 'acme',
      endpoint: 'https://acme.example.com/h',
      eventTypes: ['user.created'],
    });
    const link = await s.hooks.dashboardLink({ environment: 'org_acme', capabilities: ['read'] });
    expect(link.startsWith(`${s.base}/webhooks/dashboard/link/`)).toBe(true);
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(200);
    const cookie = opened.headers.getSetCookie()[0]!.split(';')[0]!;
    const listed = await fetch(`${s.base}/webhooks/dashboard/api/v1/webhooks`, { headers: { cookie } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { webhooks: Array<{ name: string }> }).webhooks.map((w) => w.name)).toEqual(['acme']);
    // Read only: a write from the dashboard's own origin is refused for the capability, not the origin.
    const write = await fetch(`${s.base}/webhooks/dashboard/api/v1/webhooks`, {
      method: 'POST',
      headers: { cookie, origin: s.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', endpoint: 'https://x.example.com/h', event_types: ['user.created'] }),
    });
    expect(write.status).toBe(403);
    expect(((await write.json()) as { errors: Array<{ code: string }> }).errors[0]!.code).toBe('READ_ONLY_ACCESS');
  });

  test('better-auth keeps its own routes; unknown paths under the mount are 404', async () => {
    expect((await s.client().call('/ok')).status).toBe(200);
    expect((await s.client().call('/webhooks/nothing-here')).status).toBe(404);
  });
});

describe('behind a proxy that terminates TLS (baseURL https, requests http)', () => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  beforeAll(async () => {
    // A dashboard option of the host's own (the locale) keeps baseURL's origin among those that may write.
    s = await startAuth('sqlite', { dashboard: { locale: 'en' } }, 'bauth_proxy', { baseURL: 'https://auth.example.com/api/auth' });
  });
  afterAll(async () => {
    await s?.close();
  });

  test('the public origin may write through the dashboard; links are minted under the public address', async () => {
    const root = s.client();
    const origin = 'https://auth.example.com';
    const up = await root.call('/sign-up/email', { body: { email: 'root@example.com', password: PASSWORD, name: 'Root' }, origin });
    expect(up.status, up.text).toBe(200);
    await s.sql(`update "user" set role = 'admin' where email = 'root@example.com'`);
    const created = await root.call('/webhooks/dashboard/api/v1/webhooks', {
      body: { name: 'mine', endpoint: 'https://example.com/hooks', event_types: ['user.created'] },
      origin,
    });
    expect(created.status, created.text).toBe(200);
    const evil = await root.call('/webhooks/dashboard/api/v1/webhooks', {
      body: { name: 'evil', endpoint: 'https://evil.example/hooks', event_types: ['user.created'] },
      origin: 'https://evil.example',
    });
    expect(evil.status).toBe(403);
    expect(await s.hooks.dashboardLink({ environment: 'default' })).toMatch(
      /^https:\/\/auth\.example\.com\/api\/auth\/webhooks\/dashboard\/link\//,
    );
  });
});
