import { describe, expect, test } from 'vitest';
import { Proofs } from '../../src/scheduler/proof.js';

const POLL = 1_000;

describe('Proofs', () => {
  test('a proof holds for claims leaving out at least as much, until it ends', () => {
    const proofs = new Proofs();
    expect(proofs.proven([], [], 0)).toBe(false);
    const until = proofs.prove(new Map([['w1', 'a']]), ['b'], 100, 600, POLL, proofs.epoch);
    expect(until).toBe(600); // the next due delivery comes before the poll interval ends
    expect(proofs.proven(['w1'], ['b'], 200)).toBe(true);
    expect(proofs.proven(['w1', 'w2'], ['b', 'c'], 200)).toBe(true);
    // The webhook's environment left out covers the webhook.
    expect(proofs.proven([], ['a', 'b'], 200)).toBe(true);
    // Leaving out less proves nothing.
    expect(proofs.proven(['w1'], [], 200)).toBe(false);
    expect(proofs.proven([], ['b'], 200)).toBe(false);
    expect(proofs.proven(['w1'], ['b'], 600)).toBe(false); // ended
  });

  test('at most the poll interval, and nothing pending means the poll interval', () => {
    const proofs = new Proofs();
    expect(proofs.prove(new Map(), ['b'], 100, null, POLL, proofs.epoch)).toBe(1_100);
    expect(proofs.prove(new Map(), ['b'], 100, 5_000, POLL, proofs.epoch)).toBe(1_100);
  });

  test('voiding drops the proof, and a claim made before the void proves nothing', () => {
    const proofs = new Proofs();
    const epoch = proofs.epoch;
    proofs.prove(new Map(), ['b'], 100, null, POLL, epoch);
    proofs.void();
    expect(proofs.proven([], ['b'], 200)).toBe(false);
    expect(proofs.prove(new Map(), ['b'], 100, null, POLL, epoch)).toBeNull();
    expect(proofs.proven([], ['b'], 200)).toBe(false);
  });

  test('the next due time a claim said serves the idle pass unless a chore wrote or something voided it', () => {
    const proofs = new Proofs();
    proofs.nextDueSaid(5_000, proofs.epoch, 3);
    expect(proofs.takeNextDue(3)).toEqual({ at: 5_000, choreWrites: 3 });
    expect(proofs.takeNextDue(3)).toBeUndefined(); // consumed
    proofs.nextDueSaid(5_000, proofs.epoch, 3);
    expect(proofs.takeNextDue(4)).toBeUndefined(); // a chore wrote since the claim began
    const stale = proofs.epoch;
    proofs.void();
    proofs.nextDueSaid(5_000, stale, 3);
    expect(proofs.takeNextDue(3)).toBeUndefined();
    proofs.nextDueSaid(null, proofs.epoch, 3);
    proofs.claimBegins();
    expect(proofs.takeNextDue(3)).toBeUndefined();
  });
});

describe('Proofs: work made due for one webhook (an ordered delivery released)', () => {
  test('a proof that left the webhook out, or its environment, still holds; any other is void', () => {
    const proofs = new Proofs();
    proofs.prove(new Map([['w1', 'a']]), ['b'], 100, null, POLL, proofs.epoch);
    expect(proofs.madeDue('w1', 'a')).toBe(false);
    expect(proofs.madeDue('w9', 'b')).toBe(false); // its environment was left out
    expect(proofs.proven(['w1'], ['b'], 200)).toBe(true);
    expect(proofs.madeDue('w2', 'a')).toBe(true); // claimable: the proof no longer says nothing is due
    expect(proofs.proven(['w1'], ['b'], 200)).toBe(false);
  });

  test('a claim under way proves nothing unless it too leaves the webhook out', () => {
    const proofs = new Proofs();
    proofs.claimBegins();
    const epoch = proofs.epoch;
    proofs.madeDue('w1', 'a');
    expect(proofs.prove(new Map([['w2', 'a']]), [], 100, null, POLL, epoch)).toBeNull();
    proofs.claimBegins();
    proofs.madeDue('w1', 'a');
    expect(proofs.prove(new Map([['w1', 'a']]), [], 100, null, POLL, proofs.epoch)).toBe(1_100);
    expect(proofs.proven(['w1'], [], 200)).toBe(true);
    // The next claim starts afresh.
    proofs.claimBegins();
    expect(proofs.prove(new Map([['w2', 'a']]), [], 300, null, POLL, proofs.epoch)).toBe(1_300);
  });

  test('what a claim said of the next due time is stale', () => {
    const proofs = new Proofs();
    proofs.nextDueSaid(5_000, proofs.epoch, 0);
    proofs.madeDue('w1', 'a');
    expect(proofs.takeNextDue(0)).toBeUndefined();
  });
});
