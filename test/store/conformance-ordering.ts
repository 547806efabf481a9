import { beforeEach, describe, expect, test } from 'vitest';
import type { ClaimedDelivery, WebhookRecord } from '../../src/model.js';
import type { Store } from '../../src/store.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';

/**
 * Ordered delivery per subject (issue 40, adapters/kysely/ordering.ts), part of the store contract
 * on every adapter: a per-subject webhook's delivery is not due while an earlier one of the same
 * subject is pending or held; ending one (delivered, failed, dropped) makes the next due; resend,
 * recover, disable and enable keep the queue; other subjects and `none` webhooks flow.
 */
export function describeOrderingContract(ready: () => Promise<Store>, sibling: () => Promise<Store>): void {
  describe('ordered delivery per subject', () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });

    const user = (userId: string, at: number) => event('env_a', { createdAt: at, data: { user: { id: userId } } });
    const emit = (store: Store, userId: string, at: number) =>
      store.insertEvent(user(userId, at), { newDeliveryId: () => id('msg'), subject: userId });
    const claim = async (now: number, store: Store = s, workerId = 'w1') => store.claimDue({ now, limit: 100, workerId, leaseMs: LEASE });
    const subjectOf = (c: ClaimedDelivery) => (c.event.data as { user: { id: string } }).user.id;
    const record = (c: ClaimedDelivery, success: boolean, now: number, nextAttemptAt: number | null = null) =>
      s.recordAttempts([
        {
          attempt: attempt(c.delivery.id, c.webhook.id, 'env_a', success, now),
          workerId: c.lease.workerId,
          now,
          nextAttemptAt,
          disableAfterMs: 72 * 3600_000,
          leaseUntil: c.lease.until,
          ordered: c.webhook.ordering === 'per-subject',
        },
      ]);
    const ordered = async (overrides: Partial<WebhookRecord> = {}) => {
      const hook = webhook('env_a', { ordering: 'per-subject', ...overrides });
      await s.createWebhook(hook, { maxWebhooks: null });
      return hook;
    };

    test('only the first of each subject is due; the webhook reads back per-subject; a none webhook gets all', async () => {
      const hook = await ordered();
      const plain = webhook('env_a');
      await s.createWebhook(plain, { maxWebhooks: null });
      expect((await s.getWebhook('env_a', hook.id))?.ordering).toBe('per-subject');
      expect((await s.getWebhook('env_a', plain.id))?.ordering).toBe('none');
      const first = await emit(s, 'u1', T0);
      const second = await emit(s, 'u1', T0 + 1);
      await emit(s, 'u2', T0 + 2);
      // The second of u1 to the ordered webhook waits: pending, with no due time.
      const waiting = second.find((d) => d.webhookId === hook.id)!;
      expect(waiting).toMatchObject({ status: 'pending', nextAttemptAt: null });
      expect(await s.getDelivery('env_a', waiting.id)).toMatchObject({ status: 'pending', nextAttemptAt: null });
      expect(first.find((d) => d.webhookId === hook.id)!.nextAttemptAt).toBe(T0);
      const got = await claim(T0 + 10);
      expect(got.filter((c) => c.webhook.id === plain.id)).toHaveLength(3);
      expect(
        got
          .filter((c) => c.webhook.id === hook.id)
          .map(subjectOf)
          .sort(),
      ).toEqual(['u1', 'u2']);
      // Nothing else is due, and a waiting delivery is no next due time (the claimed ones are leased).
      expect(await claim(T0 + 11)).toEqual([]);
      expect(await s.nextDueAt()).toBeNull();
    });

    test('a success releases the next of its subject at once; a failure with a next attempt does not; a final failure does', async () => {
      const hook = await ordered();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await emit(s, 'u1', T0 + i))[0]!.id);
      const [head] = await claim(T0 + 10);
      expect(head!.delivery.id).toBe(ids[0]);
      // A failure with a next attempt: still the head, the others wait.
      const [r1] = await record(head!, false, T0 + 20, T0 + 5_000);
      expect(r1?.released).toBeFalsy();
      expect(await claim(T0 + 4_999)).toEqual([]);
      expect(await s.nextDueAt()).toBe(T0 + 5_000);
      const [again] = await claim(T0 + 5_000);
      expect(again!.delivery.id).toBe(ids[0]);
      // Its back-off runs out: it fails, and the next becomes due now.
      const [r2] = await record(again!, false, T0 + 5_010, null);
      expect(r2?.released).toBe(true);
      expect(await s.getDelivery('env_a', ids[0]!)).toMatchObject({ status: 'failed' });
      expect(await s.getDelivery('env_a', ids[1]!)).toMatchObject({ status: 'pending', nextAttemptAt: T0 + 5_010 });
      const [second] = await claim(T0 + 5_010);
      expect(second!.delivery.id).toBe(ids[1]);
      const [r3] = await record(second!, true, T0 + 5_020);
      expect(r3?.released).toBe(true);
      const [third] = await claim(T0 + 5_020);
      expect(third!.delivery.id).toBe(ids[2]);
      const [r4] = await record(third!, true, T0 + 5_030);
      expect(r4?.released).toBeFalsy(); // nothing behind it
      // The queue is empty: the next emit is due at once.
      const next = await emit(s, 'u1', T0 + 6_000);
      expect(next[0]!.nextAttemptAt).toBe(T0 + 6_000);
      expect(hook.ordering).toBe('per-subject');
    });

    test('an event without a subject is not queued', async () => {
      await ordered();
      for (let i = 0; i < 3; i++) await s.insertEvent(user('u1', T0 + i), { newDeliveryId: () => id('msg'), subject: null });
      expect(await claim(T0 + 10)).toHaveLength(3);
    });

    test('disable holds the queue; enable resumes only each head, or drops them all and ends the queue', async () => {
      const hook = await ordered();
      const u1 = [];
      for (let i = 0; i < 3; i++) u1.push((await emit(s, 'u1', T0 + i))[0]!.id);
      const u2 = (await emit(s, 'u2', T0 + 3))[0]!.id;
      await s.disableWebhook('env_a', hook.id, 'manual', T0 + 10);
      await s.enableWebhook('env_a', hook.id, T0 + 20, true);
      expect((await claim(T0 + 20)).map((c) => c.delivery.id).sort()).toEqual([u1[0], u2].sort());
      await s.disableWebhook('env_a', hook.id, 'manual', T0 + 30);
      await s.enableWebhook('env_a', hook.id, T0 + 40, false);
      for (const d of [...u1, u2]) expect((await s.getDelivery('env_a', d))?.status).toBe('failed');
      // Dropped: the queue ended, so the next event of u1 goes at once.
      expect((await emit(s, 'u1', T0 + 50))[0]!.nextAttemptAt).toBe(T0 + 50);
    });

    test('resend: a delivery behind another keeps its place; one that ended goes to the end of its queue', async () => {
      const hook = await ordered();
      const a = (await emit(s, 'u1', T0))[0]!.id;
      const [head] = await claim(T0 + 1);
      await record(head!, true, T0 + 2);
      const b = (await emit(s, 'u1', T0 + 3))[0]!.id;
      const c = (await emit(s, 'u1', T0 + 4))[0]!.id;
      // c waits behind b: a resend does not make it pass b.
      expect(await s.resendDelivery('env_a', c, T0 + 5)).toMatchObject({ status: 'pending', nextAttemptAt: null });
      // a was delivered: resent, it goes behind c.
      expect(await s.resendDelivery('env_a', a, T0 + 6)).toMatchObject({ status: 'pending', nextAttemptAt: null });
      const order: string[] = [];
      for (let t = T0 + 10; order.length < 3; t += 10) {
        const got = await claim(t);
        expect(got.length).toBe(1);
        order.push(got[0]!.delivery.id);
        await record(got[0]!, true, t + 1);
      }
      expect(order).toEqual([b, c, a]);
      // Resent with its queue empty, it goes at once.
      expect(await s.resendDelivery('env_a', b, T0 + 100)).toMatchObject({ nextAttemptAt: T0 + 100 });
      expect(hook.id).toBeTruthy();
    });

    test('recover: failed deliveries go back in line in the order they were made; only the first is due', async () => {
      const hook = await ordered();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await emit(s, 'u1', T0 + i))[0]!.id);
      for (let t = T0 + 10; ; t += 10) {
        const got = await claim(t);
        if (got.length === 0) break;
        await record(got[0]!, false, t + 1, null);
      }
      for (const d of ids) expect((await s.getDelivery('env_a', d))?.status).toBe('failed');
      const result = await s.recoverFailed('env_a', hook.id, { since: T0, until: T0 + 100, now: T0 + 200, limit: 500, after: null });
      expect(result?.recovered).toBe(3);
      const order: string[] = [];
      for (let t = T0 + 300; order.length < 3; t += 10) {
        const got = await claim(t);
        expect(got.length).toBe(1);
        order.push(got[0]!.delivery.id);
        await record(got[0]!, true, t + 1);
      }
      expect(order).toEqual(ids);
    });

    test('set back to none, what waited becomes due at once', async () => {
      const hook = await ordered();
      for (let i = 0; i < 3; i++) await emit(s, 'u1', T0 + i);
      expect(await claim(T0 + 10)).toHaveLength(1);
      const updated = await s.updateWebhook('env_a', hook.id, { ordering: 'none' }, T0 + 20);
      expect(updated?.ordering).toBe('none');
      expect(await claim(T0 + 20)).toHaveLength(2);
    });

    test('emits of one subject from two stores at once: one due, the rest in line, none lost', async () => {
      const other = await sibling();
      const hook = await ordered();
      const made = await Promise.all(Array.from({ length: 20 }, (_, i) => emit(i % 2 ? other : s, 'u1', T0 + i)));
      expect(made.flat().filter((d) => d.nextAttemptAt !== null)).toHaveLength(1);
      let delivered = 0;
      for (let t = T0 + 100; delivered < 20; t += 10) {
        const got = await claim(t, t % 20 ? s : other, t % 20 ? 'w1' : 'w2');
        expect(got.length).toBe(1);
        await record(got[0]!, true, t + 1);
        delivered++;
      }
      expect(await claim(T0 + 10_000)).toEqual([]);
      expect(hook.id).toBeTruthy();
    });
  });
}
