import { decodeProtectedHeader } from 'jose';
import { describe, expect, test } from 'vitest';
import { httpTransport, type Transport } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';

const cleanups = useCleanups();

async function setup(respond?: Parameters<typeof startReceiver>[0], overrides: Parameters<typeof makeEngine>[0] = {}) {
  const receiver = await startReceiver(respond);
  const env = await makeEngine(overrides);
  cleanups.push(
    () => receiver.close(),
    () => env.close(),
  );
  await env.hooks.start();
  return { receiver, ...env };
}

describe('delivery', () => {
  test('POSTs a signed JWT that verifies against the JWKS served over HTTP, with the exact claims', async () => {
    const { hooks, receiver, verify, clock, issuer } = await setup();
    const wh = await hooks.webhooks.create({ name: 'CRM', endpoint: `${receiver.url}/hooks?x=1`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData({ email: null, last_name: '' }) });
    await hooks.drain();

    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hooks?x=1');
    expect(req.headers['content-type']).toBe('application/jwt');
    expect(req.headers['webhook-id']).toBe(ev.deliveryIds[0]);
    expect(req.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);

    const { payload, header } = await verify(req.body);
    expect(header).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    expect(typeof header.kid).toBe('string');
    expect(payload).toEqual({
      type: 'user.created',
      event_id: ev.id,
      event_timestamp: '2026-01-01T00:00:00.000Z',
      timestamp: new Date(clock.now()).toISOString(),
      source: 'admin',
      data: userData({ email: null, last_name: '' }),
      iss: issuer,
      iat: Math.floor(clock.now() / 1000),
    });
    expect(ev.id).toMatch(/^event_[0-9a-f]{32}$/);
    expect(wh.id).toMatch(/^webhook_[0-9a-f]{32}$/);
    const [delivery] = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries;
    expect(delivery).toMatchObject({ status: 'delivered', attemptCount: 1, lastResult: '200' });
  });

  test('only subscribed, enabled webhooks of the same environment receive the event', async () => {
    const { hooks, receiver } = await setup();
    const a = await hooks.webhooks.create({ name: 'a', endpoint: `${receiver.url}/a`, eventTypes: ['user.created', 'user.updated'] });
    await hooks.webhooks.create({ name: 'b', endpoint: `${receiver.url}/b`, eventTypes: ['user.deleted'] });
    const c = await hooks.webhooks.create({ name: 'c', endpoint: `${receiver.url}/c`, eventTypes: ['user.created'] });
    await hooks.webhooks.create({ name: 'other env', endpoint: `${receiver.url}/d`, eventTypes: ['user.created'], environment: 'staging' });
    await hooks.webhooks.disable(c.id);
    const ev = await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(ev.deliveryIds).toHaveLength(1);
    expect(receiver.requests.map((r) => r.path)).toEqual(['/a']);
    expect((await hooks.deliveries.list({ webhookId: a.id })).deliveries[0]!.status).toBe('delivered');
  });

  test.each([
    [201, 'status'],
    [204, 'status'],
    [302, 'redirect'],
    [400, 'status'],
    [500, 'status'],
  ])('HTTP %i is a failed attempt (%s), retried with the same webhook-id', async (status, kind) => {
    const { hooks, receiver, clock } = await setup((_r, i) =>
      i === 0 ? { status, ...(status === 302 ? { headers: { location: '/elsewhere' } } : {}) } : 200,
    );
    const wh = await hooks.webhooks.create({ name: 'x', endpoint: `${receiver.url}/h`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect(receiver.requests).toHaveLength(1); // a redirect is not followed
    let [d] = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries;
    expect(d).toMatchObject({ status: 'pending', attemptCount: 1, lastResult: String(status) });
    await clock.advance(10_000);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1]!.headers['webhook-id']).toBe(receiver.requests[0]!.headers['webhook-id']);
    [d] = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries;
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    const attempts = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempts.map((a) => [a.statusCode, a.errorKind, a.success])).toEqual([
      [status, kind, false],
      [200, null, true],
    ]);
  });

  test('each attempt carries its own timestamp; the event keeps its event_timestamp', async () => {
    const { hooks, receiver, clock, verify } = await setup((_r, i) => (i === 0 ? 503 : 200));
    await hooks.webhooks.create({ name: 'x', endpoint: `${receiver.url}/h`, eventTypes: ['user.updated'] });
    await hooks.emit({ type: 'user.updated', source: 'user', data: userData(), eventTimestamp: Date.parse('2025-12-31T23:59:00.000Z') });
    await hooks.drain();
    await clock.advance(10_000);
    const [first, second] = await Promise.all(receiver.requests.map((r) => verify(r.body)));
    expect(first!.payload.event_timestamp).toBe('2025-12-31T23:59:00.000Z');
    expect(second!.payload.event_timestamp).toBe('2025-12-31T23:59:00.000Z');
    expect(Date.parse(second!.payload.timestamp) - Date.parse(first!.payload.timestamp)).toBeGreaterThanOrEqual(4_500);
  });

  test('a timeout is a failed attempt of kind timeout, and the worker is free again', async () => {
    const { hooks, receiver } = await setup((_r, i) => (i === 0 ? { status: 200, delayMs: 1500 } : 200), {
      delivery: { timeoutMs: 300, pollIntervalMs: 3600_000 },
    });
    const wh = await hooks.webhooks.create({ name: 'slow', endpoint: `${receiver.url}/slow`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const [attempt] = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ success: false, errorKind: 'timeout', statusCode: null });
    expect(attempt!.durationMs).toBeLessThan(1500);
    expect((await hooks.deliveries.list({ webhookId: wh.id })).deliveries[0]!.status).toBe('pending');
  });

  test('a refused connection is a failed attempt of kind network', async () => {
    const dead = await startReceiver();
    const url = dead.url;
    await dead.close();
    const { hooks } = await setup();
    await hooks.webhooks.create({ name: 'dead', endpoint: `${url}/x`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const [attempt] = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ success: false, errorKind: 'network', statusCode: null });
    expect(attempt!.errorMessage).toMatch(/ECONNREFUSED/);
  });

  test('the response excerpt kept in the attempt log is bounded', async () => {
    const big = 'x'.repeat(200_000);
    const { hooks, receiver } = await setup(() => ({ status: 500, body: big }));
    await hooks.webhooks.create({ name: 'big', endpoint: `${receiver.url}/big`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const [attempt] = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt!.responseExcerpt!.length).toBeGreaterThan(0);
    expect(attempt!.responseExcerpt!.length).toBeLessThanOrEqual(4096);
  });

  test('fan-out: the webhooks of one event dispatched together share one signature', async () => {
    let sends = 0;
    const inner = httpTransport();
    const counting: Transport = { send: (r) => (sends++, inner.send(r)), close: () => inner.close!() };
    const { hooks, receiver, verify } = await setup(undefined, { transport: counting });
    for (let i = 0; i < 10; i++)
      await hooks.webhooks.create({ name: `w${i}`, endpoint: `${receiver.url}/w${i}`, eventTypes: ['user.created'] });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    cleanups.push(() => inner.close!());
    expect(sends).toBe(10);
    const bodies = new Set(receiver.requests.map((r) => r.body));
    expect(bodies.size).toBe(1); // one token, ten deliveries
    const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(10); // but each its own webhook-id
    await verify([...bodies][0]!);
    expect(decodeProtectedHeader([...bodies][0]!).alg).toBe('RS256');
  });

  test('an event cut across claims keeps its token into the next claims for a second, then signs again', async () => {
    // One delivery a claim, and each POST moves the clock on by `step`: the event's ten
    // webhooks are claimed at ten different times. A token re-signed for a later claim would
    // carry that claim's time in `timestamp` (RS256 itself is deterministic, so only the
    // claims tell two signatures apart).
    const timestampsAt = async (step: number) => {
      let clock: { advance(ms: number): Promise<void> } | undefined;
      const inner = httpTransport();
      const stepping: Transport = {
        send: async (r) => (await clock!.advance(step), inner.send(r)),
        close: () => inner.close!(),
      };
      cleanups.push(() => inner.close!());
      const env = await setup(undefined, {
        transport: stepping,
        delivery: { timeoutMs: 2000, pollIntervalMs: 3600_000, concurrency: 1, perWebhookConcurrency: 1, batchSize: 1 },
      });
      clock = env.clock;
      for (let i = 0; i < 10; i++)
        await env.hooks.webhooks.create({ name: `w${i}`, endpoint: `${env.receiver.url}/w${i}`, eventTypes: ['user.created'] });
      const emittedAt = env.clock.now();
      await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
      await env.hooks.drain();
      expect(env.receiver.requests).toHaveLength(10);
      const stamps: number[] = [];
      for (const r of env.receiver.requests) stamps.push(Date.parse((await env.verify(r.body)).payload.timestamp) - emittedAt);
      return stamps;
    };
    // 50 ms a claim: all ten within 500 ms of the first signature, one token.
    expect(new Set(await timestampsAt(50))).toEqual(new Set([0]));
    // 2 s a claim: none within a second of another, each claim signs its own, at its own time.
    const apart = await timestampsAt(2000);
    expect(new Set(apart).size).toBe(10);
    expect(apart.sort((a, b) => a - b)).toEqual([0, 2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000, 18000]);
  });
});
