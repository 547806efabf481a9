import { decodeJwt } from 'jose';
import { expect, test } from 'vitest';
import { type DispatchDeps, Dispatcher } from '../../src/delivery/dispatch.js';
import type { ClaimedDelivery } from '../../src/model.js';
import { KeySet } from '../../src/signing/keyset.js';
import type { Store } from '../../src/store.js';
import { testKey } from '../helpers/fixtures.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** A key set that counts the signatures made with it (each one asks for the signing key once). */
class CountingKeys extends KeySet {
  signatures = 0;
  failNext = false;
  override signingKey(now?: number) {
    this.signatures++;
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error('key store unavailable'));
    }
    return super.signingKey(now);
  }
}

async function dispatcher() {
  const keys = new CountingKeys([await testKey()], { now: () => T0 });
  // Only `prepare` runs here: what it reads of the deps is the keys and the issuer.
  const deps = {
    keys,
    issuer: () => 'https://issuer.example',
    store: { isTransient: () => false } as unknown as Store,
  } as unknown as DispatchDeps;
  return { keys, dispatcher: new Dispatcher(deps) };
}

function claimed(eventId: string, webhook: number): ClaimedDelivery {
  return {
    delivery: { id: `msg_${eventId}_${webhook}`, environment: 'default' },
    webhook: { id: `webhook_${webhook}`, endpoint: `https://example.com/${webhook}` },
    event: { id: eventId, environment: 'default', type: 'user.created', source: 'api', data: {}, eventTimestamp: T0 },
    dueAt: T0,
    traceparent: null,
    lease: { workerId: 'w', until: T0 + 60_000 },
  } as unknown as ClaimedDelivery;
}

test('one claim: every delivery of an event shares its token, however many events the claim holds', async () => {
  const { keys, dispatcher: d } = await dispatcher();
  // 150 events of 2 deliveries each, more than the carry keeps (64). Signing starts when an
  // attempt starts: here every event's first delivery, then every event's second.
  const batch = Array.from({ length: 150 }, (_, e) => [claimed(`event_${e}`, 0), claimed(`event_${e}`, 1)]).flat();
  const dispatches = d.prepare(batch, T0);
  const firsts = dispatches.filter((_, i) => i % 2 === 0).map((x) => x.startSigning());
  const seconds = dispatches.filter((_, i) => i % 2 === 1).map((x) => x.startSigning());
  for (let e = 0; e < 150; e++) expect(seconds[e]).toBe(firsts[e]);
  await Promise.all([...firsts, ...seconds]);
  expect(keys.signatures).toBe(150);
});

test('the next claims carry an event’s token for a second after it was signed, then sign again', async () => {
  const { keys, dispatcher: d } = await dispatcher();
  const first = d.prepare([claimed('event_a', 0)], T0)[0]!.startSigning();
  const carried = d.prepare([claimed('event_a', 1)], T0 + 1000)[0]!.startSigning();
  expect(carried).toBe(first);
  expect(keys.signatures).toBe(1);
  const fresh = d.prepare([claimed('event_a', 2)], T0 + 1001)[0]!.startSigning();
  expect(fresh).not.toBe(first);
  expect(keys.signatures).toBe(2);
  // Its `timestamp` is the time of the claim it was signed for.
  expect(decodeJwt(await first).timestamp).toBe(new Date(T0).toISOString());
  expect(decodeJwt(await fresh).timestamp).toBe(new Date(T0 + 1001).toISOString());
  // Another event is never served a token of this one.
  expect(d.prepare([claimed('event_b', 0)], T0 + 1001)[0]!.startSigning()).not.toBe(fresh);
});

test('a signature that failed is not carried: the next claim signs again', async () => {
  const { keys, dispatcher: d } = await dispatcher();
  keys.failNext = true;
  const failed = d.prepare([claimed('event_a', 0)], T0)[0]!.startSigning();
  await expect(failed).rejects.toThrow(/key store unavailable/);
  const next = d.prepare([claimed('event_a', 1)], T0 + 10)[0]!.startSigning();
  expect(next).not.toBe(failed);
  await expect(next).resolves.toMatch(/^ey/);
  expect(keys.signatures).toBe(2);
});
