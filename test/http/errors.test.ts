import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { HttpError, toErrorResponse } from '../../src/http/errors.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { WebhooksError, type WebhooksErrorCode } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { serveHandler } from '../helpers/http.js';
import { checkResponse } from '../helpers/openapi-check.js';
import { client, createBody, makeHttpEngine } from './setup.js';

/** Failures: the one error mapping, store failures, shutdown, the SSRF guard, and the checker itself. */

const cleanups = useCleanups();

describe('the error mapping', () => {
  const cases: Array<[WebhooksErrorCode, number, string]> = [
    ['ERR_VALIDATION', 400, 'INVALID_REQUEST'],
    ['ERR_UNKNOWN_EVENT_TYPE', 400, 'UNKNOWN_EVENT_TYPE'],
    ['ERR_NOT_FOUND', 404, 'WEBHOOK_NOT_FOUND'],
    ['ERR_LIMIT_REACHED', 400, 'WEBHOOK_LIMIT_REACHED'],
    ['ERR_PAYLOAD_TOO_LARGE', 413, 'PAYLOAD_TOO_LARGE'],
    ['ERR_ENDPOINT_NOT_ALLOWED', 400, 'ENDPOINT_NOT_ALLOWED'],
    ['ERR_CLOSED', 503, 'SERVICE_UNAVAILABLE'],
  ];
  test.each(cases)('%s is %i %s, with the engine message', async (code, status, wire) => {
    const logged: unknown[] = [];
    const res = toErrorResponse(new WebhooksError(code, 'what went wrong'), 'webhook', (_m, e) => logged.push(e));
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ errors: [{ code: wire, message: 'what went wrong' }] });
    expect(logged).toEqual([]);
  });

  test('validation errors get a code from the field they name', async () => {
    for (const [field, wire] of [
      ['name', 'INVALID_NAME'],
      ['event_types[3]', 'INVALID_EVENT_TYPES'],
      ['endpoint', 'INVALID_ENDPOINT'],
      ['description', 'INVALID_DESCRIPTION'],
      ['data.user', 'INVALID_REQUEST'],
      ['__proto__', 'INVALID_REQUEST'],
    ]) {
      const res = toErrorResponse(new WebhooksError('ERR_VALIDATION', 'm', { field }), undefined, () => {});
      expect([field, ((await res.json()) as any).errors[0].code]).toEqual([field, wire]);
    }
  });

  test('store failures and anything unknown: a logged 500 that says nothing', async () => {
    const secrets = [
      new WebhooksError('ERR_STORE', 'store failed at db.internal:5432', { cause: new Error('password=hunter2') }),
      new Error('/etc/secret path'),
      'a string',
      null,
      new WebhooksError('ERR_MADE_UP' as WebhooksErrorCode, 'x'),
    ];
    for (const error of secrets) {
      const logged: unknown[] = [];
      const res = toErrorResponse(error, 'webhook', (_m, e) => logged.push(e));
      expect(res.status).toBe(500);
      expect(await res.text()).toBe('{"errors":[{"code":"INTERNAL_ERROR","message":"internal error"}]}');
      expect(logged).toEqual([error]);
    }
    // A code outside the union does not compile; at run time its status still passes through.
    // @ts-expect-error: not an HttpErrorCode
    expect(toErrorResponse(new HttpError('TEAPOT', 'short and stout', { status: 418 }), undefined, () => {}).status).toBe(418);
  });
});

test('a store that fails mid-request: 500 over real HTTP, nothing of SQLite in the answer, the cause logged', async () => {
  const engine = await makeHttpEngine();
  cleanups.push(() => engine.close());
  const server = await serveHandler(engine.handler);
  cleanups.push(() => server.close());
  const api = client(engine.handler, server.url);
  expect((await api('POST', '/api/v1/webhooks', { body: createBody() })).status).toBe(200);
  // Break the database from outside, as a bad migration or an operator would.
  const other = new Database(engine.file);
  other.exec('DROP TABLE iw_webhooks');
  other.close();
  for (const [method, path, body] of [
    ['GET', '/api/v1/webhooks', undefined],
    ['POST', '/api/v1/webhooks', createBody()],
  ] as const) {
    const res = await api(method, path, { body });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ errors: [{ code: 'INTERNAL_ERROR', message: 'internal error' }] });
  }
  expect(engine.logged.join('\n')).toMatch(/no such table/);
});

test('a closed engine answers 503, not 500', async () => {
  const engine = await makeHttpEngine();
  cleanups.push(() => engine.close());
  await engine.hooks.close();
  const res = await client(engine.handler, null)('GET', '/api/v1/webhooks');
  expect([res.status, res.json.errors[0].code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
});

test('the SSRF guard over HTTP: private endpoints are refused with ENDPOINT_NOT_ALLOWED, on create and on PATCH', async () => {
  const engine = await makeHttpEngine({
    allowPrivateNetworks: false,
    resolver: async (host) =>
      host === 'intranet.example.com' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '93.184.215.14', family: 4 }],
  });
  cleanups.push(() => engine.close());
  const api = client(engine.handler, null);
  for (const endpoint of [
    'http://127.0.0.1:8080/hook',
    'http://169.254.169.254/latest/meta-data',
    'https://intranet.example.com/hook',
    'http://[::1]/x',
  ]) {
    const res = await api('POST', '/api/v1/webhooks', { body: createBody({ endpoint }) });
    expect([endpoint, res.status, res.json.errors[0].code]).toEqual([endpoint, 400, 'ENDPOINT_NOT_ALLOWED']);
  }
  const id = (await api('POST', '/api/v1/webhooks', { body: createBody({ endpoint: 'https://public.example.com/hook' }) })).json.webhook.id;
  const moved = await api('PATCH', `/api/v1/webhooks/${id}`, { body: { endpoint: 'http://10.0.0.1/' } });
  expect([moved.status, moved.json.errors[0].code]).toEqual([400, 'ENDPOINT_NOT_ALLOWED']);
  expect((await engine.hooks.webhooks.get(id, { environment: 'env-a' })).endpoint).toBe('https://public.example.com/hook');
});

describe('the OpenAPI checker catches what it should (so "0 bad" means something)', () => {
  const doc = openApiDocument();
  const check = (method: string, path: string, status: number, body: unknown, headers: Record<string, string> = {}) =>
    checkResponse(doc, {
      method,
      url: `http://x${path}`,
      status,
      headers: new Headers({ 'content-type': 'application/json', ...headers }),
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).problems;
  const webhook = {
    id: 'webhook_1',
    name: 'n',
    endpoint: 'https://e.example/',
    description: null,
    event_types: [],
    created_on: '2024-01-01T00:00:00.000Z',
    status: 'enabled',
    disabled_reason: null,
    disabled_on: null,
    failing_since: null,
    last_error: null,
    updated_on: '2024-01-01T00:00:00.000Z',
  };

  test('a conforming response passes', () => {
    expect(check('GET', '/api/v1/webhooks', 200, { code: 'OK', message: 'Success', webhooks: [webhook] })).toEqual([]);
  });
  test.each([
    [
      'an undocumented field',
      'GET',
      '/api/v1/webhooks',
      200,
      { code: 'OK', message: 'm', webhooks: [{ ...webhook, secret: 's' }] },
      /secret.*not an allowed property/,
    ],
    [
      'a missing field',
      'GET',
      '/api/v1/webhooks',
      200,
      { code: 'OK', message: 'm', webhooks: [{ ...webhook, created_on: undefined }] },
      /created_on is required/,
    ],
    [
      'a non-ISO created_on',
      'GET',
      '/api/v1/webhooks',
      200,
      { code: 'OK', message: 'm', webhooks: [{ ...webhook, created_on: 1704067200000 }] },
      /created_on/,
    ],
    [
      'an undeclared success code',
      'POST',
      '/api/v1/webhooks',
      200,
      { code: 'OK', message: 'm', webhook: { id: 'w', endpoint: 'https://e.example/' } },
      /code must be one of/,
    ],
    ['an undeclared status', 'GET', '/api/v1/event_types', 404, { errors: [{ code: 'X', message: 'm' }] }, /404 is not declared/],
    ['an error without errors[]', 'DELETE', '/api/v1/webhooks/w', 404, { code: 'X', message: 'm' }, /errors is required/],
    ['a 200 for an undocumented path', 'GET', '/api/v1/secrets', 200, { code: 'OK' }, /not 404/],
    ['a 405 with the wrong Allow', 'PUT', '/api/v1/webhooks', 405, { errors: [{ code: 'METHOD_NOT_ALLOWED', message: 'm' }] }, /allow is/],
    ['a body that is not JSON', 'GET', '/api/v1/webhooks', 200, 'oops', /not JSON/],
  ] as const)('%s', (_what, method, path, status, body, problem) => {
    expect(check(method, path, status, body, { allow: 'GET' }).join('; ')).toMatch(problem);
  });
});
