import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { serve } from '@hono/node-server';
import express from 'express';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createExpressApp } from '../../examples/frameworks/express.js';
import { createFastifyApp } from '../../examples/frameworks/fastify.js';
import { createHonoApp } from '../../examples/frameworks/hono.js';
import { createNodeServer } from '../../examples/frameworks/node-http.js';
import { toNodeHandler } from '../../src/http/index.js';
import { client, createBody, type Handler, makeHttpEngine, type TestEngine } from './setup.js';

/**
 * The documented mounting examples, each run on its real framework on 127.0.0.1 under `/auth`,
 * through the same scenario. Every response is checked against the OpenAPI document.
 */

let engine: TestEngine;
beforeAll(async () => {
  engine = await makeHttpEngine();
});
afterAll(() => engine.close());

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
const closeServer = (server: Server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));

const frameworks: Record<string, (handler: Handler) => Promise<{ url: string; close(): Promise<void> }>> = {
  'node:http': async (handler) => {
    const server = createNodeServer(handler);
    return { url: await listen(server), close: () => closeServer(server) };
  },
  'Express 5': async (handler) => {
    const server = createExpressApp(handler).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
  },
  'Express 5, mounted after express.json()': async (handler) => {
    const app = express();
    app.use(express.json({ limit: '1mb' }));
    app.use('/auth', toNodeHandler(handler));
    app.get('/health', (_req, res) => void res.json({ ok: true }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
  },
  'Fastify 5': async (handler) => {
    const app = await createFastifyApp(handler);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  Hono: async (handler) => {
    const app = createHonoApp(handler);
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
  },
};

describe.each(Object.keys(frameworks))('%s', (name) => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ url, close } = await frameworks[name]!(engine.handler));
  });
  afterAll(() => close());
  const env = `env-${name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/-$/, '')}`;

  test('every route, under /auth, beside the host routes', async () => {
    const api = client(engine.handler, url);
    const opts = (o: Parameters<typeof api>[2] = {}) => ({ env, ...o });
    expect((await api('GET', '/health', { env: null })).json).toEqual({ ok: true });
    expect((await api('GET', '/auth/.well-known/jwks', { env: null })).json.keys).toHaveLength(1);
    expect((await api('GET', '/auth/api/v1/openapi.json', { env: null })).json.servers).toEqual([{ url: '/auth' }]);

    const created = await api('POST', '/auth/api/v1/webhooks', opts({ body: createBody() }));
    expect([created.status, created.json.code]).toEqual([200, 'WEBHOOK_CREATED']);
    const id = created.json.webhook.id;
    expect((await api('GET', '/auth/api/v1/webhooks', opts())).json.webhooks).toHaveLength(1);
    expect((await api('PATCH', `/auth/api/v1/webhooks/${id}`, opts({ body: { name: 'renamed' } }))).json.code).toBe('WEBHOOK_UPDATED');
    expect((await api('GET', `/auth/api/v1/webhooks/${id}`, opts())).json.webhook.name).toBe('renamed');
    expect((await api('POST', `/auth/api/v1/webhooks/${id}/disable`, opts())).json.webhook.status).toBe('disabled');
    expect((await api('POST', `/auth/api/v1/webhooks/${id}/enable`, opts({ body: { resume_held: true } }))).json.webhook.status).toBe(
      'enabled',
    );
    expect((await api('GET', '/auth/api/v1/event_types', opts())).status).toBe(200);
    const event = await engine.hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_1' } }, environment: env });
    expect((await api('GET', `/auth/api/v1/events/${event.id}`, opts())).json.event.event_id).toBe(event.id);
    expect((await api('DELETE', `/auth/api/v1/webhooks/${id}`, opts())).json.code).toBe('WEBHOOK_DELETED');
    expect((await api('DELETE', `/auth/api/v1/webhooks/${id}`, opts())).status).toBe(404);
  });

  test('refusals keep their shape through the framework: 403, 400, 415, 405, 404', async () => {
    const api = client(engine.handler, url);
    const codeOf = async (...args: Parameters<typeof api>) => {
      const res = await api(...args);
      return [res.status, res.json?.errors?.[0]?.code];
    };
    expect(await codeOf('GET', '/auth/api/v1/webhooks', { env: null })).toEqual([403, 'INVALID_CREDENTIALS']);
    expect(await codeOf('POST', '/auth/api/v1/webhooks', { env, body: createBody({ event_types: [] }) })).toEqual([
      400,
      'INVALID_EVENT_TYPES',
    ]);
    expect(await codeOf('PUT', '/auth/api/v1/webhooks', { env })).toEqual([405, 'METHOD_NOT_ALLOWED']);
    expect(await codeOf('GET', '/auth/api/v1/nothing', { env })).toEqual([404, 'ROUTE_NOT_FOUND']);
    if (!name.includes('express.json')) {
      // A parser that ran first has already decided about these; see the example's note.
      expect(
        await codeOf('POST', '/auth/api/v1/webhooks', { env, raw: '{"name":', headers: { 'content-type': 'application/json' } }),
      ).toEqual([400, 'INVALID_JSON']);
      expect(
        await codeOf('POST', '/auth/api/v1/webhooks', {
          env,
          raw: JSON.stringify(createBody()),
          headers: { 'content-type': 'text/plain' },
        }),
      ).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    }
  });

  test('a 1 MiB body, declared or chunked, gets a 413 (not a reset), and the server keeps serving', async () => {
    const api = client(engine.handler, url);
    const big = JSON.stringify(createBody({ description: 'd'.repeat(1 << 20) }));
    const declared = await api('POST', '/auth/api/v1/webhooks', { env, raw: big, headers: { 'content-type': 'application/json' } });
    const chunks = Readable.from(
      (function* () {
        for (let i = 0; i < 64; i++) yield Buffer.alloc(16 * 1024, 0x20);
      })(),
    );
    const chunked = await api('POST', '/auth/api/v1/webhooks', {
      env,
      raw: Readable.toWeb(chunks) as unknown as string,
      headers: { 'content-type': 'application/json' },
    });
    if (name.includes('express.json')) {
      // express.json() answered these itself (its own limit and error page): why the example mounts first.
      expect(declared.status).toBe(413);
      expect([400, 413]).toContain(chunked.status);
    } else {
      expect([declared.status, declared.json.errors[0].code, chunked.status, chunked.json.errors[0].code]).toEqual([
        413,
        'PAYLOAD_TOO_LARGE',
        413,
        'PAYLOAD_TOO_LARGE',
      ]);
    }
    expect((await api('GET', '/auth/api/v1/webhooks', { env })).status).toBe(200);
  });
});
