import { beforeEach, describe, expect, test } from 'vitest';
import type { ClaimedDelivery } from '../../src/model.js';
import type { Store } from '../../src/store.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';

/**
 * The pace of a rate-limited or deferred webhook (endpoint options, adapters/kysely/pace.ts), part
 * of the store contract on every adapter: a claim hands out its deliveries no faster than its
 * pace, whichever process claims; the rest go back due at their reserved start times, where a
 * claim takes them without reserving again; a Retry-After (`paceWebhook`) holds them all back.
 */
export function describePaceContract(ready: () => Promise<Store>, sibling: () => Promise<Store>): void {
  describe('pace (endpoint options)', () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });

    const backlog = async (n: number, perSecond: number | null) => {
      const hook = webhook('env_a', { rateLimit: perSecond === null ? null : { perSecond } });
      const other = webhook('env_b');
      await s.createWebhook(hook, { maxWebhooks: null });
      await s.createWebhook(other, { maxWebhooks: null });
      for (let i = 0; i < n; i++) await s.insertEvent(event('env_a', { createdAt: T0 + i }), { newDeliveryId: () => id('msg') });
      await s.insertEvent(event('env_b', { createdAt: T0 + n }), { newDeliveryId: () => id('msg') });
      return { hook, other };
    };
    const claim = (store: Store, now: number, workerId: string, limit = 100) => store.claimDue({ now, limit, workerId, leaseMs: LEASE });

    /** The start times a claim at `t` gave the hook's deliveries: now, or a `startAt` later in its second. */
    const startsOf = (got: readonly ClaimedDelivery[], hookId: string, t: number) =>
      got.filter((c) => c.webhook.id === hookId).map((c) => c.startAt ?? t);

    test('a rate-limited backlog: one start per step, whoever claims, a second of them per claim; the neighbour is not held back', async () => {
      const { hook, other } = await backlog(10, 4); // a step of 250
      const now = T0 + 1000; // the start of a second
      const first = await claim(s, now, 'w1');
      // One of the backlog starts now, three more later in this second (kept by the claim, under
      // a lease that covers the wait), with the neighbour; the other six wait for their seconds.
      expect(startsOf(first, hook.id, now)).toEqual([now, now + 250, now + 500, now + 750]);
      expect(first.filter((c) => c.webhook.id === other.id)).toHaveLength(1);
      for (const c of first.filter((c) => c.startAt !== undefined)) {
        expect(c.dueAt).toBe(c.startAt);
        expect(c.lease.until).toBe(c.startAt! + LEASE);
      }
      expect(await s.nextDueAt()).toBe(now + 1000);
      // Another process claiming meanwhile gets nothing of it before its second.
      const s2 = await sibling();
      expect(await claim(s2, now + 999, 'w2')).toEqual([]);
      const starts = startsOf(first, hook.id, now);
      expect(startsOf(await claim(s2, now + 1000, 'w2'), hook.id, now + 1000)).toEqual([now + 1000, now + 1250, now + 1500, now + 1750]);
      for (let t = now + 1250; t < now + 2000; t += 250) expect(await claim(s, t, 'w1')).toEqual([]);
      starts.push(now + 1000, now + 1250, now + 1500, now + 1750);
      starts.push(...startsOf(await claim(s, now + 2000, 'w1'), hook.id, now + 2000));
      expect(starts).toEqual(Array.from({ length: 10 }, (_, i) => now + 250 * i));
    });

    test('a kept delivery is its claimer’s: its lease covers the wait, and a record fenced on it lands', async () => {
      const { hook } = await backlog(2, 4);
      const now = T0 + 1000;
      const [, kept] = (await claim(s, now, 'w1')).filter((c) => c.webhook.id === hook.id);
      expect(kept!.startAt).toBe(now + 250);
      // Nobody else takes it, even after the claim's own lease would have run out (the others'
      // did: they come back).
      const s2 = await sibling();
      const again = await claim(s2, now + LEASE + 100, 'w2');
      expect(again.length).toBeGreaterThan(0);
      expect(again.map((c) => c.delivery.id)).not.toContain(kept!.delivery.id);
      const [result] = await s.recordAttempts([
        {
          attempt: attempt(kept!.delivery.id, hook.id, hook.environment, true, now + 250),
          workerId: 'w1',
          now: now + 300,
          nextAttemptAt: null,
          disableAfterMs: 72 * 3_600_000,
          leaseUntil: kept!.lease.until,
        },
      ]);
      expect(result).toBeDefined();
      expect((await s.getDelivery(hook.environment, kept!.delivery.id))?.status).toBe('delivered');
    });

    test('the first claim that meets a rate-limited backlog gives all of it its times: the next claims read past none of it', async () => {
      const { hook, other } = await backlog(10, 4); // a step of 250; the backlog is older than the neighbour
      const now = T0 + 1000;
      const first = await claim(s, now, 'w1', 1);
      expect(first.map((c) => c.webhook.id)).toEqual([hook.id]);
      // The other nine already have their times: a claim of one at the same moment gets the
      // neighbour (older than this second's bucket), not one of them to give back.
      expect((await claim(s, now, 'w1', 1)).map((c) => c.webhook.id)).toEqual([other.id]);
      // Each starts at its own step, whoever claims, a second's worth per claim of one each.
      const s2 = await sibling();
      const starts: number[] = [now];
      for (let t = now; t <= now + 3000; t += 1000)
        for (let got = await claim(t % 2000 === 0 ? s2 : s, t, t % 2000 === 0 ? 'w2' : 'w1', 1); got.length > 0; ) {
          expect(got.map((c) => c.webhook.id)).toEqual([hook.id]);
          starts.push(...startsOf(got, hook.id, t));
          got = await claim(t % 2000 === 0 ? s2 : s, t, t % 2000 === 0 ? 'w2' : 'w1', 1);
        }
      expect(starts).toEqual(Array.from({ length: 10 }, (_, i) => now + 250 * i));
    });

    test('a deferral (Retry-After) holds every delivery of the webhook until it ends, and is never moved earlier', async () => {
      const { hook } = await backlog(3, null);
      await s.paceWebhook!(hook.id, { deferUntil: T0 + 60_000 });
      await s.paceWebhook!(hook.id, { deferUntil: T0 + 30_000 });
      const early = await claim(s, T0 + 1000, 'w1');
      expect(early.map((c) => c.webhook.id)).not.toContain(hook.id);
      expect(await claim(s, T0 + 59_999, 'w1')).toEqual([]);
      expect(await claim(s, T0 + 60_000, 'w1')).toHaveLength(3);
    });

    test('a 429 without Retry-After halves the pace until slowUntil', async () => {
      const { hook } = await backlog(4, 10); // a step of 100, 200 while slow
      await s.paceWebhook!(hook.id, { slowUntil: T0 + 60_000 });
      const now = T0 + 1000;
      expect(startsOf(await claim(s, now, 'w1'), hook.id, now)).toEqual([now, now + 200, now + 400, now + 600]);
    });
  });
}
