import { base64url, exportSPKI, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { jwksResponse } from '../../src/http/jwks.js';
import { generateSigningKey, ManualClock, type SigningKey } from '../../src/index.js';
import type { EventRecord } from '../../src/model.js';
import { createReceiver, createVerifier, type UserCreatedEvent } from '../../src/receiver/index.js';
import { importSigningKey } from '../../src/signing/keys.js';
import { KeySet } from '../../src/signing/keyset.js';
import { buildClaims, signClaims } from '../../src/signing/token.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { serveHandler } from '../helpers/http.js';

// The issuer's key set is served over real HTTP by the engine's own JWKS code; the receiver is
// served over real HTTP too. Tokens are minted by the engine's signing code (valid ones) or by
// hand with jose (attacks). Only time is fake.
const clock = new ManualClock(Date.parse('2026-03-01T12:00:00.000Z'));
let ours: SigningKey;
let other: SigningKey;
let issuer: string;
let receiverUrl: string;
let jwksHits = 0;
const handled: Array<{ event: UserCreatedEvent; webhookId: string }> = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  ours = await testKey();
  other = await generateSigningKey();
  const keys = new KeySet([ours]);
  const site = await serveHandler(async (req) => (jwksHits++, jwksResponse(keys.jwks(), req.method)));
  issuer = site.url;
  const receive = createReceiver({
    verifier: createVerifier({ issuer, clock }),
    on: { 'user.created': (event, ctx) => void handled.push({ event, webhookId: ctx.webhookId }) },
    onError: () => {},
  });
  const receiver = await serveHandler(receive);
  receiverUrl = `${receiver.url}/webhooks`;
  closers.push(site.close, receiver.close);
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});
beforeEach(() => {
  handled.length = 0;
});

const event: EventRecord = {
  id: 'event_0123456789abcdef0123456789abcdef',
  environment: 'default',
  type: 'user.created',
  source: 'admin',
  data: userData(),
  eventTimestamp: Date.parse('2026-03-01T11:59:00.000Z'),
  createdAt: Date.parse('2026-03-01T11:59:00.000Z'),
};

/** A token exactly as the engine signs it, now. */
async function valid(): Promise<string> {
  return signClaims(buildClaims(event, issuer, clock.now()), await importSigningKey(ours));
}

/** A token signed RS256 by `key` with claims and header overridden. */
async function forged(claims: Record<string, unknown> = {}, key = ours, header: Record<string, unknown> = {}): Promise<string> {
  const payload = { ...buildClaims(event, issuer, clock.now()), ...claims };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT', ...header })
    .sign((await importSigningKey(key)).key);
}

let seq = 0;
async function post(body: string, headers: Record<string, string> = {}) {
  const res = await fetch(receiverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/jwt', 'webhook-id': `msg_attack_${++seq}`, ...headers },
    body,
  });
  return { status: res.status, body: (await res.json()) as { message: string; code?: string } };
}

const json = (value: unknown) => base64url.encode(JSON.stringify(value));

describe('attacks: each is answered 400 and never reaches a handler', () => {
  test('a valid delivery is handled (the baseline the attacks are measured against)', async () => {
    const res = await post(await valid(), { 'webhook-id': 'msg_baseline' });
    expect(res).toEqual({ status: 200, body: { message: 'processed' } });
    expect(handled).toHaveLength(1);
    expect(handled[0]!.webhookId).toBe('msg_baseline');
    expect(handled[0]!.event).toMatchObject({ type: 'user.created', event_id: event.id, iss: issuer, data: userData() });
  });

  const attacks: Array<[string, () => Promise<{ body: string; headers?: Record<string, string> }>, string]> = [
    [
      'a token signed by another key, claiming our kid',
      async () => ({ body: await forged({}, other, { kid: ours.kid }) }),
      'ERR_SIGNATURE_INVALID',
    ],
    ['a token signed by another key, with its own kid', async () => ({ body: await forged({}, other) }), 'ERR_KEY_NOT_FOUND'],
    [
      'alg: none',
      async () => ({ body: `${json({ alg: 'none', typ: 'JWT' })}.${json(buildClaims(event, issuer, clock.now()))}.` }),
      'ERR_ALGORITHM_NOT_ALLOWED',
    ],
    [
      'alg: none with our kid',
      async () => ({ body: `${json({ alg: 'none', kid: ours.kid })}.${json(buildClaims(event, issuer, clock.now()))}.` }),
      'ERR_ALGORITHM_NOT_ALLOWED',
    ],
    [
      'HS256 keyed with our public key as JWK JSON',
      async () => ({ body: await hs256(new TextEncoder().encode(JSON.stringify({ kty: 'RSA', n: ours.n, e: ours.e }))) }),
      'ERR_ALGORITHM_NOT_ALLOWED',
    ],
    [
      'HS256 keyed with our public key as PEM',
      async () => ({ body: await hs256(new TextEncoder().encode(await publicPem(ours))) }),
      'ERR_ALGORITHM_NOT_ALLOWED',
    ],
    ['RS512 signed by our own key (only RS256 is accepted)', async () => ({ body: await rs512() }), 'ERR_ALGORITHM_NOT_ALLOWED'],
    [
      'a tampered payload (another email, original signature)',
      async () => ({ body: tamper(await valid(), (c) => ({ ...c, data: userData({ email: 'mallory@example.com' }) })) }),
      'ERR_SIGNATURE_INVALID',
    ],
    [
      'a tampered type (original signature)',
      async () => ({ body: tamper(await valid(), (c) => ({ ...c, type: 'user.deleted' })) }),
      'ERR_SIGNATURE_INVALID',
    ],
    ['a wrong iss, properly signed', async () => ({ body: await forged({ iss: 'https://evil.example.com' }) }), 'ERR_ISSUER_MISMATCH'],
    ['no iss, properly signed', async () => ({ body: await forged({ iss: undefined }) }), 'ERR_ISSUER_MISMATCH'],
    ['a stale timestamp (5 min 1 ms old)', async () => ({ body: await forged({ timestamp: iso(-300_001) }) }), 'ERR_TIMESTAMP_STALE'],
    ['a future timestamp (beyond the 30 s skew)', async () => ({ body: await forged({ timestamp: iso(30_001) }) }), 'ERR_TIMESTAMP_FUTURE'],
    ['a timestamp that is not a date', async () => ({ body: await forged({ timestamp: 'yesterday' }) }), 'ERR_INVALID_CLAIMS'],
    ['an expired exp claim', async () => ({ body: await forged({ exp: Math.floor(clock.now() / 1000) - 60 }) }), 'ERR_TIMESTAMP_STALE'],
    ['data that is not an object', async () => ({ body: await forged({ data: 'x' }) }), 'ERR_INVALID_CLAIMS'],
    ['a malformed token (not three parts)', async () => ({ body: 'not-a-jwt' }), 'ERR_MALFORMED_TOKEN'],
    [
      'a malformed token (header is not JSON)',
      async () => ({ body: `${base64url.encode('nope')}.${json({})}.c2ln` }),
      'ERR_MALFORMED_TOKEN',
    ],
    ['a malformed token (four parts)', async () => ({ body: `${await valid()}.x` }), 'ERR_MALFORMED_TOKEN'],
    [
      'a JSON body sent as application/json (the legacy content type)',
      async () => ({ body: JSON.stringify(buildClaims(event, issuer, clock.now())), headers: { 'content-type': 'application/json' } }),
      'ERR_CONTENT_TYPE',
    ],
    [
      'a valid token sent as application/json',
      async () => ({ body: await valid(), headers: { 'content-type': 'application/json' } }),
      'ERR_CONTENT_TYPE',
    ],
    [
      'a JSON body sent as application/jwt',
      async () => ({ body: JSON.stringify(buildClaims(event, issuer, clock.now())) }),
      'ERR_MALFORMED_TOKEN',
    ],
    ['an empty body', async () => ({ body: '' }), 'ERR_EMPTY_BODY'],
    ['a body of whitespace', async () => ({ body: ' \n' }), 'ERR_EMPTY_BODY'],
    ['no webhook-id header', async () => ({ body: await valid(), headers: { 'webhook-id': '' } }), 'ERR_WEBHOOK_ID'],
  ];

  test.each(attacks)('%s', async (_name, make, code) => {
    const { body, headers } = await make();
    const res = await post(body, headers);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(code);
    expect(typeof res.body.message).toBe('string');
    expect(handled).toEqual([]);
  });

  test('a body past the limit is refused unread (413) and never reaches a handler', async () => {
    const res = await post('a'.repeat(1024 * 1024 + 1));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('ERR_BODY_TOO_LARGE');
    expect(handled).toEqual([]);
  });

  test('a timestamp exactly 5 minutes old or 30 s ahead is still accepted (the window is inclusive)', async () => {
    expect((await post(await forged({ timestamp: iso(-300_000) }))).status).toBe(200);
    expect((await post(await forged({ timestamp: iso(30_000) }))).status).toBe(200);
    expect(handled).toHaveLength(2);
  });

  test('forged kids cannot make the receiver hammer the key set: one refetch per cool-down', async () => {
    await post(await valid()); // the key set is cached
    await clock.advance(30_000); // the cool-down since the last fetch is over
    const before = jwksHits;
    for (let i = 0; i < 5; i++) expect((await post(await forged({}, other, { kid: `forged-${i}` }))).body.code).toBe('ERR_KEY_NOT_FOUND');
    expect(jwksHits - before).toBe(1);
    await clock.advance(29_999);
    expect((await post(await forged({}, other, { kid: 'forged-in-cooldown' }))).body.code).toBe('ERR_KEY_NOT_FOUND');
    expect(jwksHits - before).toBe(1);
    await clock.advance(1);
    expect((await post(await forged({}, other, { kid: 'forged-after-cooldown' }))).body.code).toBe('ERR_KEY_NOT_FOUND');
    expect(jwksHits - before).toBe(2);
    expect(handled).toHaveLength(1);
  });
});

describe('replay', () => {
  test('the same valid request with the same webhook-id is answered 200 and handled once', async () => {
    const token = await valid();
    const first = await post(token, { 'webhook-id': 'msg_replayed' });
    const second = await post(token, { 'webhook-id': 'msg_replayed' });
    expect(first).toEqual({ status: 200, body: { message: 'processed' } });
    expect(second).toEqual({ status: 200, body: { message: 'already processed' } });
    expect(handled).toHaveLength(1);
  });

  test('a retry (fresh timestamp, same webhook-id) of a processed delivery is not handled again', async () => {
    expect((await post(await valid(), { 'webhook-id': 'msg_retried' })).status).toBe(200);
    await clock.advance(60_000);
    expect((await post(await valid(), { 'webhook-id': 'msg_retried' })).body.message).toBe('already processed');
    expect(handled).toHaveLength(1);
  });

  test('a captured request replayed after the age window is refused even with a new webhook-id', async () => {
    const token = await valid();
    await clock.advance(300_001);
    const res = await post(token, { 'webhook-id': 'msg_new_id_for_old_token' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('ERR_TIMESTAMP_STALE');
    expect(handled).toEqual([]);
  });
});

function iso(offsetMs: number): string {
  return new Date(clock.now() + offsetMs).toISOString();
}

function tamper(token: string, change: (claims: Record<string, unknown>) => Record<string, unknown>): string {
  const [h, p, s] = token.split('.');
  const claims = JSON.parse(new TextDecoder().decode(base64url.decode(p!))) as Record<string, unknown>;
  return `${h}.${json(change(claims))}.${s}`;
}

async function hs256(secret: Uint8Array): Promise<string> {
  return new SignJWT({ ...buildClaims(event, issuer, clock.now()) })
    .setProtectedHeader({ alg: 'HS256', kid: ours.kid, typ: 'JWT' })
    .sign(secret);
}

async function rs512(): Promise<string> {
  const { kid, n, e, d, p, q, dp, dq, qi } = ours;
  const key = await importJWK({ kty: 'RSA', n, e, d, p, q, dp, dq, qi }, 'RS512');
  return new SignJWT({ ...buildClaims(event, issuer, clock.now()) }).setProtectedHeader({ alg: 'RS512', kid, typ: 'JWT' }).sign(key);
}

async function publicPem(key: SigningKey): Promise<string> {
  return exportSPKI((await importJWK({ kty: 'RSA', n: key.n, e: key.e }, 'RS256', { extractable: true })) as CryptoKey);
}
