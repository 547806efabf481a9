import { describe, expect, test } from 'vitest';
import { OVERDUE_MIN_MS, Slots } from '../../src/scheduler/slots.js';
import { prove } from './fixtures.js';

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

  test("a webhook's bound: earned while healthy, one while failing, earned back by successes", () => {
    const slots = new Slots(options);
    prove(slots, ['w1', 'w2']);
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
    expect(slots.failing('w1')).toBe(true);
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
    prove(slots, ['w1', 'w2', 'w3', 'w4']);
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
    prove(slots, ['w1', 'w2']);
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

describe('fairness within an environment (decision 026)', () => {
  const wide = { concurrency: 64, perWebhookConcurrency: 8, perEnvironmentConcurrency: 16 };

  test('slow start: a webhook starts at one slot and earns one more per success; a failure drops it to one at once', () => {
    const slots = new Slots(wide);
    expect([slots.boundOf('w'), slots.unproven('w'), slots.failing('w')]).toEqual([1, true, false]);
    const bounds: number[] = [];
    for (let i = 0; i < 9; i++) {
      slots.take('w', 'a');
      slots.end('w', 'a', { success: true, charged: true });
      bounds.push(slots.boundOf('w'));
    }
    expect(bounds).toEqual([2, 3, 4, 5, 6, 7, 8, 8, 8]);
    // A timeout (any charged failure) ends the exchange: one slot, before its outcome is recorded.
    slots.take('w', 'a');
    slots.end('w', 'a', { success: false, charged: true });
    expect([slots.boundOf('w'), slots.unproven('w'), slots.failing('w')]).toEqual([1, true, true]);
    slots.take('w', 'a');
    slots.end('w', 'a', { success: true, charged: true });
    expect([slots.boundOf('w'), slots.unproven('w'), slots.failing('w')]).toEqual([2, false, false]);
    // A record that says failing makes it a probe again; one that says healthy proves nothing.
    slots.observe({ id: 'w', failingSince: 5 });
    expect([slots.boundOf('w'), slots.failing('w')]).toEqual([1, true]);
    slots.observe({ id: 'w', failingSince: null });
    expect([slots.boundOf('w'), slots.unproven('w'), slots.failing('w')]).toEqual([1, true, false]);
  });

  test("failing webhooks share a probe budget of half their environment's bound; others are not held by it", () => {
    const slots = new Slots(wide);
    prove(slots, ['healthy']);
    expect(Slots.probeBudget(16)).toBe(8);
    expect(Slots.probeBudget(56)).toBe(28);
    expect(Slots.probeBudget(1)).toBe(1);
    const admitted = (id: string, bound = 16) => {
      const a = slots.admit({ id, environment: 'a' }, bound, false);
      if (a === 'start') slots.take(id, 'a');
      return a;
    };
    for (let i = 0; i < 9; i++) slots.observe({ id: `hang${i}`, failingSince: 1 });
    for (let i = 0; i < 8; i++) expect(admitted(`hang${i}`)).toBe('start');
    expect(slots.probesIn('a')).toBe(8);
    expect(admitted('hang8')).toBe('park'); // the budget is spent: it waits here
    expect(admitted('hang0')).toBe('park'); // and each holds one slot at most
    // A webhook new here may be the one that answers: one slot, whatever the budget.
    expect(admitted('new')).toBe('start');
    expect(admitted('new')).toBe('park');
    // The environment's proven webhook starts up to its own bound (the share of 16 binds first).
    for (let i = 0; i < 7; i++) expect(admitted('healthy')).toBe('start');
    expect(slots.inEnvironment('a')).toBe(16);
    // Another environment's budget is its own.
    slots.observe({ id: 'other', failingSince: 1 });
    expect(slots.admit({ id: 'other', environment: 'b' }, 16, false)).toBe('start');
    // A probe that times out frees its budget for the next.
    slots.end('hang0', 'a', { success: false, charged: true });
    expect(slots.probesIn('a')).toBe(7);
    expect(slots.webhookMayStart({ id: 'hang8', environment: 'a' }, 16)).toBe(true);
  });

  test('N hanging webhooks of one environment and one healthy: the healthy one always has slots, whatever N', () => {
    for (const n of [4, 7, 12, 20]) {
      const slots = new Slots(wide);
      const hard = slots.hardBound();
      const hanging = () => Array.from({ length: n }, (_, i) => slots.inFlight(`hang${i}`)).reduce((a, b) => a + b, 0);
      // Every claim brings each hanging webhook's deliveries before the healthy one's.
      const round = (label: string) => {
        for (let i = 0; i < n; i++) {
          for (let k = 0; k < 8; k++)
            if (slots.admit({ id: `hang${i}`, environment: 'a' }, hard, false) === 'start') slots.take(`hang${i}`, 'a');
        }
        let started = 0;
        while (slots.admit({ id: 'healthy', environment: 'a' }, hard, false) === 'start') {
          slots.take('healthy', 'a');
          started++;
        }
        expect([n, label, started]).toEqual([n, label, slots.boundOf('healthy')]);
        for (let k = 0; k < started; k++) slots.end('healthy', 'a', { success: true, charged: true });
      };
      // Before any timeout: one slot each (slow start), never perWebhookConcurrency.
      for (let r = 0; r < 10; r++) round('new');
      expect([n, hanging()]).toEqual([n, n]);
      expect([n, slots.boundOf('healthy')]).toEqual([n, 8]);
      // Their attempts time out: failing, they share half the environment's bound from then on.
      for (let i = 0; i < n; i++) slots.end(`hang${i}`, 'a', { success: false, charged: true });
      for (let r = 0; r < 10; r++) round('failing');
      expect([n, hanging()]).toEqual([n, Math.min(n, Slots.probeBudget(hard))]);
    }
  });

  test('an overdue attempt leaves its slot and environment for the overdue pool, and keeps its webhook at its bound until it ends', () => {
    const slots = new Slots(options);
    expect(slots.overdueAfter('w1')).toBe(Number.POSITIVE_INFINITY); // never answered here: nothing is usual
    prove(slots, ['w1', 'w2']);
    slots.take('w1', 'a');
    slots.take('w1', 'a');
    expect(slots.webhookMayStart({ id: 'w1', environment: 'a' }, 6)).toBe(false);
    expect(slots.overdue('w1', 'a')).toBe(true);
    // Its slot and its environment's count are free; the webhook is failing, its attempts still count.
    expect([slots.attempting, slots.inEnvironment('a'), slots.inFlight('w1'), slots.overdueCount]).toEqual([1, 1, 2, 1]);
    expect(slots.failing('w1')).toBe(true);
    expect(slots.webhookMayStart({ id: 'w1', environment: 'a' }, 6)).toBe(false);
    expect(slots.free(2)).toBe(7);
    slots.end('w1', 'a', { success: false, charged: true }, { overdue: true });
    expect([slots.attempting, slots.inEnvironment('a'), slots.inFlight('w1'), slots.overdueCount]).toEqual([1, 1, 1, 0]);
    // The pool holds at most 4 × `concurrency`: past it, an overdue attempt keeps its slot.
    for (let i = 0; i < 4 * options.concurrency; i++) {
      slots.take(`h${i}`, 'b');
      expect(slots.overdue(`h${i}`, 'b')).toBe(true);
    }
    slots.take('w2', 'b');
    expect(slots.overdue('w2', 'b')).toBe(false);
    expect(slots.inEnvironment('b')).toBe(1);
  });

  test('overdue after a multiple of the webhook’s usual answer time, never less than the floor', () => {
    const slots = new Slots(options);
    slots.take('w1', 'a');
    slots.end('w1', 'a', { success: true, charged: true }, { ms: 1000 });
    expect(slots.overdueAfter('w1')).toBe(8000);
    slots.take('w2', 'a');
    slots.end('w2', 'a', { success: true, charged: true }, { ms: 5 });
    expect(slots.overdueAfter('w2')).toBe(OVERDUE_MIN_MS);
  });
});
