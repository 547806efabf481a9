import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDashboard } from '../../src/dashboard/index.js';
import { toNodeHandler } from '../../src/http/node.js';
import { systemClock, type WebhooksOptions } from '../../src/index.js';
import { makeEngine } from '../helpers/engine.js';
import { conforming } from '../http/setup.js';

/**
 * A host as the browser tests see it: a real engine on a real SQLite file (system clock, the SSRF
 * guard on, with 127.0.0.1 let through for the test receiver), the dashboard mounted at
 * `/settings/webhooks` on a real node:http server through the repo's own `toNodeHandler`, and a
 * cookie session: `session=env-x` is environment env-x. Every answer the dashboard gives is
 * recorded, and every management API answer is checked against the OpenAPI document.
 */

export const PREFIX = '/settings/webhooks';

/** A cookie session (`session=env-x`) or a bearer token (`Bearer env-x`) is environment env-x. */
export function cookieAuth(request: Request) {
  const m =
    /(?:^|;\s*)session=(env-[a-z0-9-]+)/.exec(request.headers.get('cookie') ?? '') ??
    /^Bearer (env-[a-z0-9-]+)$/.exec(request.headers.get('authorization') ?? '');
  return m ? { environment: m[1]! } : null;
}

export interface Served {
  method: string;
  path: string;
  status: number;
  code: string | null;
}

/** The host's own files beside the dashboard (path → content type and body), e.g. an admin page embedding the element. */
export type HostFiles = Record<string, { type: string; body: string }>;

export async function startSite(options: Partial<WebhooksOptions> = {}, hostFiles: HostFiles = {}) {
  const engine = await makeEngine({
    clock: systemClock,
    authorize: cookieAuth,
    allowPrivateNetworks: false,
    allowHosts: ['127.0.0.1'],
    delivery: { timeoutMs: 2000, pollIntervalMs: 100 },
    backoff: { schedule: [150], jitter: 0 },
    ...options,
  });
  await engine.hooks.start();
  const errors: string[] = [];
  const dashboard = createDashboard({
    api: conforming(engine.hooks.handler),
    authorize: cookieAuth,
    onError: (message, error) => errors.push(`${message}: ${String(error)}`),
  });
  const served: Served[] = [];
  const node = toNodeHandler(async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname !== PREFIX && !pathname.startsWith(`${PREFIX}/`)) {
      const file = hostFiles[pathname];
      // The host's own pages get a strict policy too: the element must work under one.
      const csp = "default-src 'self'; frame-ancestors 'none'";
      if (file) return new Response(file.body, { headers: { 'content-type': file.type, 'content-security-policy': csp } });
      return new Response('the host’s own 404', { status: 404 });
    }
    const response = await dashboard(request);
    let code: string | null = null;
    if (response.headers.get('content-type')?.startsWith('application/json'))
      code = (await response.clone().json())?.errors?.[0]?.code ?? null;
    served.push({ method: request.method, path: pathname, status: response.status, code });
    return response;
  });
  const server = http.createServer((req, res) => void node(req, res));
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    hooks: engine.hooks,
    engine,
    origin,
    url: `${origin}${PREFIX}`,
    served,
    errors,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await engine.close();
    },
  };
}

export type Site = Awaited<ReturnType<typeof startSite>>;

/** A page on another origin (the attacker's): serves `html` at `/`, on `host` (127.0.0.1 = same site, 127.0.0.2 = another site). */
export async function startOtherOrigin(host: string, html: string) {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
