import { beforeEach, describe, expect, test } from 'vitest';
import type { Store } from '../../src/store.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/**
 * What the store carries for telemetry, part of the store contract (run by describeStore on
 * every adapter): the due count behind the `webhooks.deliveries.due` gauge, the due time a claim
 * found (the lag), and the trace context stored with the event.
 */
export function describeTelemetryContract(ready: () => Promise<Store & { kysely?: any }>): void {
  describe('telemetry: due count, due time of a claim, trace context', () => {
    let s: Store & { kysely?: any };
    beforeEach(async () => {
      s = await ready();
    });

    test('countDue counts pending deliveries due by now, in every environment; not leased, future, held or finished ones', async () => {
      const a = webhook('env_a');
      const b = webhook('env_b');
      const off = webhook('env_a');
      for (const w of [a, b, off]) await s.createWebhook(w, { maxWebhooks: null });
      expect(await s.countDue(T0)).toBe(0);
      // env_a: 3 events due T0, T0+10, T0+20 (each to `a` and `off`); env_b: 2 due T0+5, one due in an hour.
      for (const at of [T0, T0 + 10, T0 + 20]) await s.insertEvent(event('env_a', { createdAt: at }), { newDeliveryId: () => id('msg') });
      for (const at of [T0 + 5, T0 + 15, T0 + 3600_000])
        await s.insertEvent(event('env_b', { createdAt: at }), { newDeliveryId: () => id('msg') });
      expect(await s.countDue(T0 - 1)).toBe(0);
      expect(await s.countDue(T0)).toBe(2);
      expect(await s.countDue(T0 + 20)).toBe(8);
      await s.disableWebhook('env_a', off.id, 'manual', T0 + 20); // its 3 are held now
      expect(await s.countDue(T0 + 20)).toBe(5);
      // Leased: not due (in flight) until the lease ends.
      const claimed = await s.claimDue({ now: T0 + 20, limit: 2, workerId: 'w1', leaseMs: LEASE });
      expect(claimed).toHaveLength(2);
      expect(await s.countDue(T0 + 20)).toBe(3);
      // Delivered: gone for good.
      await s.recordAttempts(
        claimed.map((c) => ({
          attempt: attempt(c.delivery.id, c.webhook.id, c.delivery.environment, true, T0 + 21),
          workerId: 'w1',
          now: T0 + 21,
          nextAttemptAt: null,
          disableAfterMs: 1e12,
        })),
      );
      expect(await s.countDue(T0 + 3600_000)).toBe(4); // the rest, the future one included once it is due
    });

    test('claimDue gives each delivery the time it became due: emitted, given back, a lease run out, a next try', async () => {
      const hook = webhook('env_a');
      await s.createWebhook(hook, { maxWebhooks: null });
      const [first] = await s.insertEvent(event('env_a', { createdAt: T0 + 100 }), { newDeliveryId: () => id('msg') });
      const [second] = await s.insertEvent(event('env_a', { createdAt: T0 + 200 }), { newDeliveryId: () => id('msg') });

      let claimed = await s.claimDue({ now: T0 + 5000, limit: 10, workerId: 'w1', leaseMs: LEASE });
      expect(claimed.map((c) => [c.delivery.id, c.dueAt, c.delivery.nextAttemptAt])).toEqual([
        [first!.id, T0 + 100, T0 + 100],
        [second!.id, T0 + 200, T0 + 200],
      ]);

      // Given back: due at the release. Lease lapsed (its process died): still owed since it
      // first became due (the lease left the due time in place), and the lag says how long that
      // has been.
      await s.release([first!.id], 'w1', T0 + 6000);
      claimed = await s.claimDue({ now: T0 + 7000, limit: 10, workerId: 'w2', leaseMs: LEASE });
      expect(claimed.map((c) => [c.delivery.id, c.dueAt])).toEqual([[first!.id, T0 + 6000]]);
      claimed = await s.claimDue({ now: T0 + 5000 + LEASE + 30, limit: 10, workerId: 'w3', leaseMs: LEASE });
      expect(claimed.map((c) => [c.delivery.id, c.dueAt])).toEqual([[second!.id, T0 + 200]]);

      // A failure's next try: due at its back-off time.
      const at = T0 + 5000 + LEASE + 40;
      const [result] = await s.recordAttempts([
        {
          attempt: attempt(second!.id, hook.id, 'env_a', false, at),
          workerId: 'w3',
          now: at,
          nextAttemptAt: at + 60_000,
          disableAfterMs: 1e12,
        },
      ]);
      expect(result).toEqual({ disabled: null });
      claimed = await s.claimDue({ now: at + 90_000, limit: 10, workerId: 'w4', leaseMs: LEASE });
      expect(claimed.map((c) => [c.delivery.id, c.dueAt])).toEqual([
        [first!.id, T0 + 6000],
        [second!.id, at + 60_000],
      ]);
    });

    test('the traceparent written with the event comes back with every claimed delivery of it; none stored: null', async () => {
      for (const _ of [1, 2]) await s.createWebhook(webhook('env_a'), { maxWebhooks: null });
      const traced = event('env_a', { createdAt: T0 });
      const plain = event('env_a', { createdAt: T0 + 1 });
      await s.insertEvent(traced, { newDeliveryId: () => id('msg'), traceparent: TRACEPARENT });
      await s.insertEvent(plain, { newDeliveryId: () => id('msg') });
      const claimed = await s.claimDue({ now: T0 + 10, limit: 10, workerId: 'w1', leaseMs: LEASE });
      expect(claimed.map((c) => [c.event.id, c.traceparent])).toEqual([
        [traced.id, TRACEPARENT],
        [traced.id, TRACEPARENT],
        [plain.id, null],
        [plain.id, null],
      ]);
      // The event record itself is unchanged: the trace context is not part of what account holders see.
      expect(await s.getEvent('env_a', traced.id)).toEqual(traced);
    });

    test("the traceparent is written in the host's transaction, with the event", async () => {
      if (!s.kysely) return expect(s.kysely).toBeUndefined(); // a non-SQL store has no host transaction
      await s.createWebhook(webhook('env_a'), { maxWebhooks: null });
      const ev = event('env_a');
      await s.kysely
        .transaction()
        .execute((trx: unknown) => s.insertEvent(ev, { newDeliveryId: () => id('msg'), transaction: trx, traceparent: TRACEPARENT }));
      const [claimed] = await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
      expect(claimed).toMatchObject({ traceparent: TRACEPARENT, dueAt: T0 });
    });
  });
}
