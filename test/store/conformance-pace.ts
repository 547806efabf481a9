import { beforeEach, describe, expect, test } from 'vitest';
import type { Store } from '../../src/store.js';
import { event, id, LEASE, T0, webhook } from './conformance.js';

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

    test('a rate-limited backlog: one start per step, whoever claims; the neighbour is not held back', async () => {
      const { hook, other } = await backlog(10, 4); // a step of 250
      const now = T0 + 1000;
      const first = await claim(s, now, 'w1');
      // One of the backlog starts now, with the neighbour; the other nine wait for their times.
      expect(first.filter((c) => c.webhook.id === hook.id)).toHaveLength(1);
      expect(first.filter((c) => c.webhook.id === other.id)).toHaveLength(1);
      const next = await s.nextDueAt();
      expect(next).toBe(now + 250);
      // Another process claiming meanwhile gets nothing of it before its time.
      const s2 = await sibling();
      expect(await claim(s2, now + 249, 'w2')).toEqual([]);
      const starts: number[] = [now];
      for (let t = now + 250; t <= now + 3000; t += 250) {
        const got = await claim(t % 500 === 0 ? s2 : s, t, t % 500 === 0 ? 'w2' : 'w1');
        for (const c of got) {
          expect(c.webhook.id).toBe(hook.id);
          starts.push(t);
        }
      }
      expect(starts).toEqual(Array.from({ length: 10 }, (_, i) => now + 250 * i));
    });

    test('the first claim that meets a rate-limited backlog gives all of it its times: the next claims read past none of it', async () => {
      const { hook, other } = await backlog(10, 4); // a step of 250; the backlog is older than the neighbour
      const now = T0 + 1000;
      const first = await claim(s, now, 'w1', 1);
      expect(first.map((c) => c.webhook.id)).toEqual([hook.id]);
      // The other nine already wait for their times: a claim of one at the same moment gets the
      // neighbour, not one of them to give back.
      expect((await claim(s, now, 'w1', 1)).map((c) => c.webhook.id)).toEqual([other.id]);
      expect(await s.nextDueAt()).toBe(now + 250);
      // Each starts at its own step, whoever claims.
      const s2 = await sibling();
      const starts: number[] = [now];
      for (let t = now + 250; t <= now + 3000; t += 250)
        for (const c of await claim(t % 500 === 0 ? s2 : s, t, t % 500 === 0 ? 'w2' : 'w1', 1)) {
          expect(c.webhook.id).toBe(hook.id);
          starts.push(t);
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
      expect((await claim(s, now, 'w1')).filter((c) => c.webhook.id === hook.id)).toHaveLength(1);
      expect(await claim(s, now + 100, 'w1')).toEqual([]);
      expect(await claim(s, now + 200, 'w1')).toHaveLength(1);
    });
  });
}
