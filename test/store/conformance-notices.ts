import { beforeEach, describe, expect, test } from 'vitest';
import type { NoticeRecord, WebhookRecord } from '../../src/model.js';
import type { RecordAttemptArgs, Store } from '../../src/store.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';

const DAY = 24 * 3600_000;
const DISABLE_AFTER = 3 * DAY;

/**
 * The notice outbox, part of the store contract: the notice is written by the transaction that
 * disables a webhook, claimed under a lease like a delivery, finished only by its holder. Run by
 * describeStore on every adapter; `siblings()` are other processes on the same database.
 */
export function describeNoticeContract(ready: () => Promise<Store>, sibling: () => Promise<Store>): void {
  describe('notice outbox', () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });

    /**
     * Webhooks failing since four days ago, one per environment given, each with one delivery;
     * one failed attempt each (recorded together at `now`) disables them all.
     */
    const disable = async (environments: string[], now = T0 + 10) => {
      const hooks: WebhookRecord[] = [];
      for (const environment of environments) {
        const hook = webhook(environment, { failingSince: T0 - 4 * DAY, lastError: 'earlier' });
        await s.createWebhook(hook, { maxWebhooks: null });
        await s.insertEvent(event(environment), { newDeliveryId: () => id('msg') });
        hooks.push(hook);
      }
      const claimed = await s.claimDue({ now, limit: 100, workerId: 'w1', leaseMs: LEASE });
      const batch: RecordAttemptArgs[] = claimed.map((c) => ({
        attempt: attempt(c.delivery.id, c.webhook.id, c.webhook.environment, false, now),
        workerId: 'w1',
        now,
        nextAttemptAt: now + DAY,
        disableAfterMs: DISABLE_AFTER,
      }));
      const results = await s.recordAttempts(batch);
      return { hooks, batch, disabled: results.map((r) => r.disabled) };
    };
    const all = () => s.listNotices({ limit: 100 });

    test('the disabling record writes exactly one pending notice with the webhook as disabled; a repeated record writes none', async () => {
      const now = T0 + 10;
      const { hooks, batch, disabled } = await disable(['env_a'], now);
      const hook = hooks[0]!;
      expect(disabled[0]).toMatchObject({ id: hook.id, status: 'disabled', disabledAt: now });
      const notices = await all();
      expect(notices).toHaveLength(1);
      const notice = notices[0]!;
      expect(notice).toEqual<NoticeRecord>({
        id: notice.id,
        environment: 'env_a',
        kind: 'webhook_disabled',
        webhookId: hook.id,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        lastError: null,
        sentAt: null,
        createdAt: now,
        info: {
          webhook: (await s.getWebhook('env_a', hook.id))!,
          failingSince: T0 - 4 * DAY,
          disabledAt: now,
          lastError: 'expected HTTP 200, got 500: boom',
        },
      });
      expect(notice.info.webhook).toEqual(disabled[0]);
      expect(notice.id).toMatch(/^notice_/);
      // Its delivery is held now: what is due next is the notice.
      expect(await s.nextDueAt()).toBe(now);

      // The same disabling attempt recorded again (the first commit's reply was lost): same answer, no second notice.
      const again = await s.recordAttempts(batch);
      expect(again[0]!.disabled).toEqual(disabled[0]);
      expect(await all()).toEqual([notice]);
      // A later failure of the already disabled webhook (an attempt that was in flight) writes none either.
      const late = { ...batch[0]!, attempt: { ...batch[0]!.attempt, id: id('attempt'), startedAt: now + 5 }, now: now + 6 };
      expect((await s.recordAttempts([late]))[0]!.disabled).toBeNull();
      expect(await all()).toEqual([notice]);
    });

    test('a claim leases the notice: nobody else gets it while the lease lives, the next claimer after it expires, same id', async () => {
      const now = T0 + 10;
      await disable(['env_a'], now);
      const [first] = await s.claimNotices({ now, limit: 10, workerId: 'w1', leaseMs: LEASE });
      expect(first).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: now + LEASE });
      const other = await sibling();
      expect(await other.claimNotices({ now, limit: 10, workerId: 'w2', leaseMs: LEASE })).toEqual([]);
      expect(await other.claimNotices({ now: now + LEASE - 1, limit: 10, workerId: 'w2', leaseMs: LEASE })).toEqual([]);
      // The lease moved its due time: the scheduler wakes when it ends.
      expect(await s.nextDueAt()).toBe(now + LEASE);

      const [second] = await other.claimNotices({ now: now + LEASE, limit: 10, workerId: 'w2', leaseMs: LEASE });
      expect(second?.id).toBe(first!.id);
      // The first holder finishes late: nothing changes, it is told so.
      expect(await s.finishNotice(first!.id, 'w1', { now: now + LEASE + 1, sent: true })).toBe(false);
      expect(await s.finishNotice(first!.id, 'w1', { now: now + LEASE + 1, sent: false, nextAttemptAt: null, error: 'x' })).toBe(false);
      expect((await all())[0]).toMatchObject({
        status: 'pending',
        attempts: 0,
        sentAt: null,
        lastError: null,
        nextAttemptAt: now + 2 * LEASE,
      });
      // The holder's word counts.
      expect(await other.finishNotice(first!.id, 'w2', { now: now + LEASE + 2, sent: true })).toBe(true);
      expect((await all())[0]).toMatchObject({ id: first!.id, status: 'sent', attempts: 1, sentAt: now + LEASE + 2, nextAttemptAt: null });
      // A sent notice is never claimed again, nor finished twice.
      expect(await s.claimNotices({ now: now + 10 * DAY, limit: 10, workerId: 'w3', leaseMs: LEASE })).toEqual([]);
      expect(await other.finishNotice(first!.id, 'w2', { now: now + LEASE + 3, sent: false, nextAttemptAt: null, error: 'x' })).toBe(false);
      expect(await s.nextDueAt()).toBeNull();
    });

    test('a failure with a next try leaves it pending (attempts + 1, the error); without one it is failed', async () => {
      const now = T0 + 10;
      await disable(['env_a'], now);
      const [n] = await s.claimNotices({ now, limit: 10, workerId: 'w1', leaseMs: LEASE });
      const nextAttemptAt = now + 5 * 60_000;
      expect(await s.finishNotice(n!.id, 'w1', { now: now + 1, sent: false, nextAttemptAt, error: 'Error: 421 try later' })).toBe(true);
      expect((await all())[0]).toMatchObject({
        id: n!.id,
        status: 'pending',
        attempts: 1,
        lastError: 'Error: 421 try later',
        nextAttemptAt: nextAttemptAt,
        sentAt: null,
      });
      expect(await s.nextDueAt()).toBe(nextAttemptAt);
      expect(await s.claimNotices({ now: nextAttemptAt - 1, limit: 10, workerId: 'w2', leaseMs: LEASE })).toEqual([]);
      const [again] = await s.claimNotices({ now: nextAttemptAt, limit: 10, workerId: 'w2', leaseMs: LEASE });
      expect(again).toMatchObject({ id: n!.id, attempts: 1 });
      const long = 'e'.repeat(2000);
      expect(await s.finishNotice(n!.id, 'w2', { now: nextAttemptAt + 1, sent: false, nextAttemptAt: null, error: long })).toBe(true);
      const failed = (await all())[0]!;
      expect(failed).toMatchObject({ status: 'failed', attempts: 2, nextAttemptAt: null, sentAt: null });
      expect(failed.lastError!.length).toBeLessThanOrEqual(500); // bounded like every stored error
      expect(await s.claimNotices({ now: nextAttemptAt + 10 * DAY, limit: 10, workerId: 'w3', leaseMs: LEASE })).toEqual([]);
      expect(await s.nextDueAt()).toBeNull();
    });

    test('listNotices: newest first, filtered by environment and status, limited', async () => {
      await disable(['env_a', 'env_b'], T0 + 10);
      await disable(['env_a'], T0 + 20);
      const [x, y] = await s.claimNotices({ now: T0 + 30, limit: 2, workerId: 'w1', leaseMs: LEASE });
      await s.finishNotice(x!.id, 'w1', { now: T0 + 31, sent: true });
      await s.finishNotice(y!.id, 'w1', { now: T0 + 31, sent: false, nextAttemptAt: null, error: 'refused' });
      const byCreation = await all();
      expect(byCreation).toHaveLength(3);
      expect(byCreation.map((n) => n.createdAt)).toEqual([T0 + 20, T0 + 10, T0 + 10]);
      const ids = (filter: Parameters<Store['listNotices']>[0]) => s.listNotices(filter).then((l) => l.map((n) => n.id).sort());
      expect(await ids({ environment: 'env_a', limit: 100 })).toEqual(
        byCreation
          .filter((n) => n.environment === 'env_a')
          .map((n) => n.id)
          .sort(),
      );
      expect(await ids({ environment: 'env_b', limit: 100 })).toHaveLength(1);
      expect(await ids({ environment: 'env_c', limit: 100 })).toEqual([]);
      expect(await ids({ status: 'sent', limit: 100 })).toEqual([x!.id]);
      expect(await ids({ status: 'failed', limit: 100 })).toEqual([y!.id]);
      const pending = await s.listNotices({ status: 'pending', limit: 100 });
      expect(pending).toHaveLength(1);
      expect(await ids({ status: 'pending', environment: pending[0]!.environment === 'env_a' ? 'env_b' : 'env_a', limit: 100 })).toEqual(
        [],
      );
      expect(await s.listNotices({ limit: 2 })).toEqual(byCreation.slice(0, 2));
    });

    test('claimers in several processes at once never get the same notice', async () => {
      await disable(Array.from({ length: 12 }, (_, i) => `env_${i}`));
      const claimers = [s, ...(await Promise.all([sibling(), sibling(), sibling()]))];
      const got: string[] = [];
      await Promise.all(
        claimers.map(async (c, i) => {
          for (;;) {
            const batch = await c.claimNotices({ now: T0 + 100, limit: 2, workerId: `w${i}`, leaseMs: LEASE });
            if (batch.length === 0) break;
            got.push(...batch.map((n) => n.id));
          }
        }),
      );
      expect(got).toHaveLength(12);
      expect(new Set(got).size).toBe(12);
    });
  });
}
