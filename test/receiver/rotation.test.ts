import { decodeProtectedHeader } from 'jose';
import { beforeAll, expect, test } from 'vitest';
import { generateSigningKey, type SigningKey, type Webhooks } from '../../src/index.js';
import { createReceiver, createVerifier } from '../../src/receiver/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { serveHandler } from '../helpers/http.js';

// The engine's signing key changes while one receiver keeps running, never restarted. Either
// through hooks.keys.rotate, or by restarting the engine on the same SQLite file and issuer with
// another key configuration; either way the key set at {issuer}/.well-known/jwks changes under
// the receiver.
let oldKey: SigningKey;
let newKey: SigningKey;
beforeAll(async () => {
  oldKey = await testKey();
  newKey = await generateSigningKey();
});

const cleanups = useCleanups();

async function setup() {
  const env = await makeEngine({ keys: [oldKey] });
  cleanups.push(() => env.close());
  let jwksFetches = 0;
  const refusals: string[] = [];
  const handled: string[] = [];
  const kids: string[] = [];
  const receive = createReceiver({
    verifier: createVerifier({ issuer: env.issuer, clock: env.clock, fetch: (url, init) => (jwksFetches++, fetch(url, init)) }),
    on: { 'user.created': (event) => void handled.push(event.event_id) },
  });
  // Records why a delivery was refused, so a failure names its cause.
  const site = await serveHandler(async (req) => {
    kids.push(String(decodeProtectedHeader(await req.clone().text()).kid));
    const res = await receive(req);
    if (res.status !== 200) refusals.push(((await res.clone().json()) as { code?: string }).code ?? String(res.status));
    return res;
  });
  cleanups.push(() => site.close());
  let hooks: Webhooks = env.hooks;
  await hooks.start();
  const webhook = await hooks.webhooks.create({ name: 'CRM', endpoint: `${site.url}/webhooks`, eventTypes: ['user.created'] });
  return {
    env,
    handled,
    refusals,
    kids,
    jwksFetches: () => jwksFetches,
    /** Restarts the engine with these keys: the first signs, all are published. */
    async useKeys(keys: SigningKey[]) {
      hooks = await env.restart({ keys });
      await hooks.start();
    },
    /** Emits one event and runs everything due; returns its delivery. */
    async deliver() {
      const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
      await hooks.drain();
      return { eventId: ev.id, delivery: await hooks.deliveries.get(ev.deliveryIds[0]!) };
    },
    hooks: () => hooks,
    webhook,
  };
}

test('planned rotation (new key published first, then used): every delivery verifies on its first attempt', async () => {
  const s = await setup();
  const clock = s.env.clock;
  const results = [];
  results.push(await s.deliver()); // old key signs; the receiver fetches { old }
  await s.useKeys([oldKey, newKey]); // new key published, old still signs
  results.push(await s.deliver());
  await clock.advance(6 * 60_000); // the publication outlives the receiver's key set cache (5 min)
  results.push(await s.deliver());
  await s.useKeys([newKey, oldKey]); // new key signs; old still published for tokens in flight
  results.push(await s.deliver());
  await clock.advance(6 * 60_000);
  await s.useKeys([newKey]); // old key retired
  results.push(await s.deliver());

  expect(s.refusals).toEqual([]);
  expect(results.map((r) => [r.delivery.status, r.delivery.attemptCount])).toEqual(Array(5).fill(['delivered', 1]));
  expect(s.handled).toEqual(results.map((r) => r.eventId));
  expect(s.jwksFetches()).toBe(3); // first use, then once per expired cache: no fetch was needed for the new kid
});

test('abrupt rotation (new key signs before the receiver has seen it): the unknown kid refetches the key set', async () => {
  const s = await setup();
  const first = await s.deliver();
  await s.env.clock.advance(30_000); // past the receiver's refetch cool-down
  await s.useKeys([newKey]); // old key gone, new key signing at once
  const second = await s.deliver();
  expect(s.refusals).toEqual([]);
  expect([first, second].map((r) => [r.delivery.status, r.delivery.attemptCount])).toEqual([
    ['delivered', 1],
    ['delivered', 1],
  ]);
  expect(s.jwksFetches()).toBe(2);
});

test('abrupt rotation inside the cool-down: refused until the cool-down ends, then verified on the engine retry', async () => {
  const s = await setup();
  await s.deliver();
  await s.useKeys([newKey]); // same instant as the receiver's last fetch
  const { delivery } = await s.deliver();
  expect(delivery).toMatchObject({ status: 'pending', attemptCount: 1 });
  expect(s.refusals).toEqual(['ERR_KEY_NOT_FOUND']);
  await s.env.clock.advance(2 * 60_000); // retries at ~5 s (still cooling down) and ~65 s (refetch)
  await s.hooks().drain();
  const after = await s.hooks().deliveries.get(delivery.id);
  expect(after).toMatchObject({ status: 'delivered', attemptCount: 3 });
  expect(s.refusals).toEqual(['ERR_KEY_NOT_FOUND', 'ERR_KEY_NOT_FOUND']);
  expect(s.handled).toHaveLength(2);
  expect(s.jwksFetches()).toBe(2);
});

test('hooks.keys.rotate with the default timing: deliveries every minute across the whole rotation all verify at once', async () => {
  const s = await setup();
  const clock = s.env.clock;
  await s.deliver(); // the receiver caches { old }
  const info = await s.hooks().keys.rotate(newKey); // published now, signs in 10 min, old key unpublished 5 min later
  expect(info.signsFrom).toBe(clock.now() + 10 * 60_000);
  const results = [];
  for (let minute = 1; minute <= 20; minute++) {
    await clock.advance(60_000);
    results.push(await s.deliver());
  }
  expect(s.refusals).toEqual([]);
  expect(results.every((r) => r.delivery.status === 'delivered' && r.delivery.attemptCount === 1)).toBe(true);
  // Minutes 1-9 signed by the old key, 10-20 by the new one; the receiver was never restarted.
  expect(s.kids).toEqual([...Array(10).fill(oldKey.kid), ...Array(11).fill(newKey.kid)]);
  expect(
    s
      .hooks()
      .jwks()
      .keys.map((k) => (k as { kid: string }).kid),
  ).toEqual([newKey.kid]);
  expect(s.handled).toHaveLength(21);
});

test('hooks.keys.rotate with overlapMs: 0 (an emergency swap): the unknown kid refetches and the next delivery verifies', async () => {
  const s = await setup();
  await s.deliver();
  await s.env.clock.advance(30_000); // past the receiver's refetch cool-down
  await s.hooks().keys.rotate(newKey, { overlapMs: 0 });
  const { delivery } = await s.deliver();
  expect(delivery).toMatchObject({ status: 'delivered', attemptCount: 1 });
  expect(s.kids).toEqual([oldKey.kid, newKey.kid]);
  expect(s.refusals).toEqual([]);
  expect(s.jwksFetches()).toBe(2);
});
