import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jwksResponse } from '../../src/http/jwks.js';
import { ManualClock, type SigningKey } from '../../src/index.js';
import { createReceiver, createVerifier, type WebhookVerificationError } from '../../src/receiver/index.js';
import { importSigningKey } from '../../src/signing/keys.js';
import { KeySet } from '../../src/signing/keyset.js';
import { buildClaims } from '../../src/signing/token.js';
import { testKey, userEvent } from '../helpers/fixtures.js';
import { serveHandler } from '../helpers/http.js';

// Receiver errors that point at the fix. The sender gets what it can act on;
// the receiver's operator (onError, error.message) gets the URL tried and what to check.

const clock = new ManualClock(Date.parse('2026-03-01T12:00:00.000Z'));
let key: SigningKey;
/** The host's base address, where a host mounting hooks.handler under /auth serves its key set. */
let site: string;
/** An address where nothing listens. */
let closedPort: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  key = await testKey();
  const jwks = new KeySet([key]).jwks();
  const server = await serveHandler(async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/auth/.well-known/jwks') return jwksResponse(jwks, req.method);
    if (path === '/html/.well-known/jwks') return new Response('<html>login</html>', { headers: { 'content-type': 'text/html' } });
    return new Response('no such page', { status: 404 });
  });
  site = server.url;
  closers.push(server.close);
  const gone = await serveHandler(async () => new Response());
  closedPort = gone.url;
  await gone.close();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** A token signed by the issuer's real key, with `iss` as given (absent when undefined). */
async function token(iss: unknown): Promise<string> {
  const at = clock.now() - 1000;
  const record = userEvent(at);
  const claims: Record<string, unknown> = { ...buildClaims(record, 'x', clock.now()), iss };
  if (iss === undefined) delete claims.iss;
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' }).sign((await importSigningKey(key)).key);
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: unknown) => e as WebhookVerificationError,
  );

function receiverFor(issuer: string, options: { jwksUrl?: string } = {}) {
  const logged: Error[] = [];
  const receive = createReceiver({
    verifier: createVerifier({ issuer, clock, ...options }),
    on: { 'user.created': () => {} },
    onError: (error) => logged.push(error as Error),
  });
  const post = async (body: string) => {
    const res = await receive(
      new Request('http://receiver.test/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/jwt', 'webhook-id': 'msg_1' },
        body,
      }),
    );
    return { status: res.status, body: (await res.json()) as { message: string; code?: string } };
  };
  return { post, logged };
}

describe('an issuer that differs from the token', () => {
  test('the 400 names the iss received and the issuer expected', async () => {
    const { post, logged } = receiverFor(`${site}/auth`);
    const res = await post(await token(site));
    expect(res).toEqual({
      status: 400,
      body: {
        code: 'ERR_ISSUER_MISMATCH',
        message: `the token's iss is "${site}", expected "${site}/auth" (the issuer must match exactly, including the host's mount prefix)`,
      },
    });
    expect(logged).toEqual([]); // the sender's mistake, answered to it: nothing for our operator
  });

  test('a missing or non-string iss is said so', async () => {
    const { post } = receiverFor(`${site}/auth`);
    expect((await post(await token(undefined))).body.message).toMatch(/^the token has no iss, expected "/);
    expect((await post(await token(42))).body.message).toMatch(/^the token's iss is a number, not a string, expected "/);
  });

  test('a hostile iss is cut short and quoted: no control, bidi or escape sequence reaches the answer or a log', async () => {
    const hostile = `evil\u202egpj.exe\u001b[2J\u0000"},\n${'x'.repeat(100_000)}`;
    const { post } = receiverFor(`${site}/auth`);
    const { status, body } = await post(await token(hostile));
    expect(status).toBe(400);
    expect(body.message.length).toBeLessThan(400);
    expect(body.message).toMatch(/^[\x20-\x7e]+$/);
    expect(body.message).toContain(String.raw`"evil\u202egpj.exe\u001b[2J\u0000\"},\nxxx`);
    expect(body.message).toContain(`x...", expected "${site}/auth"`);
  });
});

describe('a key set that cannot be loaded: the sender gets a plain 503, the operator the URL and the fix', () => {
  test.each([
    ['the issuer lacks the mount prefix (404)', () => site, '/.well-known/jwks: it answered HTTP 404'],
    ['nothing listens (network error)', () => closedPort, '/.well-known/jwks: fetch failed (ECONNREFUSED)'],
    ['a port fetch refuses to use', () => 'http://127.0.0.1:9', '/.well-known/jwks: fetch failed (bad port)'],
    ['the answer is not JSON', () => `${site}/html`, '/.well-known/jwks: the answer is not JSON'],
  ])('%s', async (_, issuerOf, reason) => {
    const issuer = issuerOf();
    const { post, logged } = receiverFor(issuer);
    const res = await post(await token(issuer));
    expect(res).toEqual({
      status: 503,
      body: { code: 'ERR_JWKS_UNAVAILABLE', message: "the issuer's key set is unavailable; try again later" },
    });
    expect(logged).toHaveLength(1);
    expect(logged[0]!.message).toBe(
      `could not load the key set from ${issuer}${reason}. Check the issuer ${JSON.stringify(issuer)}: it must be the sender's full base address, including the path its host mounts the webhooks handler under (the key set is served at {issuer}/.well-known/jwks).`,
    );
  });

  test('with an explicit jwksUrl the hint is about jwksUrl', async () => {
    const error = await failure(createVerifier({ issuer: site, clock, jwksUrl: `${site}/keys` }).verify(await token(site)));
    expect(error?.message).toBe(
      `could not load the key set from ${site}/keys: it answered HTTP 404. Check jwksUrl: it must be where the sender serves its key set ({issuer}/.well-known/jwks for identity-webhooks).`,
    );
  });

  test('once the issuer includes the prefix, the same token verifies', async () => {
    const { post, logged } = receiverFor(`${site}/auth`);
    expect((await post(await token(`${site}/auth`))).status).toBe(200);
    expect(logged).toEqual([]);
  });
});
