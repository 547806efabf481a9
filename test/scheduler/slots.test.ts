import { describe, expect, test } from 'vitest';
import { Slots } from '../../src/scheduler/slots.js';

// 8 slots, 2 per webhook (the reserve is 2), a fair share of 4: an environment may hold 6 (its hard bound).
const options = { concurrency: 8, perWebhookConcurrency: 2, perEnvironmentConcurrency: 4 };

describe('Slots', () => {
  test('free slots are bounded by attempts in flight and by outcomes not yet recorded', () => {
    const slots = new Slots(options);
    expect(slots.free(0)).toBe(8);
    slots.take('w1', 'a');
    slots.take('w1', 'a');
    expect(slots.attempting).toBe(2);
    expect(slots.free(2)).toBe(6);
    // Attempts ended but their outcomes still being written: at most `concurrency` of them.
    expect(slots.free(14)).toBe(2);
    slots.end('w1', 'a', { success: true, charged: true });
    expect(slots.attempting).toBe(1);
    expect(slots.inFlight('w1')).toBe(1);
    expect(slots.inEnvironment('a')).toBe(1);
  });

  test("a webhook's bound: the default while healthy, one while failing, restored by a success", () => {
    const slots = new Slots(options);
    expect(slots.boundOf('w1')).toBe(2);
    slots.observe({ id: 'w1', failingSince: 100 });
    expect(slots.boundOf('w1')).toBe(1);
    slots.take('w1', 'a');
    // A claim says healthy while an attempt is in flight here: what that attempt tells wins.
    slots.observe({ id: 'w1', failingSince: null });
    expect(slots.boundOf('w1')).toBe(1);
    slots.end('w1', 'a', { success: true, charged: true });
    expect(slots.boundOf('w1')).toBe(2);
    slots.take('w1', 'a');
    slots.end('w1', 'a', { success: false, charged: true });
    expect(slots.boundOf('w1')).toBe(1);
    // A failure inside the engine says nothing about the endpoint.
    slots.observe({ id: 'w2', failingSince: null });
    slots.take('w2', 'a');
    slots.end('w2', 'a', { success: false, charged: false });
    expect(slots.boundOf('w2')).toBe(2);
    slots.take('w2', 'a');
    slots.end('w2', 'a', null);
    expect(slots.boundOf('w2')).toBe(2);
  });

  test('admit: start below the bounds, park at the webhook bound or the fair share, give back at the hard bound', () => {
    const slots = new Slots(options);
    const hook = (id: string, environment = 'a') => ({ id, environment });
    expect(slots.admit(hook('w1'), 4, false)).toBe('start');
    slots.take('w1', 'a');
    slots.take('w1', 'a');
    expect(slots.admit(hook('w1'), 4, false)).toBe('park');
    slots.take('w2', 'a');
    slots.take('w2', 'a');
    // At its share (4) in a fair claim: parked, since it is below its hard bound (6).
    expect(slots.admit(hook('w3'), 4, false)).toBe('park');
    // A claim beyond the share uses the hard bound.
    expect(slots.admit(hook('w3'), slots.hardBound(), false)).toBe('start');
    slots.take('w3', 'a');
    slots.take('w3', 'a');
    expect(slots.inEnvironment('a')).toBe(6);
    expect(slots.admit(hook('w4'), slots.hardBound(), false)).toBe('give-back');
    // Claiming ahead parks even at the hard bound.
    expect(slots.admit(hook('w4'), slots.hardBound(), true)).toBe('park');
  });

  test('the reserve: while an environment is over its share, the last slots go only to environments new here', () => {
    const slots = new Slots(options);
    for (let i = 0; i < 5; i++) slots.take(`a${i}`, 'a'); // over its share of 4
    expect(slots.reserveGuarded()).toBe(false); // 3 free, more than the reserve of 2
    slots.take('b1', 'b');
    expect(slots.reserveGuarded()).toBe(true); // 2 free: only the reserve
    expect(slots.canStartIn('b', 4)).toBe(false); // b has one in flight here
    expect(slots.canStartIn('c', 4)).toBe(true); // c has none
    expect(slots.busyEnvironments(true).sort()).toEqual(['a', 'b']);
    expect(slots.busyEnvironments(false)).toEqual(['a']);
  });

  test('the webhooks a claim leaves out: at their bound, or with parked deliveries', () => {
    const slots = new Slots(options);
    slots.take('w1', 'a');
    slots.take('w1', 'a');
    slots.take('w2', 'a');
    expect(slots.saturatedWebhooks(() => false)).toEqual(['w1']);
    expect(slots.saturatedWebhooks((id) => id === 'w2').sort()).toEqual(['w1', 'w2']);
    expect(slots.environmentOf('w2')).toBe('a');
    slots.end('w2', 'a', { success: true, charged: true });
    expect(slots.environmentOf('w2')).toBeUndefined();
  });

  test('parked deliveries start up to the share, or the hard bound once nobody else has due work', () => {
    const slots = new Slots(options);
    expect(slots.parkedBound()).toBe(4);
    slots.othersDrained = true;
    expect(slots.parkedBound()).toBe(6);
  });
});

test('after an attempt ends, a claim is worth it only if its webhook opened or its environment came back under its share', () => {
  const slots = new Slots(options);
  for (const id of ['w1', 'w1', 'w2', 'w3', 'w3']) slots.take(id, 'a'); // a: 5, over its share of 4
  slots.end('w1', 'a', { success: true, charged: true }); // a: 4, w1: 1 of 2
  // w1 has parked work (its freed slot went to it) and a is still at its share: nothing new to claim.
  expect(slots.reopened('w1', 'a', true)).toBe(false);
  // Nothing of w1 parked and below its bound: a claim may find more of it.
  expect(slots.reopened('w1', 'a', false)).toBe(true);
  slots.end('w3', 'a', { success: true, charged: true }); // a: 3, just back under its share
  expect(slots.reopened('w3', 'a', true)).toBe(true);
});
