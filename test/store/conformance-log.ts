import { beforeEach, describe, expect, test } from 'vitest';
import { WebhookDisabledError } from '../../src/errors.js';
import type { DeliveryRecord } from '../../src/model.js';
import type { Store } from '../../src/store.js';
import { attempt, event, id, LEASE, leaseOf, T0, type TestableStore, webhook } from './conformance.js';

/**
 * The delivery log and its operations (keyset pages, resend, recover, test events), part of the
 * store contract: run by describeStore on every adapter.
 */
export function describeLogContract(store: () => TestableStore, ready: () => Promise<TestableStore>): void {
  describe('delivery log and operations', () => {
    let s: TestableStore;
    beforeEach(async () => {
      s = await ready();
    });

    /** A webhook with `n` deliveries, one per event, created 1 ms apart. */
    const withDeliveries = async (n: number, overrides: Parameters<typeof webhook>[1] = {}) => {
      const hook = webhook('env_a', overrides);
      await s.createWebhook(hook, { maxWebhooks: null });
      const deliveries: DeliveryRecord[] = [];
      for (let i = 0; i < n; i++)
        deliveries.push(...(await s.insertEvent(event('env_a', { createdAt: T0 + i }), { newDeliveryId: () => id('msg') })));
      return { hook, deliveries };
    };

    /**
     * Claims the given deliveries and records an attempt with no next try: they end `failed`, or
     * `delivered` with `success`. The others claimed on the way are given back.
     */
    const finish = async (hook: { id: string }, ids: string[], at = T0 + 10_000, success = false) => {
      const claimed = await s.claimDue({ now: at, limit: 1000, workerId: 'w', leaseMs: LEASE });
      const mine = claimed.filter((c) => ids.includes(c.delivery.id));
      await s.recordAttempts(
        mine.map((c) => ({
          attempt: attempt(c.delivery.id, hook.id, 'env_a', success, at),
          workerId: 'w',
          now: at,
          nextAttemptAt: null,
          disableAfterMs: 1e12,
        })),
      );
      const others = claimed.filter((c) => !ids.includes(c.delivery.id)).map((c) => c.delivery.id);
      if (others.length > 0) await s.release(others, 'w', at);
    };
    const fail = (hook: { id: string }, ids: string[], at?: number) => finish(hook, ids, at, false);

    test('pages are keyset-based: each delivery once, newest first, stable while new ones arrive', async () => {
      const { hook, deliveries } = await withDeliveries(7);
      const seen: string[] = [];
      let after = null;
      let pages = 0;
      do {
        const page: Awaited<ReturnType<Store['listDeliveries']>> = await s.listDeliveries('env_a', { webhookId: hook.id, limit: 3, after });
        seen.push(...page.deliveries.map((d) => d.id));
        after = page.next;
        pages++;
        // Newer deliveries arrive during the walk: they sort before the cursor, never into a later page.
        await s.insertEvent(event('env_a', { createdAt: T0 + 100 + pages }), { newDeliveryId: () => id('msg') });
      } while (after);
      expect(pages).toBe(3);
      expect(seen).toEqual(deliveries.map((d) => d.id).reverse());
      // Equal creation times are ordered by id, so a tie cannot split or repeat a page.
      const tie = webhook('env_a');
      await s.createWebhook(tie, { maxWebhooks: null });
      const ev = event('env_a', { createdAt: T0 });
      await s.insertEvent(ev, { newDeliveryId: () => id('msg') });
      const all = (await s.listDeliveries('env_a', { eventId: ev.id, limit: 100 })).deliveries.map((d) => d.id);
      const walked: string[] = [];
      let cursor = null;
      do {
        const page: Awaited<ReturnType<Store['listDeliveries']>> = await s.listDeliveries('env_a', {
          eventId: ev.id,
          limit: 1,
          after: cursor,
        });
        walked.push(...page.deliveries.map((d) => d.id));
        cursor = page.next;
      } while (cursor);
      expect(walked).toEqual(all);
      expect(new Set(walked).size).toBe(walked.length);
    });

    test("a webhook's whole log pages newest first across every status, each delivery once", async () => {
      const { hook, deliveries } = await withDeliveries(8);
      const ids = deliveries.map((d) => d.id);
      await fail(hook, [ids[1]!, ids[4]!]);
      const at = T0 + 20_000;
      await finish(hook, [ids[2]!, ids[5]!], at, true);
      const walk = async () => {
        const seen: Array<[string, string]> = [];
        let after = null;
        do {
          const page: Awaited<ReturnType<Store['listDeliveries']>> = await s.listDeliveries('env_a', {
            webhookId: hook.id,
            limit: 3,
            after,
          });
          seen.push(...page.deliveries.map((d): [string, string] => [d.id, d.status]));
          after = page.next;
        } while (after);
        return seen;
      };
      const byId = (status: (i: number) => string) => ids.map((id, i): [string, string] => [id, status(i)]).reverse();
      const state = (i: number, rest: string) => (i === 1 || i === 4 ? 'failed' : i === 2 || i === 5 ? 'delivered' : rest);
      expect(await walk()).toEqual(byId((i) => state(i, 'pending')));
      // Disabled: the pending ones are held, and the log still walks all of them once, in order.
      await s.disableWebhook('env_a', hook.id, 'manual', at + 1);
      expect(await walk()).toEqual(byId((i) => state(i, 'held')));
    });

    test('resendDelivery: any state becomes due now with the same id; a live lease is left alone', async () => {
      const { hook, deliveries } = await withDeliveries(3);
      const [a, b, c] = deliveries.map((d) => d.id) as [string, string, string];
      await fail(hook, [a]);
      const now = T0 + 20_000;
      expect(await s.resendDelivery('env_a', a, now)).toMatchObject({ id: a, status: 'pending', nextAttemptAt: now, attemptCount: 1 });
      // In flight under a live lease: unchanged, no second attempt queued.
      const claimed = await s.claimDue({ now, limit: 10, workerId: 'busy', leaseMs: LEASE });
      expect(claimed.map((x) => x.delivery.id)).toContain(b);
      const dueB = claimed.find((x) => x.delivery.id === b)!.dueAt;
      expect(await s.resendDelivery('env_a', b, now + 1)).toMatchObject({ id: b, nextAttemptAt: dueB });
      expect((await leaseOf(s, b)).workerId).toBe('busy');
      // Its lease ran out (its process died): due now, the dead claim cleared.
      expect(await s.resendDelivery('env_a', c, now + LEASE + 1)).toMatchObject({
        id: c,
        status: 'pending',
        nextAttemptAt: now + LEASE + 1,
      });
      expect(await leaseOf(s, c)).toEqual({ workerId: null, until: null });
      expect(await s.resendDelivery('env_b', a, now)).toBeNull();
      expect(await s.resendDelivery('env_a', id('msg'), now)).toBeNull();
      await s.disableWebhook('env_a', hook.id, 'manual', now);
      await expect(s.resendDelivery('env_a', a, now)).rejects.toBeInstanceOf(WebhookDisabledError);
    });

    test('recoverFailed: failed deliveries in [since, until) in bounded batches, each once', async () => {
      const { hook, deliveries } = await withDeliveries(9);
      const ids = deliveries.map((d) => d.id);
      await fail(hook, ids.slice(0, 8)); // the 9th stays pending
      const now = T0 + 30_000;
      const recoverAll = async (since: number, until: number) => {
        let total = 0;
        let after = null;
        let batches = 0;
        do {
          const r: Awaited<ReturnType<Store['recoverFailed']>> = await s.recoverFailed('env_a', hook.id, {
            since,
            until,
            now,
            limit: 3,
            after,
          });
          total += r!.recovered;
          after = r!.last;
          batches++;
        } while (after);
        return { total, batches };
      };
      // [T0 + 1, T0 + 7): six of the failed ones; the first and the eighth are outside.
      expect(await recoverAll(T0 + 1, T0 + 7)).toEqual({ total: 6, batches: 3 });
      const statuses = (await s.listDeliveries('env_a', { webhookId: hook.id, limit: 100 })).deliveries.reverse().map((d) => d.status);
      expect(statuses).toEqual(['failed', 'pending', 'pending', 'pending', 'pending', 'pending', 'pending', 'failed', 'pending']);
      // Again: nothing left to queue in that window.
      expect((await recoverAll(T0 + 1, T0 + 7)).total).toBe(0);
      expect(await s.recoverFailed('env_b', hook.id, { since: T0, until: now, now, limit: 3, after: null })).toBeNull();
      await s.disableWebhook('env_a', hook.id, 'manual', now);
      await expect(s.recoverFailed('env_a', hook.id, { since: T0, until: now, now, limit: 3, after: null })).rejects.toBeInstanceOf(
        WebhookDisabledError,
      );
    });

    test('sendWaiting and countWaiting: what waits for a later attempt is due now in batches; in flight is left alone', async () => {
      const { hook, deliveries } = await withDeliveries(7);
      const ids = deliveries.map((d) => d.id);
      const at = T0 + 10_000;
      const later = at + 3_600_000;
      // Five fail and wait an hour, one ends failed, one is claimed and stays in flight.
      const claimed = await s.claimDue({ now: at, limit: 1000, workerId: 'w', leaseMs: LEASE });
      await s.recordAttempts(
        claimed
          .filter((c) => c.delivery.id !== ids[6])
          .map((c, i) => ({
            attempt: attempt(c.delivery.id, hook.id, 'env_a', false, at),
            workerId: 'w',
            now: at,
            nextAttemptAt: i === 5 ? null : later,
            disableAfterMs: 1e12,
          })),
      );
      const now = at + 1_000;
      // Six pending; five of them sendable (the one in flight is not).
      expect(await s.countWaiting('env_a', hook.id, now)).toEqual({ pending: 6, held: 0, sendable: 5 });
      let total = 0;
      let batches = 0;
      for (;;) {
        const r = await s.sendWaiting('env_a', hook.id, { now, limit: 2 });
        total += r!.sent;
        batches++;
        if (!r!.more) break;
      }
      expect({ total, batches }).toEqual({ total: 5, batches: 3 });
      const due = await s.claimDue({ now, limit: 1000, workerId: 'w2', leaseMs: LEASE });
      expect(due.map((c) => c.delivery.id).sort()).toEqual(ids.slice(0, 5).sort());
      // Attempted again after `now` and failed: a send that began at `now` does not take them twice.
      await s.recordAttempts(
        due.map((c) => ({
          attempt: attempt(c.delivery.id, hook.id, 'env_a', false, now + 5),
          workerId: 'w2',
          now: now + 5,
          nextAttemptAt: later,
          disableAfterMs: 1e12,
        })),
      );
      expect(await s.sendWaiting('env_a', hook.id, { now, limit: 2 })).toEqual({ sent: 0, more: false });
      expect((await s.sendWaiting('env_a', hook.id, { now: now + 10, limit: 10 }))!.sent).toBe(5);
      expect(await s.sendWaiting('env_b', hook.id, { now, limit: 2 })).toBeNull();
      expect(await s.countWaiting('env_b', hook.id, now)).toBeNull();
      await s.disableWebhook('env_a', hook.id, 'manual', now);
      expect(await s.countWaiting('env_a', hook.id, now)).toEqual({ pending: 0, held: 6, sendable: 0 });
      await expect(s.sendWaiting('env_a', hook.id, { now, limit: 2 })).rejects.toBeInstanceOf(WebhookDisabledError);
    });

    test('insertEvent to chosen webhooks: subscribed or not, no one else; a disabled target writes nothing', async () => {
      const subscribed = webhook('env_a');
      const other = webhook('env_a', { eventTypes: ['user.deleted'] });
      for (const w of [subscribed, other]) await s.createWebhook(w, { maxWebhooks: null });
      const ev = event('env_a');
      const written = await s.insertEvent(ev, { newDeliveryId: () => id('msg'), webhookIds: [other.id] });
      expect(written.map((d) => d.webhookId)).toEqual([other.id]);
      await s.disableWebhook('env_a', other.id, 'manual', T0);
      const refused = event('env_a');
      await expect(s.insertEvent(refused, { newDeliveryId: () => id('msg'), webhookIds: [other.id] })).rejects.toBeInstanceOf(
        WebhookDisabledError,
      );
      expect(await s.getEvent('env_a', refused.id)).toBeNull();
      // Another environment's webhook is not a target either.
      const foreign = webhook('env_b');
      await s.createWebhook(foreign, { maxWebhooks: null });
      await expect(s.insertEvent(event('env_a'), { newDeliveryId: () => id('msg'), webhookIds: [foreign.id] })).rejects.toBeInstanceOf(
        WebhookDisabledError,
      );
      expect(store()).toBe(s);
    });
  });
}
