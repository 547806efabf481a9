import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { describe, expect, test } from 'vitest';
import { httpTransport, TransportError } from '../../src/index.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';

// Bounded I/O, proven against real misbehaving servers on 127.0.0.1. No test
// asserts a duration: each misbehaviour is endless, so the only way a test can finish is the
// bound under test doing its job (otherwise the test itself times out).

const cleanups = useCleanups();

const open = { guard: { allowPrivateNetworks: true } };

function transport(options: Parameters<typeof httpTransport>[0] = {}) {
  const t = httpTransport({ ...open, ...options });
  cleanups.push(() => t.close!());
  return t;
}

async function httpServer(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const state = { requests: 0, closedByClient: 0 };
  server.on('request', (req) => {
    state.requests++;
    req.socket.once('close', () => state.closedByClient++);
  });
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, state };
}

/** A raw TCP server for misbehaviour below HTTP (never answering, trickling the status line). */
async function tcpServer(onSocket: (socket: net.Socket) => void) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Writes `chunk` every `everyMs` until the peer goes away. */
function trickle(write: (chunk: string) => boolean | void, isClosed: () => boolean, chunk = '.', everyMs = 20) {
  const timer = setInterval(() => (isClosed() ? clearInterval(timer) : write(chunk)), everyMs);
  cleanups.push(() => clearInterval(timer));
}

const send = (t: ReturnType<typeof transport>, url: string, timeoutMs: number) => t.send({ url, headers: {}, body: 'x', timeoutMs });

async function kindOf(p: Promise<unknown>): Promise<string> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TransportError);
  return (error as TransportError).code;
}

describe('response bodies', () => {
  test('an endless 200 body is read up to the cap, then the connection is dropped', async () => {
    const srv = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const pump = () => {
        while (!res.destroyed && res.write('A'.repeat(16_384)));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const res = await send(transport(), `${srv.url}/endless`, 60_000);
    expect(res.status).toBe(200);
    expect(res.excerpt.length).toBe(4096);
    const small = await send(transport({ maxResponseBytes: 16 }), `${srv.url}/endless`, 60_000);
    expect(small.excerpt).toBe('A'.repeat(16));
  });

  test('multi-byte text cut at the cap stays valid text', async () => {
    const srv = await httpServer((_req, res) => res.writeHead(500).end('é'.repeat(10_000)));
    const res = await send(transport({ maxResponseBytes: 5 }), srv.url, 10_000);
    expect(res.status).toBe(500);
    expect(Buffer.byteLength(res.excerpt)).toBeLessThanOrEqual(8);
    expect(res.excerpt.startsWith('éé')).toBe(true);
  });

  test('a body with NUL bytes and broken UTF-8 becomes storable text', async () => {
    const srv = await httpServer((_req, res) => res.writeHead(500).end(Buffer.from([0x61, 0x00, 0x62, 0xff, 0xc3])));
    const res = await send(transport(), srv.url, 10_000);
    expect(res.excerpt).toBe('a\ufffdb\ufffd\ufffd');
  });
});

describe('deadlines', () => {
  test('a server trickling its body one byte per 20 ms is cut off by the total deadline', async () => {
    // Each gap (20 ms) is far below the idle timeout, so only a total deadline can end this.
    const srv = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      trickle(
        (c) => res.write(c),
        () => res.destroyed,
      );
    });
    expect(await kindOf(send(transport(), srv.url, 400))).toBe('timeout');
  });

  test('a server trickling its status line and headers is cut off too', async () => {
    const srv = await tcpServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\n');
        trickle(
          (c) => socket.write(c),
          () => socket.destroyed,
          'X-Slow: a\r\n',
        );
      });
    });
    expect(await kindOf(send(transport(), srv.url, 400))).toBe('timeout');
  });

  test('a server that accepts the connection and never says anything costs one timeout', async () => {
    const srv = await tcpServer(() => {});
    expect(await kindOf(send(transport(), srv.url, 300))).toBe('timeout');
  });

  test('a slow resolver counts against the same deadline', async () => {
    const never = () => new Promise<never>(() => {});
    const t = transport({ guard: { resolver: never } });
    expect(await kindOf(send(t, 'http://slow-dns.test/', 200))).toBe('timeout');
  });

  test('through the engine: the hung attempt is recorded as a timeout and the worker moves on', async () => {
    const hang = await tcpServer(() => {});
    const healthy = await startReceiver();
    cleanups.push(() => healthy.close());
    const e = await makeEngine({ delivery: { timeoutMs: 300, pollIntervalMs: 3600_000, concurrency: 1 } });
    cleanups.push(() => e.close());
    await e.hooks.start();
    const slow = await e.hooks.webhooks.create({ name: 'hang', endpoint: `${hang.url}/x`, eventTypes: ['user.created'] });
    const ev = await e.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await e.hooks.drain();
    const [attempt] = await e.hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ webhookId: slow.id, errorKind: 'timeout', success: false });
    await e.hooks.webhooks.disable(slow.id);
    await e.hooks.webhooks.create({ name: 'ok', endpoint: `${healthy.url}/x`, eventTypes: ['user.created'] });
    await e.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await e.hooks.drain();
    expect(healthy.requests).toHaveLength(1); // the single worker slot was released
  });
});

describe('per-endpoint concurrency', () => {
  test('an endpoint that never answers holds at most its own slots; a healthy one gets everything', async () => {
    const hung: http.ServerResponse[] = [];
    const hang = await httpServer((_req, res) => void hung.push(res)); // reads the request, never answers
    const healthy = await startReceiver();
    cleanups.push(() => healthy.close());
    // Four slots in all, two per endpoint. Without the per-endpoint bound the hung endpoint's ten
    // deliveries would fill all four slots for the full 60 s timeout and the healthy one would wait.
    const e = await makeEngine({ delivery: { timeoutMs: 60_000, concurrency: 4, perWebhookConcurrency: 2, pollIntervalMs: 3600_000 } });
    cleanups.push(() => e.close());
    await e.hooks.start();
    await e.hooks.webhooks.create({ name: 'hang', endpoint: `${hang.url}/x`, eventTypes: ['user.created'] });
    await e.hooks.webhooks.create({ name: 'ok', endpoint: `${healthy.url}/x`, eventTypes: ['user.created'] });
    for (let i = 0; i < 10; i++) await e.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });

    await healthy.waitFor(10);
    expect(hang.state.requests).toBeLessThanOrEqual(2);
    expect(hung.length).toBeLessThanOrEqual(2);

    // Take the bad endpoint down: the hung attempts fail, its other deliveries are refused at
    // connect, all ten are rescheduled for later, and the engine settles.
    hang.server.close();
    hang.server.closeAllConnections();
    await e.hooks.drain();
    const pending = (await e.hooks.deliveries.list({ status: 'pending' })).deliveries;
    expect(pending).toHaveLength(10);
    expect(pending.every((d) => d.attemptCount === 1 && d.lastResult === 'network')).toBe(true);
  });
});

describe('connections per origin', () => {
  test("httpTransport() as a host builds it: 60 requests hanging on one path of a host leave room for another path's request", async () => {
    const hung: http.ServerResponse[] = [];
    const host = await httpServer((req, res) => {
      if (req.url === '/ok') res.end('ok');
      else hung.push(res); // reads the request, never answers
    });
    // The default connections per origin: 8 used to queue /ok behind the hanging requests until
    // their deadline, so it timed out too.
    const t = transport();
    const hanging = Array.from({ length: 60 }, () => send(t, `${host.url}/hang`, 60_000).catch(() => {}));
    await until('all 60 hanging at the host, each on a connection of its own', () => hung.length === 60, 10_000);
    await expect(send(t, `${host.url}/ok`, 30_000)).resolves.toMatchObject({ status: 200, excerpt: 'ok' });
    for (const res of hung) res.destroy();
    await Promise.all(hanging);
  });
});
