import { describe, expect, test } from 'vitest';
import { PARK_MARGIN_MS, Parked } from '../../src/scheduler/parked.js';
import { Slots } from '../../src/scheduler/slots.js';
import { dispatchOf, prove } from './fixtures.js';

const slotOptions = { concurrency: 8, perWebhookConcurrency: 2, perEnvironmentConcurrency: 4 };
const parkedOptions = { batchSize: 5, perWebhookConcurrency: 2, leaseMs: 60_000, timeoutMs: 15_000 };
const NOW = 1_000;
const LEASE = NOW + 60_000;

function setup(options: Partial<typeof parkedOptions> = {}) {
  const slots = new Slots(slotOptions);
  const parked = new Parked({ ...parkedOptions, ...options });
  return { slots, parked };
}

describe('Parked', () => {
  test('nothing is parked when the lease cannot cover an attempt and its record', () => {
    const { slots, parked } = setup({ timeoutMs: undefined });
    expect(parked.park(dispatchOf('w1', 'a', LEASE), slots)).toBe(false);
    const short = setup({ leaseMs: 15_000 + PARK_MARGIN_MS - 1 });
    expect(short.parked.park(dispatchOf('w1', 'a', LEASE), short.slots)).toBe(false);
    expect(short.parked.room(short.slots)).toBe(0);
  });

  test('a healthy webhook parks what a claim brought (a batch), a failing one only its bound', () => {
    const { slots, parked } = setup();
    for (let i = 0; i < 5; i++) expect(parked.park(dispatchOf('w1', 'a', LEASE), slots)).toBe(true);
    expect(parked.park(dispatchOf('w1', 'a', LEASE), slots)).toBe(false);
    expect(parked.room(slots)).toBe(0);
    slots.observe({ id: 'w2', failingSince: 1 });
    expect(parked.park(dispatchOf('w2', 'a', LEASE), slots)).toBe(true);
    expect(parked.park(dispatchOf('w2', 'a', LEASE), slots)).toBe(false);
    expect(parked.has('w2')).toBe(true);
    expect(parked.environmentOf('w2')).toBe('a');
    expect(parked.environments()).toEqual(['a']);
  });

  test("unpark starts up to the webhook's bound, taking the slots, and keeps the rest", () => {
    const { slots, parked } = setup();
    prove(slots, ['w1']);
    const ds = [0, 1, 2].map(() => dispatchOf('w1', 'a', LEASE));
    for (const d of ds) parked.park(d, slots);
    const out = parked.unpark('w1', slots, NOW);
    expect(out.start).toEqual(ds.slice(0, 2));
    expect(out.giveBack).toEqual([]);
    expect(slots.inFlight('w1')).toBe(2);
    expect(parked.has('w1')).toBe(true);
    // Its slot frees: the last one starts and the queue is gone.
    slots.end('w1', 'a', { success: true, charged: true });
    expect(parked.unpark('w1', slots, NOW).start).toEqual([ds[2]]);
    expect(parked.has('w1')).toBe(false);
    expect(parked.environments()).toEqual([]);
  });

  test('a delivery whose lease no longer covers an attempt and its record goes back', () => {
    const { slots, parked } = setup();
    const late = dispatchOf('w1', 'a', NOW + 15_000 + PARK_MARGIN_MS - 1);
    const fine = dispatchOf('w1', 'a', LEASE);
    parked.park(late, slots);
    parked.park(fine, slots);
    const out = parked.unpark('w1', slots, NOW);
    expect(out.giveBack).toEqual([late]);
    expect(out.start).toEqual([fine]);
  });

  test('a webhook that became a probe keeps no more than it can use', () => {
    const { slots, parked } = setup();
    const ds = [0, 1, 2, 3].map(() => dispatchOf('w1', 'a', LEASE));
    for (const d of ds) parked.park(d, slots);
    slots.take('w1', 'a');
    slots.end('w1', 'a', { success: false, charged: true }); // now bound 1
    const out = parked.unpark('w1', slots, NOW);
    expect(out.start).toEqual([ds[0]]);
    expect(out.giveBack).toEqual(ds.slice(2)); // keeps one for its next probe
  });

  test('at its fair share: blocked on the share alone (ask for a claim), then started once nobody else has due work', () => {
    const { slots, parked } = setup();
    prove(slots, ['x0', 'x1', 'x2', 'x3', 'w1']);
    for (let i = 0; i < 4; i++) slots.take(`x${i}`, 'a'); // a at its share of 4
    const d = dispatchOf('w1', 'a', LEASE);
    parked.park(d, slots);
    const blocked = parked.unpark('w1', slots, NOW);
    expect(blocked).toEqual({ start: [], giveBack: [], shareBlocked: true });
    // Once nobody else has due work, it may borrow up to the hard bound.
    slots.othersDrained = true;
    expect(parked.unpark('w1', slots, NOW).start).toEqual([d]);
  });

  test('unparkIn walks the environment’s webhooks while its hard bound allows', () => {
    const { slots, parked } = setup();
    prove(slots, ['w1', 'w2', 'w3']);
    slots.othersDrained = true;
    const a = [0, 1, 2, 3].map(() => dispatchOf('w1', 'a', LEASE));
    const b = [0, 1, 2, 3].map(() => dispatchOf('w2', 'a', LEASE));
    const c = [0, 1].map(() => dispatchOf('w3', 'a', LEASE));
    for (const d of [...a, ...b, ...c]) parked.park(d, slots);
    const out = parked.unparkIn('a', slots, NOW);
    // Two per webhook (their bound), six in all (the hard bound): w3's two start as well.
    expect(out.start).toEqual([a[0], a[1], b[0], b[1], c[0], c[1]]);
    expect(slots.inEnvironment('a')).toBe(6);
    expect(parked.takeAll()).toEqual([a[2], a[3], b[2], b[3]]);
    expect(parked.environments()).toEqual([]);
  });
});

describe('Parked, with earned bounds', () => {
  test('a webhook new here parks a batch like a healthy one; a failing one waits on the probe budget until a probe ends', () => {
    const { slots, parked } = setup();
    // Share 4: a probe budget of 2, spent by two failing webhooks that hang.
    for (const id of ['h1', 'h2', 'f']) slots.observe({ id, failingSince: 1 });
    slots.take('h1', 'a');
    slots.take('h2', 'a');
    const ds = [0, 1, 2].map(() => dispatchOf('w1', 'a', LEASE));
    for (const d of ds) expect(parked.park(d, slots)).toBe(true); // new here, not failing: a batch
    const f = dispatchOf('f', 'a', LEASE, 1);
    expect(parked.park(f, slots)).toBe(true);
    expect(parked.unpark('w1', slots, NOW).start).toEqual([ds[0]]); // one slot until it answers
    expect(parked.unpark('f', slots, NOW).start).toEqual([]); // the budget is spent
    slots.end('h1', 'a', { success: false, charged: true });
    expect(parked.unpark('f', slots, NOW).start).toEqual([f]);
    slots.end('w1', 'a', { success: true, charged: true });
    expect(parked.unpark('w1', slots, NOW).start).toEqual([ds[1], ds[2]]);
  });
});
