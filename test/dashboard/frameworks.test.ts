import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createDashboard } from '../../src/dashboard/index.js';
import { toNodeHandler } from '../../src/http/index.js';
import { systemClock } from '../../src/index.js';
import { makeEngine } from '../helpers/engine.js';
import { cookieAuth } from './site.js';

/**
 * The README's mounting snippets for the dashboard, each on its real framework on 127.0.0.1 under
 * `/settings/webhooks`, beside a host route: the page at both spellings of the prefix, an asset,
 * a read and a write through the API, and a cross-site write refused.
 */

type Handler = (request: Request) => Promise<Response>;
let engine: Awaited<ReturnType<typeof makeEngine>>;
let dashboard: Handler;
beforeAll(async () => {
  engine = await makeEngine({ clock: systemClock, authorize: cookieAuth });
  dashboard = createDashboard({ api: engine.hooks.handler, authorize: cookieAuth, onError: () => {} });
});
afterAll(() => engine.close());

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
const closeServer = (server: Server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));

const frameworks: Record<string, (dashboard: Handler) => Promise<{ url: string; close(): Promise<void> }>> = {
  'node:http': async (dashboard) => {
    const node = toNodeHandler(dashboard);
    const server = http.createServer((req, res) => {
      const path = req.url?.split('?')[0];
      if (path === '/settings/webhooks' || path?.startsWith('/settings/webhooks/')) return void node(req, res);
      if (path === '/health') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      res.writeHead(404).end();
    });
    return { url: await listen(server), close: () => closeServer(server) };
  },
  'Express 5': async (dashboard) => {
    const app = express();
    app.use('/settings/webhooks', toNodeHandler(dashboard)); // before any body parser
    app.use(express.json());
    app.get('/health', (_req, res) => void res.json({ ok: true }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
  },
  'Fastify 5': async (dashboard) => {
    const app = Fastify();
    const node = toNodeHandler(dashboard);
    await app.register(
      async (scope) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
        const handle = async (request: { raw: http.IncomingMessage }, reply: { hijack(): void; raw: http.ServerResponse }) => {
          reply.hijack();
          await node(request.raw, reply.raw);
        };
        scope.all('/', handle);
        scope.all('/*', handle);
      },
      { prefix: '/settings/webhooks' },
    );
    app.get('/health', async () => ({ ok: true }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  Hono: async (dashboard) => {
    const app = new Hono();
    app.all('/settings/webhooks', (c) => dashboard(c.req.raw));
    app.all('/settings/webhooks/*', (c) => dashboard(c.req.raw));
    app.get('/health', (c) => c.json({ ok: true }));
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
  },
};

describe.each(Object.entries(frameworks))('the dashboard mounted in %s', (name, mount) => {
  test('page, asset, API read and write, cross-site refusal, and the host’s own route', async () => {
    const site = await mount(dashboard);
    const env = `env-fw-${name.replace(/\W+/g, '-').toLowerCase()}`.replace(/-+$/, '');
    const cookie = { cookie: `session=${env}` };
    try {
      for (const path of ['/settings/webhooks', '/settings/webhooks/']) {
        const page = await fetch(`${site.url}${path}`, { headers: cookie });
        expect(page.status, path).toBe(200);
        expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
        const html = await page.text();
        const script = /src="([^"]+bundle-en\.[0-9a-f]{12}\.js)"/.exec(html)![1]!;
        const asset = await fetch(`${site.url}${script}`);
        expect(asset.status).toBe(200);
        expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      }
      expect((await fetch(`${site.url}/settings/webhooks`)).status).toBe(403);
      const body = JSON.stringify({ name: 'From a framework', endpoint: 'https://hooks.example.com/in', event_types: ['user.created'] });
      const json = { ...cookie, 'content-type': 'application/json' };
      const refused = await fetch(`${site.url}/settings/webhooks/api/v1/webhooks`, {
        method: 'POST',
        headers: { ...json, origin: 'https://elsewhere.example.net' },
        body,
      });
      expect(refused.status).toBe(403);
      const created = await fetch(`${site.url}/settings/webhooks/api/v1/webhooks`, {
        method: 'POST',
        headers: { ...json, origin: site.url },
        body,
      });
      expect(created.status).toBe(200);
      const list = await (await fetch(`${site.url}/settings/webhooks/api/v1/webhooks`, { headers: cookie })).json();
      expect(list.webhooks.map((w: { name: string }) => w.name)).toEqual(['From a framework']);
      expect(await (await fetch(`${site.url}/health`)).json()).toEqual({ ok: true });
    } finally {
      await site.close();
    }
  });
});
