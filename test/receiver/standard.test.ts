import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { createReceiver, createStandardVerifier, type WebhookVerificationError } from '../../src/receiver/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { serveHandler } from '../helpers/http.js';

const cleanups = useCleanups();
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const T = Date.parse('2026-05-01T00:00:00Z');

/** A delivery signed by the reference signer (`standardwebhooks`), as any sender of the format would. */
function signed(id: string, at: number, body: string, key = secret): Request {
  const signature = new Webhook(key).sign(id, new Date(at), body);
  return new Request('https://receiver.test/hooks', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at / 1000)),
      'webhook-signature': signature,
    },
    body,
  });
}

const body = JSON.stringify({
  type: 'user.created',
  timestamp: new Date(T).toISOString(),
  data: { user: { id: 'kp_1' } },
  event_id: 'event_1',
  event_timestamp: new Date(T).toISOString(),
  source: 'api',
});

describe('createStandardVerifier', () => {
  test('verifies the reference signer, with either secret of a rotation; refuses a tampered body, id or timestamp, and an old one', async () => {
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    const handled: string[] = [];
    const receive = createReceiver({
      verifier: createStandardVerifier({ secret: [other, secret], clock: { now: () => T } }),
      on: { 'user.created': (event, ctx) => void handled.push(`${event.event_id} ${ctx.webhookId}`) },
    });
    expect((await receive(signed('msg_1', T, body))).status).toBe(200);
    expect((await receive(signed('msg_2', T, body, other))).status).toBe(200);
    expect(handled).toEqual(['event_1 msg_1', 'event_1 msg_2']);
    // Deduplicated on webhook-id like the JWT path.
    const again = await receive(signed('msg_1', T, body));
    expect([again.status, (await again.json()).message]).toEqual([200, 'already processed']);

    const tampered = async (request: Request) => (await receive(request)).status;
    const ok = signed('msg_3', T, body);
    const headers = Object.fromEntries(ok.headers);
    const rebuilt = (h: Record<string, string>, b = body) => new Request(ok.url, { method: 'POST', headers: h, body: b });
    expect(await tampered(rebuilt(headers, body.replace('kp_1', 'kp_2')))).toBe(400);
    expect(await tampered(rebuilt({ ...headers, 'webhook-id': 'msg_4' }))).toBe(400);
    expect(await tampered(rebuilt({ ...headers, 'webhook-timestamp': String(Math.floor(T / 1000) - 1) }))).toBe(400);
    expect(await tampered(signed('msg_5', T - 301_000, body))).toBe(400);
    expect(await tampered(signed('msg_6', T, body, `whsec_${randomBytes(32).toString('base64')}`))).toBe(400);
    expect(handled).toHaveLength(2);
  });

  test('the error codes say why', async () => {
    const verifier = createStandardVerifier({ secret, clock: { now: () => T } });
    const fail = (r: Request) => r.text().then((b) => verifier.verifyRequest!(b, r.headers).catch((e: WebhookVerificationError) => e.code));
    expect(await fail(signed('msg_1', T - 400_000, body))).toBe('ERR_TIMESTAMP_STALE');
    expect(await fail(signed('msg_1', T + 400_000, body))).toBe('ERR_TIMESTAMP_FUTURE');
    expect(await fail(signed('msg_1', T, body, `whsec_${randomBytes(24).toString('base64')}`))).toBe('ERR_SIGNATURE_INVALID');
    expect(await fail(signed('msg_1', T, '{"type":"user.created"}'))).toBe('ERR_INVALID_CLAIMS');
  });

  test("the engine's standard-webhooks deliveries pass the receiver end to end", async () => {
    const received: string[] = [];
    let verifierSecret = '';
    const site = await serveHandler((request) =>
      createReceiver({
        verifier: createStandardVerifier({ secret: verifierSecret }),
        on: { 'user.created': (e) => void received.push(e.event_id) },
      })(request),
    );
    cleanups.push(() => site.close());
    const env = await makeEngine({ clock: new ManualClock(Date.now()), secretsKey: randomBytes(32).toString('base64') });
    cleanups.push(() => env.close());
    await env.hooks.start();
    const wh = await env.hooks.webhooks.create({
      name: 'r',
      endpoint: `${site.url}/hooks`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    verifierSecret = (await env.hooks.webhooks.secret(wh.id)).secret;
    const ev = await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await env.hooks.drain();
    expect(received).toEqual([ev.id]);
    expect(await env.hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'delivered' });
  });
  test('v1a: the public key alone verifies the engine’s Ed25519 signature; a wrong key or a tampered body is refused', async () => {
    const received: string[] = [];
    const keys = { publicKey: '' as string | string[] };
    const raw: Array<{ body: string; headers: Headers }> = [];
    const site = await serveHandler(async (request) => {
      raw.push({ body: await request.clone().text(), headers: new Headers(request.headers) });
      return createReceiver({
        verifier: createStandardVerifier({ publicKey: keys.publicKey }),
        on: { 'user.created': (e) => void received.push(e.event_id) },
      })(request);
    });
    cleanups.push(() => site.close());
    const env = await makeEngine({ clock: new ManualClock(Date.now()), secretsKey: randomBytes(32).toString('base64') });
    cleanups.push(() => env.close());
    await env.hooks.start();
    const wh = await env.hooks.webhooks.create({
      name: 'r',
      endpoint: `${site.url}/hooks`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
      asymmetric: true,
    });
    const published = wh.signing!.publicKey!;
    const other = `whpk_${Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64')}`;
    // A wrong key: refused (400), so the engine records a failed attempt.
    keys.publicKey = other;
    const first = await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await env.hooks.drain();
    expect(received).toEqual([]);
    expect(await env.hooks.deliveries.get(first.deliveryIds[0]!)).toMatchObject({ status: 'pending' });
    // The published key, beside the wrong one (a key being replaced): verified, no secret held.
    keys.publicKey = [other, published];
    const second = await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await env.hooks.drain();
    expect(received).toEqual([second.id]);

    // The delivery as it arrived: only its v1a entry, under the public key; tampered, refused.
    const verifier = createStandardVerifier({ publicKey: published });
    const last = raw.at(-1)!;
    const onlyV1a = new Headers(last.headers);
    onlyV1a.set(
      'webhook-signature',
      String(last.headers.get('webhook-signature'))
        .split(' ')
        .filter((e) => e.startsWith('v1a,'))
        .join(' '),
    );
    await expect(verifier.verifyRequest!(last.body, onlyV1a)).resolves.toMatchObject({ event_id: second.id });
    await expect(verifier.verifyRequest!(last.body.replace(second.id, first.id), onlyV1a)).rejects.toMatchObject({
      code: 'ERR_SIGNATURE_INVALID',
    });
    // A v1a entry is not checked against a secret.
    await expect(createStandardVerifier({ secret }).verifyRequest!(last.body, onlyV1a)).rejects.toMatchObject({
      code: 'ERR_SIGNATURE_INVALID',
    });
    expect(() => createStandardVerifier({ publicKey: 'whpk_short' })).toThrow(TypeError);
    expect(() => createStandardVerifier({})).toThrow(TypeError);
  });

  test('a secret that is empty, not base64 or too short is a TypeError at once, never an unhandled rejection later', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const secret of ['', 'whsec_', 'whsec_!!!not base64!!!', 'whsec_c2hvcnQ=', ['whsec_', 'whsec_x']]) {
        expect(() => createStandardVerifier({ secret } as never), JSON.stringify(secret)).toThrow(TypeError);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
