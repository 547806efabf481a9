import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { describe, expect, test } from 'vitest';
import { checkEndpoint } from '../../src/delivery/guard/check.js';
import { createGuard, type ResolvedAddress, type Resolver } from '../../src/delivery/guard/guard.js';
import { httpTransport, TransportError, type Webhooks, WebhooksError } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';

// The SSRF guard against real sockets on 127.0.0.1 / 127.0.0.2.
// 127.0.0.2 is a second loopback address: it plays "the internal service" the attacker wants to
// reach, so that a guard failure shows up as a request arriving where it must not.

interface Server {
  url: string;
  host: string;
  port: number;
  hits: Array<{ path: string; body: string }>;
  close(): Promise<void>;
}

async function listen(host: string, port: number, answer: (res: http.ServerResponse) => void = (res) => res.end('ok')): Promise<Server> {
  const hits: Server['hits'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const bound = (server.address() as AddressInfo).port;
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://${host}:${bound}`, host, port: bound, hits, close: async () => void server.closeAllConnections() };
}

/** A resolver for `*.test` names whose answers the test scripts, counting every question. */
function scriptedResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolver: Resolver = async (hostname) => {
    calls.push(hostname);
    const answer = table[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolver, calls, table };
}

/** Answers `first` once, then `after` for every later question (the classic rebinding server). */
function rebindingResolver(first: string, after: string) {
  let next = first;
  const calls: string[] = [];
  const resolver: Resolver = async (hostname) => {
    calls.push(hostname);
    const address = next;
    next = after;
    return [{ address, family: 4 }];
  };
  return { resolver, calls, reset: () => void (next = first) };
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const cleanups = useCleanups();

async function engine(overrides: Parameters<typeof makeEngine>[0] = {}) {
  const e = await makeEngine({ allowPrivateNetworks: false, ...overrides });
  cleanups.push(() => e.close());
  await e.hooks.start();
  return e;
}

const create = (hooks: Webhooks, endpoint: string) => hooks.webhooks.create({ name: 'w', endpoint, eventTypes: ['user.created'] });

async function refusal(promise: Promise<unknown>): Promise<WebhooksError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhooksError);
  return error as WebhooksError;
}

describe('at creation', () => {
  test.each([
    'http://127.0.0.1:8080/hooks',
    'http://127.1/',
    'http://0x7f000001/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://0/',
    'http://0.0.0.0:9/',
    'http://169.254.169.254/latest/meta-data/iam/',
    'http://[::ffff:169.254.169.254]/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'https://[64:ff9b::a9fe:a9fe]/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.0.1/',
    'http://100.64.0.1/',
    'http://[fc00::1]/',
    'http://[fe80::1]/',
    'http://224.0.0.1/',
  ])('%s is refused with ERR_ENDPOINT_NOT_ALLOWED', async (endpoint) => {
    const { hooks } = await engine();
    const error = await refusal(create(hooks, endpoint));
    expect(error.code).toBe('ERR_ENDPOINT_NOT_ALLOWED');
    expect(error.field).toBe('endpoint');
    expect(await hooks.webhooks.list()).toEqual([]);
  });

  test('names that resolve to forbidden addresses are refused; the message names the kind, not the address', async () => {
    const dns = scriptedResolver({
      'internal.test': ['10.0.0.7'],
      'mixed.test': ['93.184.215.14', '127.0.0.1'], // one bad answer is enough to refuse
      'meta.test': ['::ffff:169.254.169.254'],
      'v6.test': ['fd12::7'],
    });
    const { hooks } = await engine({ resolver: dns.resolver });
    for (const [host, words] of [
      ['internal.test', 'private'],
      ['mixed.test', 'loopback'],
      ['meta.test', 'metadata'],
      ['v6.test', 'unique-local'],
    ] as const) {
      const error = await refusal(create(hooks, `https://${host}/hooks`));
      expect(error.code).toBe('ERR_ENDPOINT_NOT_ALLOWED');
      expect(error.message).toContain(words);
      // A developer pointing a first webhook at a local receiver learns what to set.
      expect(error.message).toContain('allowPrivateNetworks: true');
      for (const address of dns.table[host]!) expect(error.message).not.toContain(address);
    }
    expect(await hooks.webhooks.list()).toEqual([]);
  });

  test('"localhost" is refused through the real system resolver', async () => {
    const { hooks } = await engine();
    expect((await refusal(create(hooks, 'http://localhost:3000/hooks'))).code).toBe('ERR_ENDPOINT_NOT_ALLOWED');
  });

  test('localhost and *.localhost are loopback by name (RFC 6761), whatever a resolver answers', async () => {
    const dns = scriptedResolver({ localhost: ['93.184.215.14'], 'app.localhost': ['93.184.215.14'] });
    const { hooks } = await engine({ resolver: dns.resolver });
    for (const endpoint of ['http://localhost/', 'http://LOCALHOST./', 'https://app.localhost/x']) {
      const error = await refusal(create(hooks, endpoint));
      expect(error.code).toBe('ERR_ENDPOINT_NOT_ALLOWED');
      expect(error.message).toMatch(/is a loopback name; .*allowPrivateNetworks: true/);
    }
    expect(dns.calls).toEqual([]);
  });

  test('non-http schemes are refused (a typed validation error)', async () => {
    const { hooks } = await engine();
    for (const endpoint of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'gopher://example.com/',
      'javascript:alert(1)',
      'ws://example.com/',
    ]) {
      expect((await refusal(create(hooks, endpoint))).field).toBe('endpoint');
    }
    // The guard's own check gives the same error for the same mistake as saving the webhook did.
    const saved = await refusal(create(hooks, 'file:///etc/passwd'));
    await expect(checkEndpoint('file:///etc/passwd', createGuard({ allowPrivateNetworks: true }))).rejects.toMatchObject({
      code: saved.code,
      message: saved.message,
      field: 'endpoint',
    });
  });

  test('moving a webhook to a forbidden endpoint is refused and leaves it unchanged', async () => {
    const dns = scriptedResolver({ 'public.test': ['93.184.215.14'], 'internal.test': ['192.168.1.20'] });
    const { hooks } = await engine({ resolver: dns.resolver });
    const w = await create(hooks, 'https://public.test/hooks');
    for (const endpoint of ['https://internal.test/hooks', 'http://169.254.169.254/', 'http://[::ffff:10.1.1.1]/']) {
      expect((await refusal(hooks.webhooks.update(w.id, { endpoint, name: 'renamed' }))).code).toBe('ERR_ENDPOINT_NOT_ALLOWED');
    }
    expect(await hooks.webhooks.get(w.id)).toEqual(w);
  });

  test('the management API answers 400 ENDPOINT_NOT_ALLOWED', async () => {
    const { hooks } = await engine({ authorize: () => ({ environment: 'default' }) });
    const res = await hooks.handler(
      new Request('http://auth.test/api/v1/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
        body: JSON.stringify({ name: 'x', endpoint: 'http://169.254.169.254/latest/meta-data/', event_types: ['user.created'] }),
      }),
    );
    expect(res.status).toBe(400);
    expect((await res.json()).errors[0].code).toBe('ENDPOINT_NOT_ALLOWED');
  });

  test('a name that does not resolve (yet) is accepted, then checked at delivery (kind dns)', async () => {
    const dns = scriptedResolver({});
    const { hooks } = await engine({ resolver: dns.resolver });
    const w = await create(hooks, 'https://not-yet.test/hooks');
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const [attempt] = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ webhookId: w.id, success: false, errorKind: 'dns' });
  });

  test('the only ways around it: allowPrivateNetworks, or allowHosts (names, addresses, CIDR blocks)', async () => {
    const dns = scriptedResolver({ 'hooks.internal': ['10.9.8.7'], 'other.internal': ['10.9.8.7'] });
    const { hooks } = await engine({ resolver: dns.resolver, allowHosts: ['hooks.internal', '192.168.7.7', '172.20.0.0/16'] });
    await create(hooks, 'https://hooks.internal/x');
    await create(hooks, 'http://192.168.7.7/x');
    await create(hooks, 'http://172.20.4.5/x');
    await create(hooks, 'http://[::ffff:172.20.4.5]/x');
    expect((await refusal(create(hooks, 'https://other.internal/x'))).code).toBe('ERR_ENDPOINT_NOT_ALLOWED');
    expect((await refusal(create(hooks, 'http://192.168.7.8/x'))).code).toBe('ERR_ENDPOINT_NOT_ALLOWED');
    const open = await engine({ allowPrivateNetworks: true });
    await create(open.hooks, 'http://127.0.0.1:1/x');
  });
});

describe('at delivery (real sockets)', () => {
  test('DNS rebinding after creation: the delivery is a blocked attempt and nothing reaches 127.0.0.1', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const dns = scriptedResolver({ 'rebind.test': ['93.184.215.14'] });
    const { hooks } = await engine({ resolver: dns.resolver });
    await create(hooks, `http://rebind.test:${receiver.port}/hooks`);
    dns.table['rebind.test'] = ['127.0.0.1'];
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const [attempt] = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ success: false, errorKind: 'blocked', statusCode: null });
    expect(attempt!.errorMessage).toContain('loopback');
    expect((await hooks.deliveries.get(ev.deliveryIds[0]!)).lastResult).toBe('blocked');
    expect(receiver.hits).toHaveLength(0);
  });

  test('DNS pinning: the connection goes to the address that was checked, not to a second answer', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const internal = await listen('127.0.0.2', receiver.port); // same port, the address DNS rebinds to
    const dns = rebindingResolver('127.0.0.1', '127.0.0.2');
    // 127.0.0.1 stands in for "a public address" (allowed by the allow-list); 127.0.0.2 is not allowed.
    const { hooks } = await engine({ resolver: dns.resolver, allowHosts: ['127.0.0.1'] });
    await create(hooks, `http://pin.test:${receiver.port}/hooks`);
    dns.reset();
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect((await hooks.deliveries.get(ev.deliveryIds[0]!)).status).toBe('delivered');
    expect(receiver.hits).toHaveLength(1);
    expect(internal.hits).toHaveLength(0);
    expect(dns.calls).toEqual(['pin.test', 'pin.test']); // once at creation, once for the attempt; never at connect
  });

  test('DNS pinning holds for every fresh connection (20 attempts, connection: close each time)', async () => {
    const receiver = await listen('127.0.0.1', 0, (res) => res.writeHead(200, { connection: 'close' }).end('ok'));
    const internal = await listen('127.0.0.2', receiver.port);
    const dns = rebindingResolver('127.0.0.1', '127.0.0.2');
    const transport = httpTransport({ guard: { resolver: dns.resolver, allowHosts: ['127.0.0.1'] } });
    cleanups.push(() => transport.close!());
    for (let i = 0; i < 20; i++) {
      dns.reset();
      const res = await transport.send({ url: `http://pin.test:${receiver.port}/n${i}`, headers: {}, body: 'x', timeoutMs: 5000 });
      expect(res.status).toBe(200);
    }
    expect(receiver.hits).toHaveLength(20);
    expect(internal.hits).toHaveLength(0);
    expect(dns.calls).toHaveLength(20);
    // And once DNS says 127.0.0.2 at check time, the attempt is refused before any connection.
    await expect(
      transport.send({ url: `http://pin.test:${receiver.port}/late`, headers: {}, body: 'x', timeoutMs: 5000 }),
    ).rejects.toMatchObject({ code: 'blocked' });
    expect(internal.hits).toHaveLength(0);
  });

  test('one endpoint checked again at every attempt: the transport reuses a verdict only for the same answer, under the same guard', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const internal = await listen('127.0.0.2', receiver.port);
    const dns = scriptedResolver({ 'same.test': ['127.0.0.1'] });
    const transport = httpTransport({ guard: { resolver: dns.resolver, allowHosts: ['127.0.0.1'] } });
    cleanups.push(() => transport.close!());
    const url = `http://same.test:${receiver.port}/hooks`;
    const send = (extra: Partial<Parameters<typeof transport.send>[0]> = {}) =>
      transport.send({ url, headers: {}, body: 'x', timeoutMs: 5000, ...extra });
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200); // the same answer: last time's verdict
    dns.table['same.test'] = ['127.0.0.2']; // the name now points inside
    await expect(send()).rejects.toMatchObject({ code: 'blocked' });
    dns.table['same.test'] = ['127.0.0.1', '127.0.0.2']; // one good address beside a bad one
    await expect(send()).rejects.toMatchObject({ code: 'blocked' });
    dns.table['same.test'] = ['127.0.0.1'];
    expect((await send()).status).toBe(200);
    expect(dns.calls).toHaveLength(5); // asked at every attempt, whatever was kept
    // The same address endpoint under two guards: each request's own guard decides.
    const literal = `${receiver.url}/literal`;
    const open = createGuard({ allowPrivateNetworks: true });
    const strict = createGuard({});
    expect((await transport.send({ url: literal, headers: {}, body: 'x', timeoutMs: 5000, guard: open })).status).toBe(200);
    await expect(transport.send({ url: literal, headers: {}, body: 'x', timeoutMs: 5000, guard: strict })).rejects.toMatchObject({
      code: 'blocked',
    });
    expect((await transport.send({ url: literal, headers: {}, body: 'x', timeoutMs: 5000, guard: open })).status).toBe(200);
    expect(receiver.hits).toHaveLength(5);
    expect(internal.hits).toHaveLength(0);
  });

  test('control: a client that resolves again at connect time is fooled by the same resolver (the trap is real)', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const internal = await listen('127.0.0.2', receiver.port);
    const dns = rebindingResolver('127.0.0.1', '127.0.0.2');
    const policy = createGuard({ resolver: dns.resolver, allowHosts: ['127.0.0.1'] });
    await checkEndpoint(`http://pin.test:${receiver.port}/`, policy); // the check passes...
    const naiveLookup: LookupFunction = (host, _opts, cb) =>
      void dns.resolver(host).then((a) =>
        cb(
          null,
          a.map((x) => ({ ...x })),
        ),
      );
    const naive = new Agent({ connect: { lookup: naiveLookup } });
    cleanups.push(() => naive.close());
    const res = await request(`http://pin.test:${receiver.port}/`, { method: 'POST', body: 'x', dispatcher: naive });
    await res.body.text();
    expect(internal.hits).toHaveLength(1); // ...and an unpinned connect lands on 127.0.0.2
  });

  test('a webhook stored under a laxer policy is refused at delivery after a restart with the guard on', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const e = await makeEngine({ allowPrivateNetworks: true });
    cleanups.push(() => e.close());
    await create(e.hooks, `${receiver.url}/hooks`);
    const strict = await e.restart({ allowPrivateNetworks: false });
    await strict.start();
    const ev = await strict.emit({ type: 'user.created', source: 'admin', data: userData() });
    await strict.drain();
    const [attempt] = await strict.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ errorKind: 'blocked', success: false });
    expect(receiver.hits).toHaveLength(0);
  });

  test.each([301, 302, 303, 307, 308])('a %i redirect to 127.0.0.1 is never followed', async (status) => {
    const target = await listen('127.0.0.1', 0);
    const redirector = await listen('127.0.0.2', 0, (res) => res.writeHead(status, { location: `${target.url}/secret` }).end());
    const { hooks } = await engine({ allowHosts: ['127.0.0.2'] });
    await create(hooks, `${redirector.url}/hooks`);
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const [attempt] = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ statusCode: status, errorKind: 'redirect', success: false });
    expect(redirector.hits).toHaveLength(1);
    expect(target.hits).toHaveLength(0);
  });

  test('httpTransport used on its own refuses loopback by default (secure default)', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const transport = httpTransport();
    cleanups.push(() => transport.close!());
    for (const url of [`${receiver.url}/x`, `http://[::ffff:127.0.0.1]:${receiver.port}/x`, 'file:///etc/passwd']) {
      const error = await transport.send({ url, headers: {}, body: 'x', timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransportError);
      expect((error as TransportError).code).toBe('blocked');
    }
    expect(receiver.hits).toHaveLength(0);
  });

  test('a name with several checked addresses: the connection may use any of them (IPv6 refused, IPv4 answers)', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const dns = scriptedResolver({ 'dual.test': ['::1', '127.0.0.1'] });
    const transport = httpTransport({ guard: { resolver: dns.resolver, allowHosts: ['127.0.0.1', '::1'] } });
    cleanups.push(() => transport.close!());
    const res = await transport.send({ url: `http://dual.test:${receiver.port}/x`, headers: {}, body: 'x', timeoutMs: 5000 });
    expect(res.status).toBe(200);
    expect(dns.calls).toEqual(['dual.test']);
  });

  test.skipIf(!hasOpenssl())('https to a pinned address still sends the name as SNI and verifies the certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iw-tls-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=pin.test',
        '-addext',
        'subjectAltName=DNS:pin.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const sni: string[] = [];
    const hits: string[] = [];
    const server = https.createServer(
      {
        key: readFileSync(join(dir, 'key.pem')),
        cert: readFileSync(join(dir, 'cert.pem')),
        SNICallback: (name, cb) => (sni.push(name), cb(null, undefined as never)),
      },
      (req, res) => (hits.push(req.url ?? ''), res.end('ok')),
    );
    server.on('tlsClientError', () => {});
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const port = (server.address() as AddressInfo).port;
    const dns = scriptedResolver({ 'pin.test': ['127.0.0.1'] });
    const transport = httpTransport({ guard: { resolver: dns.resolver, allowHosts: ['127.0.0.1'] } });
    cleanups.push(() => transport.close!());
    const error = await transport
      .send({ url: `https://pin.test:${port}/x`, headers: {}, body: 'x', timeoutMs: 5000 })
      .catch((e: unknown) => e);
    // The TCP connection went to 127.0.0.1, but TLS spoke to "pin.test" and, not trusting this
    // self-signed certificate, refused it: verification is on and uses the name, not the address.
    expect(sni).toEqual(['pin.test']);
    expect(error).toMatchObject({ code: 'network' });
    expect(String((error as Error).message)).toMatch(/self[- ]signed/i);
    expect(hits).toEqual([]);
  });

  test('allowed private receivers still get their deliveries (allowHosts by name)', async () => {
    const receiver = await listen('127.0.0.1', 0);
    const dns = scriptedResolver({ 'hooks.internal': ['127.0.0.1'] });
    const { hooks } = await engine({ resolver: dns.resolver, allowHosts: ['hooks.internal'] });
    await create(hooks, `http://hooks.internal:${receiver.port}/x`);
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect((await hooks.deliveries.get(ev.deliveryIds[0]!)).status).toBe('delivered');
    expect(receiver.hits).toHaveLength(1);
  });
});
