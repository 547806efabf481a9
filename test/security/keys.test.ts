import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { createLocalJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, generateSigningKey, type ManualClock, type SigningKey, type Webhooks } from '../../src/index.js';
import { KeySet } from '../../src/signing/keyset.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';

// Signing key handling: private key material never leaves the KeySet; weak keys are refused;
// rotation publishes before signing and unpublishes only once the old key's tokens are stale.

const cleanups = useCleanups();

const MIN = 60_000;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;

/** Every spelling of the key's private members we might leak: base64url, base64, hex. */
function secretsOf(key: SigningKey): string[] {
  return PRIVATE_MEMBERS.flatMap((m) => {
    const value = (key as unknown as Record<string, string>)[m]!;
    const bytes = Buffer.from(value, 'base64url');
    // Overlapping 24-character windows every 12: any leaked run of 36+ characters contains one,
    // wherever it starts (a truncated excerpt, an odd hex offset).
    return [value, bytes.toString('base64'), bytes.toString('hex')].flatMap((s) => {
      const windows: string[] = [];
      for (let i = 0; i + 24 <= s.length; i += 12) windows.push(s.slice(i, i + 24));
      return windows;
    });
  });
}

const rsa1024 = () =>
  ({ ...generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'jwk' }), kid: 'short' }) as SigningKey;
/** A well-formed key whose private half belongs to another modulus. */
const mismatched = async (): Promise<SigningKey> => {
  const [a, b] = [await generateSigningKey({ kid: 'a' }), await generateSigningKey({ kid: 'b' })];
  return { ...a, d: b.d, p: b.p, q: b.q, dp: b.dp, dq: b.dq, qi: b.qi, kid: 'mismatched' };
};

describe('weak or wrong keys are refused for RS256', () => {
  test('at createWebhooks(), at rotate(), and at start() for a key whose halves do not match', async () => {
    const { privateKey: ec } = await generateKeyPair('ES256', { extractable: true });
    const { privateKey: ed } = await generateKeyPair('EdDSA', { extractable: true });
    const good = await testKey();
    const bad: SigningKey[] = [
      rsa1024(),
      { ...(await exportJWK(ec)), kid: 'ec' } as unknown as SigningKey,
      { ...(await exportJWK(ed)), kid: 'ed' } as unknown as SigningKey,
      { ...good, kid: 'e1', e: 'AQ' }, // e = 1
      { ...good, kid: 'e2', e: 'Ag' }, // e = 2
      { ...good, kid: 'hs', alg: 'HS256' } as SigningKey,
    ];
    const store = sqliteStore({ filename: ':memory:' });
    cleanups.push(() => store.close());
    for (const key of bad) {
      expect(() => createWebhooks({ store, keys: [key], issuer: 'https://auth.example.com' })).toThrow(TypeError);
      await expect(new KeySet([good]).rotate(key)).rejects.toThrow(TypeError);
    }
    await expect(new KeySet([good]).rotate(await mismatched())).rejects.toThrow(/does not match/);
    const hooks = createWebhooks({ store, keys: [await mismatched()], issuer: 'https://auth.example.com' });
    await expect(hooks.start()).rejects.toThrow(/does not match/);
    await hooks.close();
  });
});

describe('private key material never leaves the key set', () => {
  test('scanned: JWKS, keys.list, API responses, attempt logs, deliveries, errors, log lines, inspect output, the database file', async () => {
    const key = await generateSigningKey({ kid: 'scan-a' });
    const next = await generateSigningKey({ kid: 'scan-b' });
    const corpus: string[] = [];
    const log = (level: string) => (message: string, meta?: unknown) =>
      void corpus.push(`${level} ${message} ${inspect(meta, { depth: 8 })}`);
    const ok = await startReceiver(() => 200);
    const failing = await startReceiver((req) => ({ status: 500, body: req.body })); // echoes our token back
    cleanups.push(
      () => ok.close(),
      () => failing.close(),
    );
    const env = await makeEngine({
      keys: [key],
      logger: { warn: log('warn'), error: log('error') },
      authorize: () => ({ environment: 'default' }),
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    await hooks.start();

    const api = async (method: string, path: string, body?: unknown) => {
      const res = await hooks.handler(
        new Request(`http://auth.test${path}`, {
          method,
          headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
      corpus.push(`${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`);
    };
    const errorText = (e: unknown) => {
      const err = e as Error & { cause?: Error };
      corpus.push(
        `${err.name} ${err.message} ${err.stack} ${err.cause?.message} ${err.cause?.stack} ${JSON.stringify(err)} ${inspect(err, { depth: 8 })}`,
      );
    };

    await hooks.webhooks.create({ name: 'ok', endpoint: `${ok.url}/x`, eventTypes: ['user.created'] });
    await hooks.webhooks.create({ name: 'failing', endpoint: `${failing.url}/x`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    await env.clock.advance(60_000); // a retry of the failing one
    await hooks.keys.rotate(rsa1024()).catch(errorText);
    await hooks.keys.rotate(await mismatched()).catch(errorText);
    await hooks.keys.rotate({ ...key, kid: 'scan-a' }).catch(errorText); // duplicate kid
    const spare = sqliteStore({ filename: ':memory:' });
    cleanups.push(() => spare.close());
    try {
      createWebhooks({ store: spare, keys: [{ ...key, n: key.n.slice(0, 100) }], issuer: 'https://a.example' });
    } catch (e) {
      errorText(e);
    }
    await hooks.webhooks.create({ name: 'x', endpoint: 'ftp://x', eventTypes: ['user.created'] }).catch(errorText);
    corpus.push(JSON.stringify(await hooks.keys.rotate(next, { overlapMs: 0 })));
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();

    await api('GET', '/.well-known/jwks');
    await api('GET', '/.well-known/jwks.json');
    await api('GET', '/api/v1/webhooks');
    await api('POST', '/api/v1/webhooks', { name: 'n', endpoint: 'http://169.254.169.254/', event_types: ['user.created'] });
    await api('POST', '/api/v1/webhooks', { garbage: true });
    await api('GET', `/api/v1/events/${ev.id}`);
    await api('GET', '/api/v1/event_types');
    corpus.push(JSON.stringify(hooks.jwks()), JSON.stringify(hooks.keys.list()), inspect(hooks.keys.list(), { depth: 8 }));
    for (const w of await hooks.webhooks.list()) corpus.push(JSON.stringify(w));
    for (const d of (await hooks.deliveries.list()).deliveries) {
      corpus.push(JSON.stringify(d));
      for (const a of await hooks.deliveries.attempts(d.id)) corpus.push(JSON.stringify(a));
    }
    corpus.push(...ok.requests.map((r) => `${JSON.stringify(r.headers)} ${r.body}`), ...failing.requests.map((r) => r.body));
    corpus.push(inspect(hooks, { depth: 12, showHidden: true, getters: true }));
    await hooks.close();
    for (const f of readdirSync(env.dir.dir)) corpus.push(readFileSync(`${env.dir.dir}/${f}`).toString('latin1'));

    const text = corpus.join('\n');
    expect(corpus.length).toBeGreaterThan(20);
    expect(text).toContain(key.n.slice(0, 40)); // the scan can see key material: the public half is there
    for (const secret of [...secretsOf(key), ...secretsOf(next)]) expect(text).not.toContain(secret);
  });
});

describe('rotation', () => {
  async function deliverAndVerify(hooks: Webhooks, received: string[], clock: ManualClock): Promise<string> {
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const token = received.at(-1)!;
    // Verified against the JWKS exactly as served at this moment.
    const jwks = await (await hooks.handler(new Request('http://auth.test/.well-known/jwks'))).json();
    await jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['RS256'], currentDate: new Date(clock.now()) });
    return decodeProtectedHeader(token).kid as string;
  }
  const published = (hooks: Webhooks) => (hooks.jwks().keys as Array<{ kid: string }>).map((k) => k.kid);

  test('publish now, sign after the overlap, unpublish once the old tokens are stale', async () => {
    const oldKey = await testKey();
    const newKey = await generateSigningKey({ kid: 'new' });
    const received: string[] = [];
    const r = await startReceiver((req) => (received.push(req.body), 200));
    const env = await makeEngine();
    cleanups.push(
      () => r.close(),
      () => env.close(),
    );
    const { hooks, clock } = env;
    await hooks.start();
    await hooks.webhooks.create({ name: 'w', endpoint: `${r.url}/w`, eventTypes: ['user.created'] });
    const t0 = clock.now();

    const info = await hooks.keys.rotate(newKey);
    expect(info).toMatchObject({ kid: 'new', status: 'next', signsFrom: t0 + 10 * MIN });
    // The overlap outlasts the JWKS cache lifetime the handler advertises.
    const maxAge = Number(
      /max-age=(\d+)/.exec((await hooks.handler(new Request('http://auth.test/.well-known/jwks'))).headers.get('cache-control')!)![1],
    );
    expect(info.signsFrom! - t0).toBeGreaterThan(maxAge * 1000);
    expect(published(hooks)).toEqual([oldKey.kid, 'new']);
    expect(await deliverAndVerify(hooks, received, clock)).toBe(oldKey.kid);

    await clock.advance(10 * MIN - 1);
    expect(await deliverAndVerify(hooks, received, clock)).toBe(oldKey.kid);
    const lastOldToken = received.at(-1)!;

    await clock.advance(1);
    expect(await deliverAndVerify(hooks, received, clock)).toBe('new');
    expect(hooks.keys.list().map((k) => [k.kid, k.status])).toEqual([
      [oldKey.kid, 'retiring'],
      ['new', 'signing'],
    ]);
    expect(hooks.keys.list()[0]!.unpublishAt).toBe(t0 + 15 * MIN);

    // The last token of the old key still verifies while it is fresh...
    await clock.advance(5 * MIN - 1);
    await jwtVerify(lastOldToken, createLocalJWKSet(hooks.jwks() as never), { currentDate: new Date(clock.now()) });
    expect(published(hooks)).toEqual([oldKey.kid, 'new']);
    // ...and once it is stale the old key leaves the JWKS.
    await clock.advance(1);
    expect(published(hooks)).toEqual(['new']);
    expect(hooks.keys.list().map((k) => k.kid)).toEqual(['new']);
    expect(await deliverAndVerify(hooks, received, clock)).toBe('new');
  });

  test('one rotation at a time, distinct kids, sane options', async () => {
    let now = 1_000_000;
    const keys = new KeySet([await testKey()], { now: () => now });
    await expect(keys.rotate(await testKey())).rejects.toThrow(/already in the key set/);
    await expect(keys.rotate(await generateSigningKey(), { overlapMs: -1 })).rejects.toThrow(TypeError);
    await expect(keys.rotate(await generateSigningKey(), { signsFrom: Number.NaN })).rejects.toThrow(TypeError);
    await keys.rotate(await generateSigningKey({ kid: 'b' }), { overlapMs: 1000, maxTokenAgeMs: 500 });
    await expect(keys.rotate(await generateSigningKey({ kid: 'c' }))).rejects.toThrow(/pending/);
    now += 1000;
    expect((await keys.signingKey()).kid).toBe('b');
    await keys.rotate(await generateSigningKey({ kid: 'c' }), { overlapMs: 0 }); // b's rotation is done: fine
    expect((await keys.signingKey()).kid).toBe('c');
  });

  test('two processes given the same signsFrom at different moments agree at every instant', async () => {
    let now = Date.parse('2026-03-01T11:00:00Z');
    const switchAt = Date.parse('2026-03-01T12:00:00Z');
    const [a, b] = [await testKey(), await generateSigningKey({ kid: 'b' })];
    const p1 = new KeySet([a], { now: () => now });
    const p2 = new KeySet([a], { now: () => now });
    await p1.rotate(b, { signsFrom: switchAt });
    now += 20 * MIN; // the second process boots later
    await p2.rotate(b, { signsFrom: new Date(switchAt) });
    for (const t of [now, switchAt - 1, switchAt, switchAt + 5 * MIN - 1, switchAt + 5 * MIN, switchAt + 60 * MIN]) {
      expect(p2.jwks(t)).toEqual(p1.jwks(t));
      expect((await p2.signingKey(t)).kid).toBe((await p1.signingKey(t)).kid);
    }
  });
});
