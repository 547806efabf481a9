import { randomBytes, verify as verifySignature } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, test } from 'vitest';
import { ManualClock, WebhooksError } from '../../src/index.js';
import { ed25519PublicKey } from '../../src/signing/standard-webhooks.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { type ReceivedRequest, startReceiver } from '../helpers/http.js';

const cleanups = useCleanups();
const secretsKey = randomBytes(32).toString('base64');

async function setup(overrides: Parameters<typeof makeEngine>[0] = {}) {
  const receiver = await startReceiver();
  // The verifiers read the wall clock (a five-minute window): the engine's clock starts there.
  const env = await makeEngine({ clock: new ManualClock(Date.now()), secretsKey, ...overrides });
  cleanups.push(
    () => receiver.close(),
    () => env.close(),
  );
  await env.hooks.start();
  return { receiver, ...env };
}

const headersOf = (r: ReceivedRequest) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

/** True when both reference verifiers accept the request with `secret`. */
function verifiedBy(secret: string, r: ReceivedRequest, body = r.body, headers = headersOf(r)): boolean {
  let standard = true;
  let svix = true;
  try {
    new StandardWebhook(secret).verify(body, headers);
  } catch {
    standard = false;
  }
  try {
    new SvixWebhook(secret).verify(body, headers);
  } catch {
    svix = false;
  }
  expect(svix).toBe(standard); // they agree, always
  return standard;
}

describe('standard-webhooks format', () => {
  test('every delivery verifies with standardwebhooks and svix; tampering with body, id or timestamp is refused', async () => {
    const { hooks, receiver, clock } = await setup();
    const wh = await hooks.webhooks.create({
      name: 'CRM',
      endpoint: `${receiver.url}/hooks`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    expect(wh.format).toBe('standard-webhooks');
    expect(wh.signing?.secret).toBe('********');
    const { secret } = await hooks.webhooks.secret(wh.id);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

    const events = [];
    for (let i = 0; i < 5; i++) events.push(await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id: `kp_${i}` }) }));
    await hooks.drain();
    expect(receiver.requests).toHaveLength(5);
    for (const r of receiver.requests) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-timestamp']).toBe(String(Math.floor(clock.now() / 1000)));
      expect(String(r.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(verifiedBy(secret, r)).toBe(true);
      const body = JSON.parse(r.body);
      expect(Object.keys(body).sort()).toEqual(['data', 'event_id', 'event_timestamp', 'source', 'timestamp', 'type']);
      expect(body.type).toBe('user.created');
      expect(events.map((e) => e.id)).toContain(body.event_id);
      expect(events.flatMap((e) => e.deliveryIds)).toContain(r.headers['webhook-id']);
      // Tampered: body, id, timestamp.
      expect(verifiedBy(secret, r, r.body.replace('user.created', 'user.deleted'))).toBe(false);
      expect(verifiedBy(secret, r, r.body, { ...headersOf(r), 'webhook-id': 'msg_other' })).toBe(false);
      const ts = Number(r.headers['webhook-timestamp']) - 1;
      expect(verifiedBy(secret, r, r.body, { ...headersOf(r), 'webhook-timestamp': String(ts) })).toBe(false);
      // Another secret.
      expect(verifiedBy(`whsec_${randomBytes(32).toString('base64')}`, r)).toBe(false);
    }
  });

  test('during a rotation both the old and the new secret verify; after the grace only the new one', async () => {
    const { hooks, receiver, clock } = await setup();
    const wh = await hooks.webhooks.create({
      name: 'CRM',
      endpoint: `${receiver.url}/hooks`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    const old = (await hooks.webhooks.secret(wh.id)).secret;
    const rotated = await hooks.webhooks.rotateSecret(wh.id, { graceMs: 60_000 });
    expect(rotated.secret).not.toBe(old);
    expect(rotated.previousUntil).toBe(clock.now() + 60_000);
    expect((await hooks.webhooks.secret(wh.id)).secret).toBe(rotated.secret);
    expect((await hooks.webhooks.get(wh.id)).signing).toMatchObject({ secret: '********', previous: '********' });

    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const during = receiver.requests[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiedBy(old, during)).toBe(true);
    expect(verifiedBy(rotated.secret, during)).toBe(true);

    await clock.advance(61_000);
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const after = receiver.requests[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifiedBy(rotated.secret, after)).toBe(true);
    expect(verifiedBy(old, after)).toBe(false);
  });

  test('the grace defaults to 24 hours and is at most 7 days', async () => {
    const { hooks, receiver, clock } = await setup();
    const wh = await hooks.webhooks.create({
      name: 'a',
      endpoint: `${receiver.url}/a`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    expect((await hooks.webhooks.rotateSecret(wh.id)).previousUntil).toBe(clock.now() + 24 * 3600_000);
    await expect(hooks.webhooks.rotateSecret(wh.id, { graceMs: 8 * 24 * 3600_000 })).rejects.toMatchObject({ field: 'graceMs' });
    const jwt = await hooks.webhooks.create({ name: 'b', endpoint: `${receiver.url}/b`, eventTypes: ['user.created'] });
    await expect(hooks.webhooks.secret(jwt.id)).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'format' });
  });

  test('v1a: an Ed25519 signature beside v1, verified with the published public key', async () => {
    const { hooks, receiver } = await setup();
    const wh = await hooks.webhooks.create({
      name: 'a',
      endpoint: `${receiver.url}/a`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
      asymmetric: true,
    });
    expect(wh.signing?.publicKey).toMatch(/^whpk_/);
    expect(wh.signing?.privateKey).toBe('********');
    const { secret, publicKey } = await hooks.webhooks.secret(wh.id);
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const r = receiver.requests[0]!;
    expect(verifiedBy(secret, r)).toBe(true); // the v1a entry does not disturb them
    const v1a = String(r.headers['webhook-signature'])
      .split(' ')
      .find((s) => s.startsWith('v1a,'))!;
    const content = Buffer.from(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`);
    expect(verifySignature(null, content, ed25519PublicKey(publicKey!), Buffer.from(v1a.slice(4), 'base64'))).toBe(true);
    expect(verifySignature(null, Buffer.from(`${content}x`), ed25519PublicKey(publicKey!), Buffer.from(v1a.slice(4), 'base64'))).toBe(
      false,
    );
  });

  test('without secretsKey a standard-webhooks webhook is refused with ERR_SECRETS_KEY_REQUIRED, nothing written', async () => {
    const { hooks, receiver } = await setup({ secretsKey: undefined });
    const error = await hooks.webhooks
      .create({ name: 'a', endpoint: `${receiver.url}/a`, eventTypes: ['user.created'], format: 'standard-webhooks' })
      .catch((e) => e);
    expect(error).toBeInstanceOf(WebhooksError);
    expect(error).toMatchObject({ code: 'ERR_SECRETS_KEY_REQUIRED', field: 'format' });
    expect(await hooks.webhooks.list()).toEqual([]);
  });

  test('a JWT webhook and a standard-webhooks one on the same event each get their own body', async () => {
    const { hooks, receiver, verify } = await setup();
    await hooks.webhooks.create({ name: 'jwt', endpoint: `${receiver.url}/jwt`, eventTypes: ['user.created'] });
    const sw = await hooks.webhooks.create({
      name: 'sw',
      endpoint: `${receiver.url}/sw`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const jwt = receiver.requests.find((r) => r.path === '/jwt')!;
    const std = receiver.requests.find((r) => r.path === '/sw')!;
    await verify(jwt.body);
    expect(verifiedBy((await hooks.webhooks.secret(sw.id)).secret, std)).toBe(true);
  });

  test('resealSecrets: a new key first, re-seal, drop the old key; the secret and deliveries survive', async () => {
    const keyB = randomBytes(32).toString('base64');
    const env = await setup();
    const { receiver } = env;
    const wh = await env.hooks.webhooks.create({
      name: 'a',
      endpoint: `${receiver.url}/a`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    const { secret } = await env.hooks.webhooks.secret(wh.id);
    let hooks = await env.restart({ secretsKey: [keyB, secretsKey] });
    await hooks.start();
    expect(await hooks.webhooks.resealSecrets()).toEqual({ resealed: 1 });
    expect(await hooks.webhooks.resealSecrets()).toEqual({ resealed: 0 });
    hooks = await env.restart({ secretsKey: keyB });
    await hooks.start();
    expect((await hooks.webhooks.secret(wh.id)).secret).toBe(secret);
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(verifiedBy(secret, receiver.requests.at(-1)!)).toBe(true);
  });
  test('two rotations at once lose no secret: both secrets handed out verify', async () => {
    const { hooks, receiver } = await setup();
    const wh = await hooks.webhooks.create({
      name: 'r',
      endpoint: `${receiver.url}/r`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    const [a, b] = await Promise.all([hooks.webhooks.rotateSecret(wh.id), hooks.webhooks.rotateSecret(wh.id)]);
    expect(a.secret).not.toBe(b.secret);
    // One of them was applied after the other: the later signs, the earlier is its previous.
    const now = await hooks.webhooks.secret(wh.id);
    expect([a.secret, b.secret]).toContain(now.secret);
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const r = receiver.requests.at(-1)!;
    expect(verifiedBy(a.secret, r)).toBe(true);
    expect(verifiedBy(b.secret, r)).toBe(true);
  });

  test('eight rotations at once: every secret handed out verifies until its grace ends; past ten in grace, refused', async () => {
    const { hooks, receiver } = await setup();
    const wh = await hooks.webhooks.create({
      name: 'm',
      endpoint: `${receiver.url}/m`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    const original = (await hooks.webhooks.secret(wh.id)).secret;
    const handed = await Promise.all(Array.from({ length: 8 }, () => hooks.webhooks.rotateSecret(wh.id, { graceMs: 60_000 })));
    expect(new Set(handed.map((h) => h.secret)).size).toBe(8);
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const r = receiver.requests.at(-1)!;
    for (const secret of [original, ...handed.map((h) => h.secret)]) expect(verifiedBy(secret, r)).toBe(true);
    // In grace now: the original and seven of the eight. Two more make ten; the next is refused.
    await hooks.webhooks.rotateSecret(wh.id, { graceMs: 60_000 });
    await hooks.webhooks.rotateSecret(wh.id, { graceMs: 60_000 });
    await expect(hooks.webhooks.rotateSecret(wh.id, { graceMs: 60_000 })).rejects.toMatchObject({
      code: 'ERR_VALIDATION',
      field: 'graceMs',
    });
    // A rotation without grace ends every grace at once: only the new secret signs.
    const last = await hooks.webhooks.rotateSecret(wh.id, { graceMs: 0 });
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const after = receiver.requests.at(-1)!;
    expect(verifiedBy(last.secret, after)).toBe(true);
    expect(verifiedBy(original, after)).toBe(false);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  test('resealSecrets also re-seals credential header values, beside a rotation running at once', async () => {
    const keyB = randomBytes(32).toString('base64');
    const env = await setup();
    const { receiver } = env;
    const header = await env.hooks.webhooks.create({
      name: 'h',
      endpoint: `${receiver.url}/h`,
      eventTypes: ['user.created'],
      headers: { Authorization: 'Bearer h3ader-s3cret', 'X-Plain': 'p' },
    });
    const sw = await env.hooks.webhooks.create({
      name: 's',
      endpoint: `${receiver.url}/s`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    let hooks = await env.restart({ secretsKey: [keyB, secretsKey] });
    await hooks.start();
    const [resealed, rotated] = await Promise.all([hooks.webhooks.resealSecrets(), hooks.webhooks.rotateSecret(sw.id)]);
    expect(resealed.resealed).toBeGreaterThanOrEqual(1);
    await hooks.webhooks.resealSecrets(); // whatever the rotation sealed under the new key already
    // Only the new key now: the header's value and the rotated secret both open.
    hooks = await env.restart({ secretsKey: keyB });
    await hooks.start();
    expect((await hooks.webhooks.secret(sw.id)).secret).toBe(rotated.secret);
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(receiver.requests.find((r) => r.path === '/h')!.headers.authorization).toBe('Bearer h3ader-s3cret');
    expect(verifiedBy(rotated.secret, receiver.requests.find((r) => r.path === '/s')!)).toBe(true);
    expect((await hooks.webhooks.get(header.id)).headers).toEqual({ Authorization: '••••••••', 'X-Plain': 'p' });
  });
});

describe('the message view shows the request as it was sent', () => {
  test.each(['jwt', 'standard-webhooks'] as const)('%s: body and headers as the receiver got them, secrets masked', async (format) => {
    const { hooks, receiver } = await setup();
    await hooks.webhooks.create({
      name: 'CRM',
      endpoint: `${receiver.url}/hooks`,
      eventTypes: ['user.created'],
      format,
      headers: { 'X-Tenant': 'acme', 'X-Api-Key': 'k-very-secret-value' },
    });
    const { deliveryIds } = await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id: 'kp_msg' }) });
    await hooks.drain();
    const [got] = receiver.requests;
    const message = await hooks.deliveries.message(deliveryIds[0]!);
    expect(message.format).toBe(format);
    // Every header the view names was sent with that value, but the masked ones; and every
    // header sent is named, but the transport's own (host, content-length, connection…).
    const masked = Object.entries(message.headers).filter(([, v]) => v.includes('••••'));
    for (const [name, value] of Object.entries(message.headers)) {
      if (value.includes('••••')) expect(got!.headers[name], name).toBeDefined();
      else expect(got!.headers[name], name).toBe(value);
    }
    const transport = [
      'host',
      'content-length',
      'connection',
      'accept',
      'accept-encoding',
      'accept-language',
      'sec-fetch-mode',
      'traceparent',
    ];
    expect(Object.keys(got!.headers).filter((n) => !transport.includes(n) && !(n in message.headers))).toEqual([]);
    expect(masked.map(([n]) => n).sort()).toEqual(format === 'jwt' ? ['x-api-key'] : ['webhook-signature', 'x-api-key']);
    expect(JSON.stringify(message)).not.toContain('k-very-secret-value');
    if (format === 'standard-webhooks') {
      expect(message.payload).toEqual(JSON.parse(got!.body));
      expect(message.headers['content-type']).toBe('application/json');
    } else {
      const claims = JSON.parse(Buffer.from(got!.body.split('.')[1]!, 'base64url').toString());
      expect(message.payload).toEqual(claims);
    }
  });
});
