import { describe, expect, test } from 'vitest';
import { type Running, RunningAttempts } from '../../src/scheduler/running.js';

const attempt = (webhookId: string, at: number, overdueAt: number): Running => ({
  webhookId,
  environment: `env_${webhookId}`,
  at,
  overdueAt,
  overdue: false,
});

describe('RunningAttempts', () => {
  test('asks for the overdue timer only when an attempt becomes overdue sooner than it is armed for', () => {
    const running = new RunningAttempts();
    const a = attempt('a', 0, 5_000);
    expect(running.add(a)).toBe(true);
    running.armedAt = 5_000;
    expect(running.add(attempt('b', 0, 9_000))).toBe(false);
    expect(running.add(attempt('c', 0, 2_000))).toBe(true);
    // Never overdue (no usual time yet): never asks.
    expect(running.add(attempt('d', 0, Number.POSITIVE_INFINITY))).toBe(false);
  });

  test('each attempt past its time is looked at once; the next time is the earliest not yet past', () => {
    const running = new RunningAttempts();
    const a = attempt('a', 0, 1_000);
    const b = attempt('b', 0, 2_000);
    const c = attempt('c', 0, 3_000);
    for (const r of [a, b, c]) running.add(r);
    const looked: string[] = [];
    // a moves out of its slots; b does not (the overdue pool is full).
    const next = running.overdueNow(2_500, (r) => {
      looked.push(r.webhookId);
      return r.webhookId === 'a';
    });
    expect(looked).toEqual(['a', 'b']);
    expect(next).toBe(3_000);
    expect([a.overdue, b.overdue, c.overdue]).toEqual([true, false, false]);
    // Looked at once: neither is asked about again.
    looked.length = 0;
    expect(running.overdueNow(10_000, (r) => looked.push(r.webhookId) > 0)).toBe(Number.POSITIVE_INFINITY);
    expect(looked).toEqual(['c']);
  });

  test('says when the last attempt ended', () => {
    const running = new RunningAttempts();
    const a = attempt('a', 0, 1_000);
    const b = attempt('b', 0, 1_000);
    running.add(a);
    running.add(b);
    expect(running.end(a)).toBe(false);
    expect(running.end(b)).toBe(true);
  });
});
