import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { createDashboard } from '../../src/dashboard/index.js';
import type { WebhookInput } from '../../src/index.js';
import { systemClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';

/**
 * The dashboard handler driven with `Request` objects around a real engine on a real SQLite file:
 * routing under any prefix, headers, caching, authorization, and the cross-site and content-type
 * refusals, each checked by what reached the store. (The browser tests cover the same from a page.)
 */

const cleanups = useCleanups();
const ORIGIN = 'https://auth.example.com';
const PREFIX = '/settings/webhooks';

/** `cookie: session=env-x` is environment env-x; anything else is refused. */
const cookieAuth = (request: Request) => {
  const m = /(?:^|;\s*)session=(env-[a-z0-9-]+)/.exec(request.headers.get('cookie') ?? '');
  return m ? { environment: m[1]! } : null;
};

async function setup(options: { allowedOrigins?: string[] } = {}) {
  const engine = await makeEngine({ clock: systemClock, authorize: cookieAuth });
  cleanups.push(() => engine.close());
  let authorizeCalls = 0;
  const errors: string[] = [];
  const dashboard = createDashboard({
    api: engine.hooks.handler,
    authorize: (request) => (authorizeCalls++, cookieAuth(request)),
    onError: (message) => errors.push(message),
    ...options,
  });
  const call = (path: string, init: RequestInit & { env?: string | null } = {}) => {
    const headers = new Headers(init.headers);
    if (init.env !== null) headers.set('cookie', `session=${init.env ?? 'env-a'}`);
    return dashboard(new Request(`${ORIGIN}${path}`, { ...init, headers }));
  };
  return { hooks: engine.hooks, call, errors, authorizeCalls: () => authorizeCalls };
}

const webhookInput: WebhookInput = {
  name: 'CRM sync',
  endpoint: 'https://crm.example.com/hooks',
  eventTypes: ['user.created'],
  environment: 'env-a',
};

describe('the page', () => {
  test.each([PREFIX, `${PREFIX}/`])('GET %s answers the page with absolute asset paths, CSP and nosniff', async (path) => {
    const { call } = await setup();
    const res = await call(path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    // One script (every module and the reader's word table) and one stylesheet: the first render's files.
    expect(html).toMatch(new RegExp(`<script type="module" src="${PREFIX}/assets/bundle-en\\.[0-9a-f]{12}\\.js"></script>`));
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html.match(/rel="stylesheet"/g)).toHaveLength(1);
    expect(html).not.toContain('modulepreload');
    expect(html).toContain(`<webhooks-dashboard api="${PREFIX}/api/v1" history `);
    // nothing inline, nothing from elsewhere
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//);
  });

  test('mounted at the root, and under a prefix with characters that need escaping', async () => {
    const { call } = await setup();
    expect(await (await call('/')).text()).toContain('<webhooks-dashboard api="/api/v1" history ');
    const odd = await (await call("/a'b/c%22d/")).text();
    expect(odd).toContain('api="/a&#39;b/c%22d/api/v1"');
  });

  test('refused by authorize: 403 with no page, no names, no ids; HEAD too', async () => {
    const { call, hooks } = await setup();
    const created = await hooks.webhooks.create(webhookInput);
    for (const env of [null, 'nobody']) {
      const res = await call(PREFIX, { env });
      expect(res.status).toBe(403);
      const body = await res.text();
      expect(body).not.toMatch(/webhooks-dashboard|script|CRM sync|webhook_/);
      expect(body).not.toContain(created.id);
    }
    expect((await call(PREFIX, { method: 'HEAD', env: null })).status).toBe(403);
    // In the reader's language.
    expect(await (await call(PREFIX, { env: null })).text()).toBe('Forbidden: you may not manage webhooks here.\n');
    expect(await (await call(PREFIX, { env: null, headers: { 'accept-language': 'de-AT' } })).text()).toBe(
      'Zugriff verweigert: Sie dürfen hier keine Webhooks verwalten.\n',
    );
    const head = await call(PREFIX, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  test('without an authorize hook, everything is refused (fail closed)', async () => {
    const engine = await makeEngine({ clock: systemClock });
    cleanups.push(() => engine.close());
    const dashboard = createDashboard({ api: engine.hooks.handler, authorize: undefined, onError: () => {} });
    expect((await dashboard(new Request(`${ORIGIN}${PREFIX}`))).status).toBe(403);
  });

  test('other methods on the page: 405', async () => {
    const { call } = await setup();
    const res = await call(PREFIX, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('assets', () => {
  async function assetNames(call: (path: string) => Promise<Response>) {
    const html = await (await call(PREFIX)).text();
    return [...html.matchAll(/\/assets\/([a-z0-9-]+\.[0-9a-f]{12}\.(?:js|css|svg))/g)].map((m) => m[1]!);
  }

  test('hashed names: a year of immutable caching, with their type, nosniff and CSP; public (no credentials needed)', async () => {
    const { call, authorizeCalls } = await setup();
    const names = await assetNames(call);
    expect(names.some((n) => n.startsWith('bundle-en.') && n.endsWith('.js'))).toBe(true);
    expect(names.some((n) => n.startsWith('dashboard.') && n.endsWith('.css'))).toBe(true);
    names.push((await (await call(`${PREFIX}/assets/dashboard.js`)).text()).match(/dom\.[0-9a-f]{12}\.js/)![0]);
    const before = authorizeCalls();
    for (const name of names) {
      const res = await call(`${PREFIX}/assets/${name}`, { env: null });
      expect(res.status, name).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const type = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' }[name.split('.').at(-1)!];
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    }
    expect(authorizeCalls()).toBe(before);
  });

  test('imports between modules name the hashed files, so a cached module never loads a stale one', async () => {
    const { call } = await setup();
    // the element's own module, as a host that embeds it loads it
    const source = await (await call(`${PREFIX}/assets/dashboard.js`)).text();
    const imports = [...source.matchAll(/from '\.\/([^']+)'/g)].map((m) => m[1]!);
    expect(imports.length).toBeGreaterThan(2);
    // Views other than the list load on demand, by their hashed names too.
    expect(source).toMatch(/import\('\.\/detail-view\.[0-9a-f]{12}\.js'\)/);
    for (const name of imports) expect(name).toMatch(/^[a-z-]+\.[0-9a-f]{12}\.js$/);
    expect(source).toMatch(/new URL\('\.\/dashboard\.[0-9a-f]{12}\.css'/);
  });

  test('plain names for embedding: revalidated, with an ETag and 304', async () => {
    const { call } = await setup();
    const res = await call(`${PREFIX}/assets/dashboard.js`, { env: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{12}"$/);
    const again = await call(`${PREFIX}/assets/dashboard.js`, { env: null, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  test('unknown files are 404; the page and assets answer at any depth of prefix', async () => {
    const { call } = await setup();
    expect((await call(`${PREFIX}/assets/nope.js`)).status).toBe(404);
    expect((await call(`${PREFIX}/assets/dashboard.000000000000.js`)).status).toBe(404);
    expect((await call('/assets/dashboard.js')).status).toBe(200);
  });

  test('the assets stay small: what one reader of the page loads under 150 KB uncompressed, every module under 180 KB', async () => {
    const { call } = await setup();
    const size = new Map<string, number>();
    const fetched = async (name: string) => {
      const body = await (await call(`${PREFIX}/assets/${name}`)).arrayBuffer();
      size.set(name, body.byteLength);
      return [...new TextDecoder().decode(body).matchAll(/'\.\/([a-z0-9-]+\.[0-9a-f]{12}\.(?:js|css|svg))'/g)].map((m) => m[1]!);
    };
    // The page's files (bundle, stylesheet, icon) and the modules that the element, embedded, reaches.
    const page = await assetNames(call);
    for (const name of page) await fetched(name);
    const modules = new Set<string>(['dashboard.js']);
    for (const name of modules) for (const next of await fetched(name)) modules.add(next);
    // every file of the folder: the modules and the stylesheet the element reaches, and the icon the page names
    const icon = page.filter((n) => n.startsWith('icon.'));
    expect(icon).toHaveLength(1);
    expect(modules.size + icon.length).toBe(readdirSync(new URL('../../src/dashboard/assets/', import.meta.url)).length);
    const sum = (names: Iterable<string>) => [...names].reduce((total, name) => total + size.get(name)!, 0);
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    const files = page.filter((n) => !n.startsWith('bundle-'));
    const perReader = await Promise.all(
      ['en', 'fr', 'de'].map(async (locale) => {
        const html = await (await call(PREFIX, { headers: { 'accept-language': locale } })).text();
        const bundle = html.match(/bundle-[a-z]+\.[0-9a-f]{12}\.js/)![0];
        await fetched(bundle);
        return { locale, bundle, bytes: sum([bundle, ...files]) };
      }),
    );
    console.log(
      `dashboard assets: ${modules.size} modules and files, ${kb(sum(modules))} uncompressed; the page loads ${perReader.map((r) => `${kb(r.bytes)} (${r.locale})`).join(', ')}`,
    );
    expect(new Set(perReader.map((r) => r.bundle)).size).toBe(3);
    for (const { locale, bytes } of perReader) expect(bytes, locale).toBeLessThan(150 * 1024);
    // Every module and every locale's table, as served (without comments and indentation): what
    // a host that embeds the element may fetch, one module at a time, if a reader visits every view.
    expect(sum(modules), 'all modules').toBeLessThan(180 * 1024);
  });
});

describe('the API under the prefix', () => {
  test('passes reads through to the management API, scoped by authorize, with the security headers', async () => {
    const { call, hooks } = await setup();
    await hooks.webhooks.create(webhookInput);
    const res = await call(`${PREFIX}/api/v1/webhooks`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect((await res.json()).webhooks.map((w: { name: string }) => w.name)).toEqual(['CRM sync']);
    const other = await call(`${PREFIX}/api/v1/webhooks`, { env: 'env-b' });
    expect((await other.json()).webhooks).toEqual([]);
    expect((await call(`${PREFIX}/api/v1/webhooks`, { env: null })).status).toBe(403);
  });

  test('same-origin JSON writes go through', async () => {
    const { call, hooks } = await setup();
    const res = await call(`${PREFIX}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ name: 'Made here', endpoint: 'https://a.example.com/h', event_types: ['user.created'] }),
    });
    expect(res.status).toBe(200);
    expect((await hooks.webhooks.list({ environment: 'env-a' })).map((w) => w.name)).toEqual(['Made here']);
  });
});

describe('cross-site writes', () => {
  const attempts: Array<[string, Record<string, string>]> = [
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['another Origin', { origin: 'https://evil.example.net' }],
    ['a sibling subdomain Origin', { origin: 'https://app.auth.example.com' }],
    ['Origin: null (sandboxed frame)', { origin: 'null' }],
    ['same Origin but Sec-Fetch-Site: cross-site', { origin: ORIGIN, 'sec-fetch-site': 'cross-site' }],
  ];

  test.each(attempts)('%s: 403 before authorize, nothing changes', async (_label, headers) => {
    const { call, hooks, authorizeCalls } = await setup();
    const webhook = await hooks.webhooks.create(webhookInput);
    const json = { ...headers, 'content-type': 'application/json' };
    const writes: Array<[string, string, string?]> = [
      [
        'POST',
        `${PREFIX}/api/v1/webhooks`,
        JSON.stringify({ name: 'evil', endpoint: 'https://evil.example.net', event_types: ['user.created'] }),
      ],
      ['PATCH', `${PREFIX}/api/v1/webhooks/${webhook.id}`, JSON.stringify({ endpoint: 'https://evil.example.net/steal' })],
      ['DELETE', `${PREFIX}/api/v1/webhooks/${webhook.id}`],
      ['POST', `${PREFIX}/api/v1/webhooks/${webhook.id}/disable`, '{}'],
      ['OPTIONS', `${PREFIX}/api/v1/webhooks`],
    ];
    const before = authorizeCalls();
    for (const [method, path, body] of writes) {
      const res = await call(path, { method, headers: json, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await res.json()).errors[0].code).toBe('CROSS_SITE_REQUEST');
    }
    expect(authorizeCalls()).toBe(before);
    expect(await hooks.webhooks.list({ environment: 'env-a' })).toEqual([webhook]);
  });

  test('a POST naming PATCH or DELETE (mounts that forward only GET and POST) acts as one same-site, and is refused cross-site', async () => {
    const { call, hooks } = await setup();
    const webhook = await hooks.webhooks.create(webhookInput);
    const same = { 'content-type': 'application/json', origin: ORIGIN, 'sec-fetch-site': 'same-origin' };
    const patched = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}`, {
      method: 'POST',
      headers: { ...same, 'x-http-method-override': 'PATCH' },
      body: JSON.stringify({ name: 'Renamed' }),
    });
    expect(patched.status).toBe(200);
    expect((await hooks.webhooks.get(webhook.id, { environment: 'env-a' })).name).toBe('Renamed');
    // Cross-site, the override changes nothing: refused before anything else.
    const evil = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example.net', 'x-http-method-override': 'DELETE' },
    });
    expect(evil.status).toBe(403);
    // Not JSON: 415, as any write. Another method named, or an override on a GET: 405.
    const form = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}`, { method: 'POST', headers: { 'x-http-method-override': 'DELETE' } });
    expect(form.status).toBe(415);
    for (const [method, asked] of [
      ['POST', 'GET'],
      ['POST', 'TRACE'],
      ['PATCH', 'DELETE'],
    ] as const) {
      const res = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}`, {
        method,
        headers: { ...same, 'x-http-method-override': asked },
        body: '{}',
      });
      expect(res.status, `${method} as ${asked}`).toBe(405);
    }
    expect(await hooks.webhooks.list({ environment: 'env-a' })).toHaveLength(1);
    const deleted = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}`, {
      method: 'POST',
      headers: { ...same, 'x-http-method-override': 'DELETE' },
    });
    expect(deleted.status).toBe(200);
    expect(await hooks.webhooks.list({ environment: 'env-a' })).toEqual([]);
  });

  test('a form post (no JSON type, empty body) to a bodiless action is refused with 415', async () => {
    const { call, hooks } = await setup();
    const webhook = await hooks.webhooks.create(webhookInput);
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', null]) {
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      for (const action of ['disable', 'enable']) {
        const res = await call(`${PREFIX}/api/v1/webhooks/${webhook.id}/${action}`, { method: 'POST', headers, body: '' });
        expect(res.status).toBe(415);
      }
    }
    expect((await hooks.webhooks.get(webhook.id, { environment: 'env-a' })).status).toBe('enabled');
  });

  test('allowedOrigins: the public origin behind a TLS-terminating proxy may write; others still may not', async () => {
    const { call, hooks } = await setup({ allowedOrigins: ['https://admin.example.com'] });
    const webhook = await hooks.webhooks.create(webhookInput);
    const disable = (origin: string, site: string) =>
      call(`${PREFIX}/api/v1/webhooks/${webhook.id}/disable`, {
        method: 'POST',
        headers: { origin, 'sec-fetch-site': site, 'content-type': 'application/json' },
      });
    expect((await disable('https://other.example.com', 'same-site')).status).toBe(403);
    expect((await hooks.webhooks.get(webhook.id, { environment: 'env-a' })).status).toBe('enabled');
    expect((await disable('https://admin.example.com', 'same-site')).status).toBe(200);
    expect((await hooks.webhooks.get(webhook.id, { environment: 'env-a' })).status).toBe('disabled');
  });

  test('allowedOrigins must be exact origins', () => {
    const deps = { api: async () => new Response(), authorize: undefined, onError: () => {} };
    for (const bad of ['https://a.example.com/', 'https://a.example.com/path', 'admin.example.com', 'ftp://a.example.com', 42]) {
      expect(() => createDashboard({ ...deps, allowedOrigins: [bad as string] })).toThrow(TypeError);
    }
    expect(() => createDashboard({ ...deps, allowedOrigins: ['http://localhost:8080'] })).not.toThrow();
  });
});

test('the dashboard imports only the small HTTP helpers and Node built-ins; its browser modules only each other', () => {
  const dir = new URL('../../src/dashboard/', import.meta.url);
  const importsOf = (code: string) => [...code.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    for (const spec of importsOf(readFileSync(new URL(name, dir), 'utf8'))) {
      expect(spec, name).toMatch(/^(\.\/[a-z-]+\.js|\.\.\/http\/(auth|errors|responses|cross-site)\.js|node:[a-z/]+)$/);
    }
  }
  for (const name of readdirSync(new URL('assets/', dir)).filter((n) => n.endsWith('.js'))) {
    const source = readFileSync(new URL(`assets/${name}`, dir), 'utf8');
    for (const spec of importsOf(source.replace(/\/\*[\s\S]*?\*\//g, ''))) expect(spec, name).toMatch(/^\.\/[a-z-]+\.js$/);
    // Type-only imports in JSDoc (for checkJs) may name the server's wire types; no browser loads them.
    for (const m of source.matchAll(/@import\s*\{[^}]*\}\s*from\s*'([^']+)'/g)) {
      expect(m[1], name).toMatch(/^(\.\/[a-z-]+|\.\.\/\.\.\/http\/(errors|wire))\.js$/);
    }
  }
});
