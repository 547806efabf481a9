import { describe, expect, test } from 'vitest';
import { ROUTES } from '../../src/http/routes.js';
import { useCleanups } from '../helpers/cleanup.js';
import { serveHandler } from '../helpers/http.js';
import { client, createBody, engineAndClient, makeHttpEngine } from './setup.js';

/** Authorization fails closed, and one environment never sees or touches another's records. */

const cleanups = useCleanups();

/** A concrete request for every route in the table. */
const everyRoute = () =>
  ROUTES.map((r) => ({
    method: r.method,
    path: r.path.replace('{webhook_id}', 'webhook_x').replace('{event_id}', 'event_x'),
    body: r.method === 'GET' || r.method === 'DELETE' ? undefined : {},
  }));

test('without an authorize hook every management route answers 403; the JWKS and the OpenAPI document stay public', async () => {
  const engine = await makeHttpEngine({ authorize: undefined });
  cleanups.push(() => engine.close());
  const server = await serveHandler(engine.handler);
  cleanups.push(() => server.close());
  const api = client(engine.handler, server.url);
  for (const { method, path, body } of everyRoute()) {
    const res = await api(method, path, { body });
    expect([method, path, res.status, res.json]).toEqual([
      method,
      path,
      403,
      { errors: [{ code: 'INVALID_CREDENTIALS', message: 'the request is not authorized for this API' }] },
    ]);
  }
  expect((await api('GET', '/.well-known/jwks')).status).toBe(200);
  expect((await api('GET', '/api/v1/openapi.json')).status).toBe(200);
});

describe('a refusing or broken authorize hook: 403, same body, nothing leaks, nothing is written', () => {
  const hooks = {
    'returns null': () => null,
    'returns undefined': () => undefined,
    throws: () => {
      throw new Error('token backend at 10.0.0.7 is down');
    },
    rejects: () => Promise.reject(new Error('secret detail')),
    'returns an empty object': () => ({}) as { environment: string },
    'returns a number environment': () => ({ environment: 5 }) as unknown as { environment: string },
    'returns an empty environment': () => ({ environment: '' }),
    'returns a string': () => 'env-a' as unknown as { environment: string },
    'returns a lone surrogate environment': () => ({ environment: 'env-\ud800' }),
    'returns an over-long environment': () => ({ environment: 'e'.repeat(129) }),
  };
  test.each(Object.entries(hooks))('authorize %s', async (name, authorize) => {
    const engine = await makeHttpEngine({ authorize });
    cleanups.push(() => engine.close());
    const api = client(engine.handler, null);
    for (const { method, path, body } of everyRoute()) {
      const res = await api(method, path, { body: body && createBody() });
      expect(res.status).toBe(403);
      expect(res.text).not.toMatch(/10\.0\.0\.7|secret/);
      expect(res.json.errors[0].code).toBe('INVALID_CREDENTIALS');
    }
    expect(await engine.hooks.webhooks.list({ environment: 'env-a' })).toEqual([]);
    // A hook that throws or answers nonsense is a host problem: it is logged, not shown.
    if (!name.startsWith('returns null') && !name.startsWith('returns undefined')) expect(engine.logged.length).toBeGreaterThan(0);
    else expect(engine.logged).toEqual([]);
  });
});

test('the authorize hook sees the real request (headers, method, URL)', async () => {
  const seen: string[] = [];
  const engine = await makeHttpEngine({
    authorize: async (request) => {
      seen.push(`${request.method} ${new URL(request.url).pathname} ${request.headers.get('x-api-key')}`);
      return request.headers.get('x-api-key') === 'k1' ? { environment: 'env-k' } : null;
    },
  });
  cleanups.push(() => engine.close());
  const server = await serveHandler(engine.handler);
  cleanups.push(() => server.close());
  const api = client(engine.handler, server.url);
  expect((await api('POST', '/auth/api/v1/webhooks', { env: null, headers: { 'x-api-key': 'k1' }, body: createBody() })).status).toBe(200);
  expect((await api('GET', '/api/v1/webhooks', { env: null, headers: { 'x-api-key': 'k2' } })).status).toBe(403);
  expect(seen).toEqual(['POST /auth/api/v1/webhooks k1', 'GET /api/v1/webhooks k2']);
  expect(await engine.hooks.webhooks.list({ environment: 'env-k' })).toHaveLength(1);
});

describe.each(['direct', 'http'] as const)('environments are isolated (%s)', (mode) => {
  test("another environment's webhook and event ids answer 404 exactly like ids that never existed", async () => {
    const { engine, api } = await engineAndClient(mode, cleanups);
    const id = (await api('POST', '/api/v1/webhooks', { env: 'env-a', body: createBody() })).json.webhook.id as string;
    const event = await engine.hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_1' } }, environment: 'env-a' });
    const ghost = `webhook_${'0'.repeat(32)}`;

    const attempts = [
      ['GET', `/api/v1/webhooks/{id}`, undefined],
      ['PATCH', `/api/v1/webhooks/{id}`, { name: 'taken over', endpoint: 'https://evil.example.com/' }],
      ['DELETE', `/api/v1/webhooks/{id}`, undefined],
      ['POST', `/api/v1/webhooks/{id}/disable`, undefined],
      ['POST', `/api/v1/webhooks/{id}/enable`, undefined],
    ] as const;
    for (const [method, template, body] of attempts) {
      const theirs = await api(method, template.replace('{id}', id), { env: 'env-b', body });
      const nobodys = await api(method, template.replace('{id}', ghost), { env: 'env-b', body });
      expect([method, theirs.status, theirs.json.errors[0].code]).toEqual([method, 404, 'WEBHOOK_NOT_FOUND']);
      // Same status, code and message (apart from the echoed id): the caller cannot tell them apart.
      expect(theirs.text.replace(id, 'ID')).toBe(nobodys.text.replace(ghost, 'ID'));
    }
    const ev = await api('GET', `/api/v1/events/${event.id}`, { env: 'env-b' });
    expect([ev.status, ev.json.errors[0].code]).toEqual([404, 'EVENT_NOT_FOUND']);
    expect((await api('GET', '/api/v1/webhooks', { env: 'env-b' })).json.webhooks).toEqual([]);

    // env-a's webhook is untouched by all of that.
    const mine = await api('GET', `/api/v1/webhooks/${id}`, { env: 'env-a' });
    expect(mine.json.webhook).toMatchObject({ name: 'CRM sync', endpoint: 'https://crm.example.com/hooks', status: 'enabled' });
    expect((await api('GET', `/api/v1/events/${event.id}`, { env: 'env-a' })).status).toBe(200);
  });
});
