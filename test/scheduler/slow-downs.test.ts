import { describe, expect, test } from 'vitest';
import { SlowDowns } from '../../src/scheduler/slow-downs.js';

describe('SlowDowns', () => {
  test('a Retry-After defers its webhook until its time or until the record that paces it, whichever comes first', () => {
    const s = new SlowDowns();
    s.defer('a', 5_000);
    s.defer('a', 3_000); // an earlier time never shortens a deferral
    s.defer('b', 2_000);
    expect(s.isDeferred('a', 4_999)).toBe(true);
    expect(s.deferredAt(2_500)).toEqual(['a']); // b's time has passed: forgotten
    expect(s.isDeferred('b', 1_000)).toBe(false);
    s.paced('a'); // the store holds it from now on
    expect(s.deferredAt(0)).toEqual([]);
  });

  test('withdrawn deliveries wait for their webhook attempt to be recorded, then go back once', () => {
    const s = new SlowDowns();
    s.withdraw('a', ['d1']);
    s.withdraw('a', ['d2', 'd3']);
    s.withdraw('b', ['d4']);
    expect(s.takeWithdrawn('a')).toEqual(['d1', 'd2', 'd3']);
    expect(s.takeWithdrawn('a')).toEqual([]);
    expect(s.takeAllWithdrawn()).toEqual(['d4']);
    expect(s.takeAllWithdrawn()).toEqual([]);
  });

  test('remembers at most a thousand webhooks; past that the oldest is forgotten', () => {
    const s = new SlowDowns();
    for (let i = 0; i < 1_001; i++) s.defer(`w${i}`, 10_000);
    expect(s.isDeferred('w0', 0)).toBe(false);
    expect(s.isDeferred('w1', 0)).toBe(true);
    expect(s.deferredAt(0)).toHaveLength(1_000);
  });
});
