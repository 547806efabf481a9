import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { type NodeHandlerOptions, toNodeHandler } from '../../src/http/node.js';
import { createReceiver, createVerifier } from '../../src/receiver/index.js';
import { rawRequest } from './raw-http.js';
import { makeHttpEngine, type TestEngine } from './setup.js';

// toNodeHandler over real node:http, driven by raw sockets so the tests can
// send what clients refuse to (a Host of `a b`, TRACE). Node itself passes all of these on.

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

async function listen(handler: (request: Request) => Promise<Response>, options?: NodeHandlerOptions): Promise<number> {
  const server = http.createServer(toNodeHandler(handler, options));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as AddressInfo).port;
}

let engine: TestEngine;
let port: number;
const logged: string[] = [];
beforeAll(async () => {
  engine = await makeHttpEngine();
  closers.push(() => engine.close());
  port = await listen(engine.hooks.handler, { onError: (message) => logged.push(message) });
});

const envelope = (code: string) => ({ errors: [{ code, message: expect.any(String) }] });

describe('a malformed Host header is 400, not 500', () => {
  test.each(['a b', '[::1', 'a:99999999', 'u@a', '', 'a/b', 'a?b', 'a#b', 'a\\b', '[::1]x', 'a:-1'])('Host: %j', async (host) => {
    const res = await rawRequest(port, `GET /.well-known/jwks HTTP/1.1\r\nHost: ${host}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual({ errors: [{ code: 'INVALID_HOST', message: 'malformed host' }] });
    expect(logged).toEqual([]);
  });

  test.each(['auth.example.com', 'auth.example.com:8443', '127.0.0.1:80', '[::1]:3000', 'xn--n3h.example', 'A.EXAMPLE'])(
    'a well-formed Host passes: %j',
    async (host) => {
      const res = await rawRequest(port, `GET /.well-known/jwks HTTP/1.1\r\nHost: ${host}`);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).keys).toHaveLength(1);
    },
  );

  test('an HTTP/1.0 request without Host is served (as localhost)', async () => {
    expect((await rawRequest(port, 'GET /.well-known/jwks HTTP/1.0')).status).toBe(200);
  });

  test('a body sent with a refused request is drained, so the client reads the 400', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(10_000) });
    const res = await rawRequest(port, `POST /api/v1/webhooks HTTP/1.1\r\nHost: a b\r\ncontent-length: ${body.length}`, body);
    expect(res.status).toBe(400);
  });
});

describe('methods a web Request cannot carry are 405 with the Allow of the path', () => {
  test.each([
    ['TRACE', '/api/v1/webhooks', 'GET, POST'],
    ['TRACE', '/auth/api/v1/webhooks/webhook_1', 'GET, PATCH, DELETE'], // node's parser refuses TRACK itself
    ['TRACE', '/.well-known/jwks', 'GET, HEAD'],
    ['TRACE', '/api/v1/openapi.json', 'GET'],
  ])('%s %s', async (method, path, allow) => {
    const res = await rawRequest(port, `${method} ${path} HTTP/1.1\r\nHost: auth.example.com`);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(JSON.parse(res.body)).toEqual({
      errors: [{ code: 'METHOD_NOT_ALLOWED', message: `${method} is not allowed here (allowed: ${allow})` }],
    });
  });

  test('TRACE on a path that does not exist is 404, as any method there', async () => {
    const res = await rawRequest(port, 'TRACE /nope HTTP/1.1\r\nHost: auth.example.com');
    expect([res.status, JSON.parse(res.body)]).toEqual([404, envelope('ROUTE_NOT_FOUND')]);
  });

  test('a path with an empty segment is 404 over node:http too', async () => {
    for (const target of ['//api/v1/webhooks', '/api/v1//webhooks', '//.well-known/jwks']) {
      const res = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: auth.example.com`);
      expect([target, res.status, JSON.parse(res.body)]).toEqual([target, 404, envelope('ROUTE_NOT_FOUND')]);
    }
  });

  test('other methods reach the handler, which answers them itself', async () => {
    const res = await rawRequest(port, 'PUT /api/v1/webhooks HTTP/1.1\r\nHost: auth.example.com\r\ncontent-length: 0');
    expect([res.status, res.headers.allow]).toEqual([405, 'GET, POST']);
  });

  test('the glue asks whatever handler it wraps: a receiver allows POST', async () => {
    const receive = createReceiver({ verifier: createVerifier({ issuer: 'https://auth.example.com', jwks: { keys: [] } }), on: {} });
    const receiverPort = await listen(receive);
    const res = await rawRequest(receiverPort, 'TRACE /webhooks HTTP/1.1\r\nHost: receiver.example');
    expect([res.status, res.headers.allow]).toEqual([405, 'POST']);
  });
});

describe('the request target', () => {
  test.each(['http://[::1/x', 'http://a:99999999/x', 'https://'])(
    'an absolute-form target that is not a URL is 400: %s',
    async (target) => {
      const res = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: auth.example.com`);
      expect([res.status, JSON.parse(res.body)]).toEqual([
        400,
        { errors: [{ code: 'INVALID_REQUEST_TARGET', message: 'malformed request target' }] },
      ]);
    },
  );

  test('an origin-form target starting with // stays a path: the Host header names the host', async () => {
    let seen = '';
    const echo = await listen(async (request) => ((seen = request.url), new Response('ok')));
    await rawRequest(echo, 'GET //evil.example/x HTTP/1.1\r\nHost: auth.example.com');
    expect(seen).toBe('http://auth.example.com//evil.example/x');
  });
});

describe('every 500 of the glue is logged', () => {
  test('a handler that throws: 500 in the error envelope, nothing of the error in it, onError told', async () => {
    const told: Array<[string, unknown]> = [];
    const boom = new Error('secret detail');
    const failing = await listen(
      async () => {
        throw boom;
      },
      { onError: (message, error) => told.push([message, error]) },
    );
    const res = await rawRequest(failing, 'GET /x HTTP/1.1\r\nHost: auth.example.com');
    expect([res.status, JSON.parse(res.body)]).toEqual([500, { errors: [{ code: 'INTERNAL_ERROR', message: 'internal error' }] }]);
    expect(res.body).not.toContain('secret');
    expect(told).toEqual([['GET /x failed in the Node glue; answered 500', boom]]);
  });

  test('a response body that fails after the headers: the connection is dropped and logged', async () => {
    const told: string[] = [];
    const breaking = await listen(
      async () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              controller.error(new Error('stream broke'));
            },
          }),
        ),
      { onError: (message) => told.push(message) },
    );
    await rawRequest(breaking, 'GET /x HTTP/1.1\r\nHost: auth.example.com').catch(() => null);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^GET \/x failed/);
  });

  test('by default to console.error, with the library prefix', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const failing = await listen(async () => {
        throw new Error('boom');
      });
      expect((await rawRequest(failing, 'GET /y HTTP/1.1\r\nHost: a')).status).toBe(500);
      expect(spy).toHaveBeenCalledWith('[identity-webhooks] GET /y failed in the Node glue; answered 500', expect.any(Error));
    } finally {
      spy.mockRestore();
    }
  });

  test('onError that is not a function is a TypeError at once', () => {
    expect(() => toNodeHandler(engine.hooks.handler, { onError: 'log' as never })).toThrow(TypeError);
  });
});
