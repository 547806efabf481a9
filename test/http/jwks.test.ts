import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, generateSigningKey, ManualClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey } from '../helpers/fixtures.js';

const cleanups = useCleanups();

describe('JWKS handler', () => {
  test.each(['/.well-known/jwks', '/.well-known/jwks.json'])(
    'GET %s over real HTTP: public parts of every key, cacheable',
    async (path) => {
      const second = await generateSigningKey({ modulusLength: 3072 });
      const env = await makeEngine({ keys: [await testKey(), second] });
      cleanups.push(() => env.close());
      const res = await fetch(`${env.issuer}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
      const body = (await res.json()) as { keys: Record<string, string>[] };
      expect(body.keys).toHaveLength(2);
      const first = await testKey();
      expect(body.keys.map((k) => k.kid)).toEqual([first.kid, second.kid]);
      for (const k of body.keys) {
        expect(Object.keys(k).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
        expect(k).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
      }
      const text = JSON.stringify(body);
      expect(text).not.toContain(first.d);
      expect(text).not.toContain(second.d);
    },
  );

  test('only the first key signs', async () => {
    const second = await generateSigningKey();
    const env = await makeEngine({ keys: [second, await testKey()] });
    cleanups.push(() => env.close());
    const received: string[] = [];
    const { startReceiver } = await import('../helpers/http.js');
    const r = await startReceiver((req) => (received.push(req.body), 200));
    cleanups.push(() => r.close());
    await env.hooks.start();
    await env.hooks.webhooks.create({ name: 'w', endpoint: `${r.url}/w`, eventTypes: ['user.deleted'] });
    await env.hooks.emit({ type: 'user.deleted', source: 'admin', data: { user: { id: 'kp_1' } } });
    await env.hooks.drain();
    const { header } = await env.verify(received[0]!);
    expect(header.kid).toBe(second.kid);
  });

  test('other methods and paths', async () => {
    const env = await makeEngine();
    cleanups.push(() => env.close());
    expect((await env.hooks.handler(new Request('http://x/.well-known/jwks', { method: 'POST' }))).status).toBe(405);
    expect((await env.hooks.handler(new Request('http://x/.well-known/jwks', { method: 'HEAD' }))).status).toBe(200);
    expect((await env.hooks.handler(new Request('http://x/auth/.well-known/jwks'))).status).toBe(200); // under a prefix
  });
});

describe('keys and options are checked at createWebhooks()', () => {
  const store = () => {
    const s = sqliteStore({ filename: ':memory:' });
    cleanups.push(() => s.close());
    return s;
  };
  test('short, non-RSA, public-only, kid-less and duplicate keys are refused with a TypeError', async () => {
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'jwk' });
    const { privateKey: ec } = await generateKeyPair('ES256', { extractable: true });
    const good = await testKey();
    const cases: Array<[unknown, RegExp]> = [
      [[{ ...short, kid: 'short' }], /1024 bits is too short/],
      [[{ ...(await exportJWK(ec)), kid: 'ec' }], /needs an RSA key/],
      [[{ kty: 'RSA', n: good.n, e: good.e, kid: 'pub' }], /public key/],
      [[{ ...good, kid: undefined }], /needs a "kid"/],
      [[{ ...good, alg: 'RS512' }], /alg must be RS256/],
      [[good, good], /distinct kid/],
      [[], /non-empty array/],
    ];
    for (const [keys, message] of cases) {
      let err: unknown;
      try {
        createWebhooks({ store: store(), keys: keys as never, issuer: 'https://a.example.com' });
      } catch (e) {
        err = e;
      }
      expect(err, String(message)).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain(good.d);
    }
  });

  test('bad options are refused with a TypeError naming the option', async () => {
    const keys = [await testKey()];
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ issuer: 'not a url' }, /issuer/],
      [{ store: {} }, /store/],
      [{ delivery: { timeoutMs: 0 } }, /delivery.timeoutMs/],
      [{ delivery: { timeoutMs: 20_000, leaseMs: 10_000 } }, /leaseMs must be longer/],
      [{ limits: { maxWebhooks: -1 } }, /limits.maxWebhooks/],
      [{ backoff: { schedule: [-5] } }, /backoff.schedule/],
      [{ backoff: { jitter: 2 } }, /jitter/],
      [{ notifier: {} }, /notifier/],
      [{ authorize: 'yes' }, /authorize/],
      [{ clock: {} }, /clock/],
    ];
    for (const [extra, message] of cases) {
      expect(() => createWebhooks({ store: store(), keys, issuer: 'https://a.example.com', ...extra } as never), String(message)).toThrow(
        message,
      );
    }
  });

  test('a closed engine refuses calls with ERR_CLOSED', async () => {
    const hooks = createWebhooks({
      store: sqliteStore({ filename: ':memory:' }),
      keys: [await testKey()],
      issuer: 'https://a.example.com',
      clock: new ManualClock(),
    });
    await hooks.start();
    await hooks.close();
    await expect(hooks.webhooks.list()).rejects.toMatchObject({ code: 'ERR_CLOSED' });
    await hooks.close(); // idempotent
  });
});
