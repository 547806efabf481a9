import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from 'vitest';
import { jwksResponse } from '../../src/http/jwks.js';
import { ManualClock, type SigningKey } from '../../src/index.js';
import type { EventRecord } from '../../src/model.js';
import {
  createReceiver,
  createVerifier,
  memorySeen,
  type SeenStore,
  type WebhookEnvelope,
  type WebhookEvent,
  type WebhookEventMap,
  WebhookVerificationError,
} from '../../src/receiver/index.js';
import { importSigningKey } from '../../src/signing/keys.js';
import { KeySet } from '../../src/signing/keyset.js';
import { buildClaims, signClaims } from '../../src/signing/token.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { serveHandler } from '../helpers/http.js';

const clock = new ManualClock(Date.parse('2026-03-01T12:00:00.000Z'));
let key: SigningKey;
let issuer: string;
let jwksStatus = 200;
let jwksHits = 0;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  key = await testKey();
  const keys = new KeySet([key]);
  // Served under a path prefix, as a host mounting hooks.handler under /auth would.
  const site = await serveHandler(async (req) => {
    jwksHits++;
    if (jwksStatus !== 200) return new Response('down', { status: jwksStatus });
    return new URL(req.url).pathname === '/auth/.well-known/jwks'
      ? jwksResponse(keys.jwks(), req.method)
      : new Response('no', { status: 404 });
  });
  issuer = `${site.url}/auth`;
  closers.push(site.close);
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

function record(type: string, data: Record<string, unknown>): EventRecord {
  const at = clock.now() - 1000;
  return { id: `event_${type.replace('.', '_')}`, environment: 'default', type, source: 'api', data, eventTimestamp: at, createdAt: at };
}

async function token(type = 'user.created', data: Record<string, unknown> = userData()): Promise<string> {
  return signClaims(buildClaims(record(type, data), issuer, clock.now()), await importSigningKey(key));
}

function request(body: string, webhookId = 'msg_1', method = 'POST'): Request {
  return new Request('http://receiver.test/webhooks', {
    method,
    headers: { 'content-type': 'application/jwt; charset=utf-8', 'webhook-id': webhookId },
    body: method === 'GET' ? undefined : body,
  });
}

describe('createVerifier', () => {
  test('verifies and returns the typed event, fetching {issuer}/.well-known/jwks', async () => {
    const verifier = createVerifier({ issuer, clock });
    const event: WebhookEvent = await verifier.verify(await token());
    expect(event.type).toBe('user.created');
    if (event.type === 'user.created') expect(event.data.user.first_name).toBe('Ada');
    expect(event).toMatchObject({ iss: issuer, source: 'api', timestamp: new Date(clock.now()).toISOString() });
  });

  test('caches the key set, and fetches it again once it is older than jwksCacheMaxAgeSeconds', async () => {
    const verifier = createVerifier({ issuer, clock, jwksCacheMaxAgeSeconds: 60 });
    const before = jwksHits;
    await verifier.verify(await token());
    await verifier.verify(await token());
    expect(jwksHits - before).toBe(1);
    await clock.advance(60_000);
    await verifier.verify(await token());
    expect(jwksHits - before).toBe(2);
  });

  test('concurrent first verifications share one key set fetch', async () => {
    const verifier = createVerifier({ issuer, clock });
    const before = jwksHits;
    const t = await token();
    await Promise.all(Array.from({ length: 10 }, () => verifier.verify(t)));
    expect(jwksHits - before).toBe(1);
  });

  test('a pinned key set (jwks) needs no network', async () => {
    const verifier = createVerifier({ issuer, clock, jwks: new KeySet([key]).jwks() });
    const before = jwksHits;
    expect((await verifier.verify(await token())).type).toBe('user.created');
    expect(jwksHits).toBe(before);
  });

  test('a key set that cannot be fetched is ERR_JWKS_UNAVAILABLE (answered 503: the sender retries)', async () => {
    jwksStatus = 500;
    try {
      const verifier = createVerifier({ issuer, clock });
      const error = await verifier.verify(await token()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(error).toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE', status: 503 });
      const unreachable = createVerifier({ issuer: 'http://127.0.0.1:9', clock });
      await expect(unreachable.verify(await token())).rejects.toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE' });
    } finally {
      jwksStatus = 200;
    }
  });

  test('a redirect from the key set URL is not followed', async () => {
    jwksStatus = 302;
    try {
      await expect(createVerifier({ issuer, clock }).verify(await token())).rejects.toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE' });
    } finally {
      jwksStatus = 200;
    }
  });

  test('maxAgeSeconds and clockSkewSeconds set the accepted window', async () => {
    const verifier = createVerifier({ issuer, clock, maxAgeSeconds: 10, clockSkewSeconds: 0 });
    const t = await token();
    await clock.advance(10_000);
    expect((await verifier.verify(t)).type).toBe('user.created');
    await clock.advance(1);
    await expect(verifier.verify(t)).rejects.toMatchObject({ code: 'ERR_TIMESTAMP_STALE' });
  });

  test.each([
    [{}, /issuer/],
    [{ issuer: 'not a url' }, /issuer/],
    [{ issuer: 'https://a.example', jwks: { keys: [] }, jwksUrl: 'https://a.example/k' }, /not both/],
    [{ issuer: 'https://a.example', jwksUrl: 'file:///etc/keys' }, /http/],
    [{ issuer: 'https://a.example', maxAgeSeconds: 0 }, /maxAgeSeconds/],
    [{ issuer: 'https://a.example', clockSkewSeconds: -1 }, /clockSkewSeconds/],
    [{ issuer: 'https://a.example', clock: {} }, /clock/],
    [{ issuer: 'https://a.example', jwks: { nope: 1 } }, /jwks/],
  ])('misuse is a TypeError at once: %j', (options, message) => {
    expect(() => createVerifier(options as never)).toThrow(TypeError);
    expect(() => createVerifier(options as never)).toThrow(message);
  });
});

describe('createReceiver', () => {
  const verifier = () => createVerifier({ issuer, clock });

  test('handled and unhandled types are both answered 200; only the handled one runs', async () => {
    const calls: string[] = [];
    const receive = createReceiver({
      verifier: verifier(),
      on: { 'user.created': (e) => void calls.push(e.data.user.id) },
      onError: () => {},
    });
    expect((await receive(request(await token(), 'msg_a'))).status).toBe(200);
    const other = await receive(request(await token('organization.created', { organization: { code: 'org_1', name: 'Acme' } }), 'msg_b'));
    expect(other.status).toBe(200);
    expect(await other.json()).toEqual({ message: 'no handler for this event type' });
    expect(calls).toEqual(['kp_0123456789abcdef']);
  });

  test('a handler that throws is answered 400 { message } without leaking the error, and is retried', async () => {
    const errors: unknown[] = [];
    let fail = true;
    let runs = 0;
    const receive = createReceiver({
      verifier: verifier(),
      on: {
        'user.created': async () => {
          runs++;
          if (fail) throw new Error('db password is hunter2');
        },
      },
      onError: (error, info) => void errors.push({ error, info }),
    });
    const first = await receive(request(await token(), 'msg_flaky'));
    expect(first.status).toBe(400);
    expect(first.headers.get('content-type')).toBe('application/json');
    const body = await first.text();
    expect(JSON.parse(body)).toEqual({ message: 'processing user.created failed' });
    expect(body).not.toContain('hunter2');
    expect(errors).toEqual([{ error: new Error('db password is hunter2'), info: { webhookId: 'msg_flaky', type: 'user.created' } }]);
    fail = false;
    expect((await receive(request(await token(), 'msg_flaky'))).status).toBe(200); // not marked seen after the failure
    expect((await receive(request(await token(), 'msg_flaky'))).status).toBe(200);
    expect(runs).toBe(2);
  });

  test('a duplicate arriving while the first is processing is answered 409, then 200 once it is done', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let runs = 0;
    const receive = createReceiver({ verifier: verifier(), on: { 'user.created': async () => (runs++, started(), await gate) } });
    const first = receive(request(await token(), 'msg_slow'));
    await running;
    const dup = await receive(request(await token(), 'msg_slow'));
    expect(dup.status).toBe(409);
    release();
    expect((await first).status).toBe(200);
    const later = await receive(request(await token(), 'msg_slow'));
    expect(await later.json()).toEqual({ message: 'already processed' });
    expect(runs).toBe(1);
  });

  test('a pluggable seen store: consulted after verification, written only after success', async () => {
    const log: string[] = [];
    const ids = new Set<string>();
    const seen: SeenStore = {
      has: async (id) => (log.push(`has ${id}`), ids.has(id)),
      add: async (id) => void (log.push(`add ${id}`), ids.add(id)),
    };
    const receive = createReceiver({ verifier: verifier(), on: { 'user.created': () => void log.push('handler') }, seen });
    await receive(request('garbage', 'msg_bad'));
    await receive(request(await token(), 'msg_x'));
    await receive(request(await token(), 'msg_x'));
    expect(log).toEqual(['has msg_x', 'handler', 'add msg_x', 'has msg_x']);
  });

  test('a seen store that fails to record after the handler succeeded still answers 200 (no double run)', async () => {
    const errors: unknown[] = [];
    const receive = createReceiver({
      verifier: verifier(),
      on: { 'user.created': () => {} },
      seen: { has: () => false, add: () => Promise.reject(new Error('redis down')) },
      onError: (e) => void errors.push(e),
    });
    expect((await receive(request(await token(), 'msg_store'))).status).toBe(200);
    expect(errors).toEqual([new Error('redis down')]);
  });

  test('a seen store that fails to answer is a processing failure: 400, handler not run', async () => {
    let runs = 0;
    const receive = createReceiver({
      verifier: verifier(),
      on: { 'user.created': () => void runs++ },
      seen: { has: () => Promise.reject(new Error('down')), add: () => {} },
      onError: () => {},
    });
    expect((await receive(request(await token(), 'msg_down'))).status).toBe(400);
    expect(runs).toBe(0);
  });

  test('memorySeen forgets the oldest id past its bound', async () => {
    const seen = memorySeen({ max: 2 });
    await seen.add('a');
    await seen.add('b');
    await seen.add('a');
    await seen.add('c');
    expect([seen.has('a'), seen.has('b'), seen.has('c')]).toEqual([false, true, true]);
    expect(() => memorySeen({ max: 0 })).toThrow(TypeError);
  });

  test('only POST is a delivery', async () => {
    const receive = createReceiver({ verifier: verifier(), on: {} });
    const res = await receive(request('', 'msg_get', 'GET'));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  test('misuse is a TypeError at once', () => {
    expect(() => createReceiver({ verifier: {} as never, on: {} })).toThrow(TypeError);
    expect(() => createReceiver({ verifier: verifier(), on: { 'user.created': 'nope' as never } })).toThrow(/on\["user.created"\]/);
    expect(() => createReceiver({ verifier: verifier(), on: {}, maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
  });
});

describe('a host’s own event types', () => {
  test('extend the built-in map; the verifier and handlers are typed by it', async () => {
    type Events = WebhookEventMap & { 'billing.invoice_paid': WebhookEnvelope<'billing.invoice_paid', { invoice_id: string }> };
    const paid: string[] = [];
    const receive = createReceiver<Events>({
      verifier: createVerifier<Events>({ issuer, clock }),
      on: {
        'billing.invoice_paid': (event) => {
          expectTypeOf(event.data.invoice_id).toEqualTypeOf<string>();
          paid.push(event.data.invoice_id);
        },
      },
    });
    const res = await receive(request(await token('billing.invoice_paid', { invoice_id: 'in_1' }), 'msg_invoice'));
    expect(res.status).toBe(200);
    expect(paid).toEqual(['in_1']);
  });
});
