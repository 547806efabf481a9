import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { checkEndpoint } from '../../src/delivery/guard/check.js';
import { cachingResolver, createGuard, defaultResolver, type ResolvedAddress } from '../../src/delivery/guard/guard.js';
import { httpTransport } from '../../src/delivery/transport.js';

// The guard's default resolver keeps the system resolver's answers 10 s, with one question in
// flight per name (guard.ts). Every answer is still checked at every attempt.

/** A resolver whose answers the test scripts, counting questions; `gate` holds answers back. */
function counting(table: Record<string, string[] | Error>) {
  const calls: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    calls.push(host);
    await gate;
    const answer = table[host];
    if (answer instanceof Error) throw answer;
    return (answer ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }) as ResolvedAddress);
  };
  return { resolve, calls, hold: (g: Promise<void>) => void (gate = g) };
}

test('64 deliveries asking for one name at once cause one question; answers are kept for the TTL, then asked again', async () => {
  let now = 1_000;
  const dns = counting({ 'hooks.example': ['93.184.215.14'] });
  let open!: () => void;
  dns.hold(new Promise((r) => (open = r)));
  const resolver = cachingResolver(dns.resolve, { ttlMs: 10_000, now: () => now });
  const pending = Array.from({ length: 64 }, () => resolver('hooks.example'));
  open();
  const answers = await Promise.all(pending);
  expect(dns.calls).toEqual(['hooks.example']);
  expect(new Set(answers.map((a) => a[0]!.address))).toEqual(new Set(['93.184.215.14']));

  now += 9_999;
  await resolver('hooks.example');
  expect(dns.calls).toHaveLength(1);
  now += 1;
  await resolver('hooks.example');
  expect(dns.calls).toHaveLength(2);
  await resolver('other.example');
  expect(dns.calls).toEqual(['hooks.example', 'hooks.example', 'other.example']);
});

test('failures and empty answers are not kept: the next attempt asks again', async () => {
  const dns = counting({ 'nx.example': Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), 'empty.example': [] });
  const resolver = cachingResolver(dns.resolve, { ttlMs: 10_000 });
  await expect(resolver('nx.example')).rejects.toThrow('ENOTFOUND');
  await expect(resolver('nx.example')).rejects.toThrow('ENOTFOUND');
  expect(await resolver('empty.example')).toEqual([]);
  expect(await resolver('empty.example')).toEqual([]);
  expect(dns.calls).toEqual(['nx.example', 'nx.example', 'empty.example', 'empty.example']);
});

test('at most maxNames names are kept, the oldest dropped first', async () => {
  const dns = counting({ a: ['93.184.215.1'], b: ['93.184.215.2'], c: ['93.184.215.3'] });
  const resolver = cachingResolver(dns.resolve, { ttlMs: 60_000, maxNames: 2 });
  for (const host of ['a', 'b', 'c', 'c', 'b', 'a']) await resolver(host);
  expect(dns.calls).toEqual(['a', 'b', 'c', 'a']);
});

test('a cached answer is checked again at every attempt, against the asking guard', async () => {
  const dns = counting({ 'hooks.internal.example': ['10.1.2.3'] });
  const resolver = cachingResolver(dns.resolve, { ttlMs: 60_000 });
  const strict = createGuard({ resolver });
  const lax = createGuard({ resolver, allowHosts: ['hooks.internal.example'] });
  await expect(checkEndpoint('https://hooks.internal.example/x', lax)).resolves.toMatchObject({ addresses: [{ address: '10.1.2.3' }] });
  await expect(checkEndpoint('https://hooks.internal.example/x', strict)).rejects.toMatchObject({ code: 'ERR_ENDPOINT_NOT_ALLOWED' });
  expect(dns.calls).toHaveLength(1);
});

test('a guard built without a resolver uses the cached system resolver; one given is asked at every attempt', async () => {
  expect(createGuard({}).resolver).toBe(defaultResolver);
  const server = createServer((_req, res) => res.end('ok'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const dns = counting({ 'hooks.test': ['127.0.0.1'] });
  const transport = httpTransport({ guard: { resolver: dns.resolve, allowHosts: ['127.0.0.1'] } });
  try {
    for (let i = 0; i < 3; i++) {
      const res = await transport.send({ url: `http://hooks.test:${port}/`, headers: {}, body: 'x', timeoutMs: 5000 });
      expect(res).toEqual({ status: 200, excerpt: 'ok' });
    }
    expect(dns.calls).toEqual(['hooks.test', 'hooks.test', 'hooks.test']);
  } finally {
    await transport.close?.();
    server.close();
  }
});
