import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { toNodeHandler } from '../../src/http/node.js';
import { rawRequest } from './raw-http.js';
import { makeHttpEngine, type TestEngine } from './setup.js';

// The OpenAPI document is the same whatever the request's Host header says: it is served
// `cache-control: public`, so a forged Host would otherwise poison a shared cache.

let engine: TestEngine;
beforeAll(async () => {
  engine = await makeHttpEngine();
});
afterAll(() => engine.close());

const fetchDoc = async (url: string, host?: string) => {
  const res = await engine.handler(new Request(url, host ? { headers: { host } } : {}));
  return { cache: res.headers.get('cache-control'), body: await res.text() };
};

test('two requests with different Host headers get byte-identical bodies', async () => {
  const a = await fetchDoc('https://auth.example.com/auth/api/v1/openapi.json');
  const b = await fetchDoc('https://evil.example:666/auth/api/v1/openapi.json', 'evil.example:666');
  expect(a.cache).toBe('public, max-age=300');
  expect(b.body).toBe(a.body);
  expect(a.body).not.toMatch(/example\.com|evil/);
  expect(JSON.parse(a.body).servers).toEqual([{ url: '/auth' }]);
  expect(JSON.parse((await fetchDoc('http://x/api/v1/openapi.json')).body).servers).toEqual([{ url: '/' }]);
});

test('over node:http too, where the Host header is what builds the request URL', async () => {
  const server = http.createServer(toNodeHandler(engine.hooks.handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const [a, b] = await Promise.all(
      ['auth.example.com', 'attacker.example'].map((host) => rawRequest(port, `GET /tenant/api/v1/openapi.json HTTP/1.1\r\nHost: ${host}`)),
    );
    expect(a!.status).toBe(200);
    expect(b!.body).toBe(a!.body);
    // Neither Host (event types have a field named `example`: look for the hosts themselves).
    expect(a!.body).not.toContain('auth.example.com');
    expect(a!.body).not.toContain('attacker.example');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('the relative server resolves, against where the document was fetched, to where the API is', async () => {
  const documentUrl = 'https://auth.example.com/tenant/api/v1/openapi.json';
  const doc = JSON.parse((await fetchDoc(documentUrl)).body);
  const base = new URL(doc.servers[0].url, documentUrl).href.replace(/\/$/, '');
  expect(`${base}/api/v1/webhooks`).toBe('https://auth.example.com/tenant/api/v1/webhooks');
  expect(doc.paths['/api/v1/webhooks']).toBeDefined();
});
