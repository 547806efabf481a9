import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ManualClock, type SigningKey } from '../../src/index.js';
import { createReceiver, createVerifier, type WebhookVerificationError } from '../../src/receiver/index.js';
import { MAX_KEY_SET_BYTES } from '../../src/receiver/remote-keyset.js';
import { importSigningKey } from '../../src/signing/keys.js';
import { KeySet } from '../../src/signing/keyset.js';
import { buildClaims, signClaims } from '../../src/signing/token.js';
import { testKey, userEvent } from '../helpers/fixtures.js';
import { rawKeySetServer } from './keyset-server.js';

// The receiver's bound on a fetched key set: it reads at most MAX_KEY_SET_BYTES, streaming, and
// stops reading past it; an endless or lying server costs a quick 503, not memory.

const clock = new ManualClock(Date.parse('2026-03-01T12:00:00.000Z'));
let key: SigningKey;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  key = await testKey();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

async function token(issuer: string): Promise<string> {
  const at = clock.now() - 1000;
  const record = userEvent(at);
  return signClaims(buildClaims(record, issuer, clock.now()), await importSigningKey(key));
}

async function serve(answer: Parameters<typeof rawKeySetServer>[0]) {
  const server = await rawKeySetServer(answer);
  closers.push(server.close);
  return server;
}

/** Verifies one token against `issuer`; returns the error and how long it took. */
async function attempt(issuer: string) {
  const started = performance.now();
  const error = await createVerifier({ issuer, clock })
    .verify(await token(issuer))
    .then(
      () => null,
      (e: unknown) => e as WebhookVerificationError,
    );
  return { error, ms: performance.now() - started };
}

const keyEntry = JSON.stringify(new KeySet([await testKey()]).jwks().keys[0]);
const endlessKeys = {
  head: 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"keys":[',
  chunk: `${keyEntry},`.repeat(16),
};

describe('the key set download is bounded', () => {
  test(`exactly ${MAX_KEY_SET_BYTES} bytes is read and used; one byte more is refused`, async () => {
    const jwks = JSON.stringify(new KeySet([key]).jwks());
    const padded = (size: number) => jwks + ' '.repeat(size - Buffer.byteLength(jwks)); // JSON allows trailing space
    const at = await serve({
      head: `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n`,
      body: padded(MAX_KEY_SET_BYTES),
    });
    expect((await createVerifier({ issuer: at.url, clock }).verify(await token(at.url))).type).toBe('user.created');
    // No content-length, so only counting the streamed bytes can catch it.
    const over = await serve({
      head: `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n`,
      body: padded(MAX_KEY_SET_BYTES + 1),
    });
    const { error } = await attempt(over.url);
    expect(error).toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE', status: 503 });
    expect(error!.message).toContain(`the key set is larger than ${MAX_KEY_SET_BYTES} bytes`);
  });

  test.each([
    ['no content-length', endlessKeys.head],
    ['a content-length that says 300 MB', endlessKeys.head.replace('connection: close', 'content-length: 300000000')],
  ])('an endless key set with %s: refused in well under the 5 s deadline, the download stopped, memory bounded', async (_, head) => {
    const server = await serve({ ...endlessKeys, head, endless: true });
    const rssBefore = process.memoryUsage().rss;
    const { error, ms } = await attempt(server.url);
    expect(error).toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE' });
    expect(error!.message).toContain('larger than 65536 bytes');
    expect(ms).toBeLessThan(2000);
    // The reader cancelled: the server sees its connection close, having pushed no more than the
    // limit plus what the loopback socket buffers hold (an unbounded read takes GBs in 2 s).
    await expect.poll(() => server.stats.closed === server.stats.connections, { timeout: 2000 }).toBe(true);
    expect(server.stats.requests).toBe(1);
    expect(server.stats.sent).toBeLessThan(32 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(128 * 1024 * 1024);
  });

  test('a content-length that says 10 bytes and a body that never ends: refused, the connection dropped', async () => {
    const head = endlessKeys.head.replace('connection: close', 'content-length: 10');
    const server = await serve({ ...endlessKeys, head, endless: true });
    const { error, ms } = await attempt(server.url);
    expect(error).toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE' });
    expect(error!.message).toContain('not JSON'); // the 10 bytes it declared, '{"keys":[{'
    expect(ms).toBeLessThan(2000);
    await expect.poll(() => server.stats.closed === server.stats.connections, { timeout: 2000 }).toBe(true);
    expect(server.stats.requests).toBe(1);
    expect(server.stats.sent).toBeLessThan(32 * 1024 * 1024);
  });

  test('createReceiver answers 503 to an endless key set, quickly, and tells its operator why', async () => {
    const server = await serve({ ...endlessKeys, endless: true });
    const logged: unknown[] = [];
    const receive = createReceiver({
      verifier: createVerifier({ issuer: server.url, clock }),
      on: {},
      onError: (error) => logged.push(error),
    });
    const started = performance.now();
    const res = await receive(
      new Request('http://receiver.test/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/jwt', 'webhook-id': 'msg_1' },
        body: await token(server.url),
      }),
    );
    expect(res.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(logged).toHaveLength(1);
    expect((logged[0] as Error).message).toContain(`${server.url}/.well-known/jwks: the key set is larger than ${MAX_KEY_SET_BYTES} bytes`);
  });
});
