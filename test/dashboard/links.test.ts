import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import type { WebhookInput } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';

/**
 * Link access (`hooks.dashboardLink`) through the dashboard handler, on a real engine and SQLite
 * file, time on a ManualClock: a link works once, expires, starts a session scoped to the prefix,
 * lands on `next` and never elsewhere, and a `read` session changes nothing. (The browser test
 * opens one in Chromium; test/store/conformance-dashboard.ts checks the store on both databases.)
 */

const cleanups = useCleanups();
const ORIGIN = 'https://auth.example.com';
const PREFIX = '/settings/webhooks';
const HOUR = 3_600_000;

/** The host's own sessions: `cookie: host=env-x` is environment env-x. */
const hostAuth = (request: Request) => {
  const m = /(?:^|;\s*)host=(env-[a-z0-9-]+)/.exec(request.headers.get('cookie') ?? '');
  return m ? { environment: m[1]! } : null;
};

async function setup() {
  const engine = await makeEngine({
    authorize: hostAuth,
    dashboard: { url: `${ORIGIN}${PREFIX}` },
    secretsKey: randomBytes(32).toString('base64'),
  });
  cleanups.push(() => engine.close());
  const { hooks } = engine;
  const get = (path: string, cookie?: string) => hooks.dashboard(new Request(new URL(path, ORIGIN), { headers: cookie ? { cookie } : {} }));
  /** Opens a link: its response, and the cookie it set (name=value). */
  const open = async (url: string) => {
    const res = await hooks.dashboard(new Request(url));
    const setCookie = res.headers.get('set-cookie');
    return { res, setCookie, cookie: setCookie?.split(';', 1)[0] };
  };
  return { ...engine, hooks, get, open };
}

const webhookInput: WebhookInput = {
  name: 'CRM',
  endpoint: 'https://crm.example.com/hooks',
  eventTypes: ['user.created'],
  environment: 'env-a',
};

describe('dashboardLink', () => {
  test('opens once: a session cookie scoped to the prefix, then the page and the API for that environment', async () => {
    const { hooks, get, open } = await setup();
    await hooks.webhooks.create(webhookInput);
    const url = await hooks.dashboardLink({ environment: 'env-a', next: '#/catalog' });
    expect(url).toMatch(new RegExp(`^${ORIGIN}${PREFIX}/link/[A-Za-z0-9_-]{43}$`));

    const first = await open(url);
    expect(first.res.status).toBe(200);
    const attributes = first.setCookie!.split('; ');
    expect(attributes).toEqual(expect.arrayContaining([`Path=${PREFIX}`, 'HttpOnly', 'SameSite=Strict', 'Secure', `Max-Age=${12 * 3600}`]));
    const html = await first.res.text();
    expect(html).toContain(`<meta http-equiv="refresh" content="0;url=${PREFIX}#/catalog">`);

    // The page and the API answer for env-a with the cookie alone (no host session).
    const page = await get(`${PREFIX}/`, first.cookie);
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain('capabilities="read"');
    const list = await get(`${PREFIX}/api/v1/webhooks`, first.cookie);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { webhooks: { name: string }[] }).webhooks.map((w) => w.name)).toEqual(['CRM']);

    // Twice: refused with a page that says what to do, and no cookie.
    const second = await open(url);
    expect(second.res.status).toBe(403);
    expect(second.setCookie).toBeNull();
    expect(await second.res.text()).toContain('ask for a new one');
  });

  test('an expired link and an ended session answer 403; the host’s authorize still works', async () => {
    const { hooks, clock, get, open } = await setup();
    const stale = await hooks.dashboardLink({ environment: 'env-a', ttlMs: 60_000 });
    clock.advance(60_000);
    expect((await open(stale)).res.status).toBe(403);

    const fresh = await hooks.dashboardLink({ environment: 'env-a' });
    const { cookie } = await open(fresh);
    expect((await get(`${PREFIX}/api/v1/webhooks`, cookie)).status).toBe(200);
    clock.advance(12 * HOUR);
    expect((await get(`${PREFIX}/api/v1/webhooks`, cookie)).status).toBe(403);
    const page = await get(`${PREFIX}/`, cookie);
    expect(page.status).toBe(403);
    expect(await page.text()).toContain('ask for a new link');
    expect((await get(`${PREFIX}/`, 'host=env-a')).status).toBe(200);
  });

  test('a forged or malformed token answers 403 and spends nothing', async () => {
    const { hooks, open } = await setup();
    const url = await hooks.dashboardLink({ environment: 'env-a' });
    const forged = `${url.slice(0, -1)}${url.endsWith('A') ? 'B' : 'A'}`;
    expect((await open(forged)).res.status).toBe(403);
    expect((await open(`${ORIGIN}${PREFIX}/link/short`)).res.status).toBe(403);
    const head = await hooks.dashboard(new Request(url, { method: 'HEAD' }));
    expect(head.status).toBe(403);
    expect((await open(url)).res.status).toBe(200);
  });

  test('read: the page hides writes and every write answers 403 READ_ONLY_ACCESS, nothing changes', async () => {
    const { hooks, get, open } = await setup();
    const hook = await hooks.webhooks.create(webhookInput);
    const { cookie } = await open(await hooks.dashboardLink({ environment: 'env-a', capabilities: ['read'] }));
    expect(await (await get(PREFIX, cookie)).text()).toContain('capabilities="read"');
    expect((await get(`${PREFIX}/api/v1/webhooks/${hook.id}`, cookie)).status).toBe(200);
    const write = await hooks.dashboard(
      new Request(`${ORIGIN}${PREFIX}/api/v1/webhooks/${hook.id}/disable`, {
        method: 'POST',
        headers: { cookie: cookie!, 'content-type': 'application/json', origin: ORIGIN },
        body: '{}',
      }),
    );
    expect(write.status).toBe(403);
    expect(((await write.json()) as { errors: { code: string }[] }).errors[0]!.code).toBe('READ_ONLY_ACCESS');
    expect((await hooks.webhooks.get(hook.id, { environment: 'env-a' })).status).toBe('enabled');
  });

  test("read: a webhook's signing secret is not revealed (403 READ_ONLY_ACCESS); a manage session may read it", async () => {
    const { hooks, get, open } = await setup();
    const hook = await hooks.webhooks.create({ ...webhookInput, format: 'standard-webhooks' });
    const reader = await open(await hooks.dashboardLink({ environment: 'env-a', capabilities: ['read'] }));
    for (const path of [`${PREFIX}/api/v1/webhooks/${hook.id}/secret`, `${PREFIX}/api/v1/webhooks/${hook.id}/secret/`]) {
      const refused = await get(path, reader.cookie);
      expect(refused.status, path).toBe(403);
      const body = await refused.text();
      expect(JSON.parse(body).errors[0].code).toBe('READ_ONLY_ACCESS');
      expect(body).not.toContain('whsec_');
    }
    const manager = await open(await hooks.dashboardLink({ environment: 'env-a' }));
    const secret = await get(`${PREFIX}/api/v1/webhooks/${hook.id}/secret`, manager.cookie);
    expect(secret.status).toBe(200);
    expect(await secret.text()).toContain('whsec_');
  });

  test('a session sees only its own environment', async () => {
    const { hooks, get, open } = await setup();
    const other = await hooks.webhooks.create({ ...webhookInput, environment: 'env-b' });
    const { cookie } = await open(await hooks.dashboardLink({ environment: 'env-a' }));
    expect((await get(`${PREFIX}/api/v1/webhooks/${other.id}`, cookie)).status).toBe(404);
  });

  test.each([
    'https://evil.example.com/',
    '//evil.example.com/x',
    '/elsewhere',
    '/settings/webhooks-other',
    '/settings/webhooks/../../admin',
    '/settings/webhooks\\evil',
    'javascript:alert(1)',
    '#x',
  ])('next %s is refused: never an open redirect', async (next) => {
    const { hooks } = await setup();
    await expect(hooks.dashboardLink({ environment: 'env-a', next })).rejects.toThrow(TypeError);
  });

  test('next may be a path under the prefix or a view', async () => {
    const { hooks, open } = await setup();
    for (const [next, to] of [
      [`${PREFIX}/#/webhooks/w1`, `${PREFIX}/#/webhooks/w1`],
      ['#/webhooks/w1', `${PREFIX}#/webhooks/w1`],
      [PREFIX, PREFIX],
    ]) {
      const res = (await open(await hooks.dashboardLink({ environment: 'env-a', next }))).res;
      expect(await res.text()).toContain(`content="0;url=${to}"`);
    }
  });

  test('a dashboard at the root: a link opened under //another.host/ is 404, never a page that moves on to that host', async () => {
    const engine = await makeEngine({ authorize: hostAuth, dashboard: { url: ORIGIN } });
    cleanups.push(() => engine.close());
    const link = await engine.hooks.dashboardLink({ environment: 'env-a' });
    const token = link.slice(link.lastIndexOf('/') + 1);
    for (const path of [`//evil.example/link/${token}`, `//evil.example//link/${token}`, `/x//link/${token}`]) {
      const res = await engine.hooks.dashboard(new Request(`${ORIGIN}${path}`));
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('evil.example');
    }
    // The link itself still opens, once, and moves on to the root.
    const res = await engine.hooks.dashboard(new Request(link));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('content="0;url=/"');
  });

  test('bad options are TypeErrors; without dashboard.url there are no links', async () => {
    const { hooks } = await setup();
    await expect(hooks.dashboardLink({ environment: 'env-a', capabilities: ['admin' as 'read'] })).rejects.toThrow(TypeError);
    await expect(hooks.dashboardLink({ environment: 'env-a', ttlMs: 0 })).rejects.toThrow(TypeError);
    const bare = await makeEngine({ authorize: hostAuth });
    cleanups.push(() => bare.close());
    await expect(bare.hooks.dashboardLink({ environment: 'env-a' })).rejects.toThrow(/dashboard: \{ url \}/);
  });
});
