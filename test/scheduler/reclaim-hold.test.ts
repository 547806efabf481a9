import { describe, expect, test } from 'vitest';
import { RECLAIM_GRACE_MS, ReclaimHold } from '../../src/scheduler/reclaim-hold.js';

describe('ReclaimHold', () => {
  test('no outage: claims reclaim every lease that ran out', () => {
    const hold = new ReclaimHold();
    expect(hold.reclaimBefore(1_000, 1_000)).toBeUndefined();
    hold.reached(1_000, 1_000);
    expect(hold.reclaimBefore(2_000, 2_000)).toBeUndefined();
  });

  test('after a claim missed the store, leases that ran out since it last reached it stay with their owners until a grace after it answers again', () => {
    const hold = new ReclaimHold();
    hold.reached(1_000, 1_000);
    hold.missed(5_000);
    hold.missed(9_000); // still out: the hold keeps the first time it lost the store
    // Held for as long as the store does not answer.
    expect(hold.reclaimBefore(60_000, 60_000)).toBe(1_000);
    hold.reached(60_000, 60_500);
    expect(hold.reclaimBefore(61_000, 60_500 + RECLAIM_GRACE_MS - 1)).toBe(1_000);
    // A claim before the last reach's time reclaims no later than its own now.
    expect(hold.reclaimBefore(500, 60_600)).toBe(500);
    expect(hold.reclaimBefore(80_000, 60_500 + RECLAIM_GRACE_MS)).toBeUndefined();
  });

  test('a process that never reached the store holds from its first claim', () => {
    const hold = new ReclaimHold();
    hold.missed(7_000);
    expect(hold.reclaimBefore(8_000, 8_000)).toBe(7_000);
  });
});
