import { describe, expect, test } from 'vitest';
import type { ClaimedDelivery } from '../../src/model.js';
import { Timed } from '../../src/scheduler/timed.js';

/** Just what Timed reads of a claimed delivery. */
const timed = (id: string, webhookId: string, startAt: number) =>
  ({
    delivery: { id },
    webhook: { id: webhookId, environment: `env_${webhookId}` },
    dueAt: startAt,
    startAt,
  }) as unknown as ClaimedDelivery;
const ids = (list: ClaimedDelivery[]) => list.map((c) => c.delivery.id);

describe('Timed', () => {
  test('hands out what starts by now, in start order across webhooks; the earliest is what waits next', () => {
    const t = new Timed({ batchSize: 64 });
    expect(t.earliest()).toBeUndefined();
    t.add(timed('a2', 'a', 200));
    t.add(timed('a1', 'a', 100)); // out of order: sorted in
    t.add(timed('b1', 'b', 150));
    expect(t.size).toBe(3);
    expect(t.earliest()).toBe(100);
    expect(t.due(99)).toEqual([]);
    expect(ids(t.due(160))).toEqual(['a1', 'b1']);
    expect(t.earliest()).toBe(200);
    expect(t.environmentOf('a')).toBe('env_a');
    expect(t.environmentOf('b')).toBeUndefined();
    expect(ids(t.due(1000))).toEqual(['a2']);
    expect(t.size).toBe(0);
  });

  test('a webhook with a claim’s worth waiting is full (left out of claims) until some of it starts', () => {
    const t = new Timed({ batchSize: 2 });
    t.add(timed('a1', 'a', 100));
    expect(t.fullWebhooks()).toEqual([]);
    t.add(timed('a2', 'a', 200));
    t.add(timed('b1', 'b', 100));
    expect(t.fullWebhooks()).toEqual(['a']);
    t.due(100);
    expect(t.fullWebhooks()).toEqual([]);
  });

  test('take (a slow-down) and takeAll (closing) empty what they name', () => {
    const t = new Timed({ batchSize: 64 });
    t.add(timed('a1', 'a', 100));
    t.add(timed('a2', 'a', 200));
    t.add(timed('b1', 'b', 300));
    expect(ids(t.take('a'))).toEqual(['a1', 'a2']);
    expect(t.size).toBe(1);
    expect(t.earliest()).toBe(300);
    expect(ids(t.takeAll())).toEqual(['b1']);
    expect(t.size).toBe(0);
    expect(t.earliest()).toBeUndefined();
  });
});
