import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { LimitReachedError } from '../../src/errors.js';
import type { AttemptRecord, DeliveryRecord, EventRecord, WebhookRecord } from '../../src/model.js';
import type { ClaimArgs, RecordAttemptArgs, Store } from '../../src/store.js';
import { describeActivityContract } from './conformance-activity.js';
import { describeDashboardContract } from './conformance-dashboard.js';
import { describeLogContract } from './conformance-log.js';
import { describeNoticeContract } from './conformance-notices.js';
import { describeOrderingContract } from './conformance-ordering.js';
import { describePaceContract } from './conformance-pace.js';
import { describePacksContract } from './conformance-packs.js';
import { describePoisonContract } from './conformance-poison.js';
import { describeSearchContract } from './conformance-search.js';
import { describeStatsContract } from './conformance-stats.js';
import { describeTelemetryContract } from './conformance-telemetry.js';

/**
 * One conformance suite for every store: each adapter's test file calls
 * `describeStore(name, make)` and is done when this passes on it. `make` opens an empty database
 * per test (a new one, or one emptied since the last test); `sibling()` opens another store on
 * that same database, as another process would, for the races (claims, caps, migrations).
 */
export interface StoreUnderTest {
  store: TestableStore;
  sibling(): Promise<TestableStore>;
  close(): Promise<void>;
}

/** SQL stores expose their Kysely, which hosts use for transactional emit. */
export type TestableStore = Store & { kysely?: Kysely<any> };

/**
 * The lease columns of a delivery, read raw through the store's Kysely: the public
 * `DeliveryRecord` does not carry them (a claim returns its lease as `ClaimedDelivery.lease`).
 */
export async function leaseOf(s: TestableStore, deliveryId: string): Promise<{ workerId: string | null; until: number | null }> {
  if (!s.kysely) throw new Error('leaseOf reads the lease through the store kysely, and this store has none');
  const row = await s.kysely
    .selectFrom('iw_deliveries')
    .select(['locked_by', 'locked_until'])
    .where('id', '=', deliveryId)
    .executeTakeFirstOrThrow();
  return { workerId: row.locked_by, until: row.locked_until === null ? null : Number(row.locked_until) };
}

export const T0 = Date.parse('2026-03-01T12:00:00.000Z');
export const LEASE = 60_000;
const DAY = 24 * 3600_000;
let seq = 0;
export const id = (prefix: string) =>
  `${prefix}_${(++seq).toString(16).padStart(12, '0')}${Math.random().toString(16).slice(2, 12).padEnd(10, '0')}`;

export function webhook(environment: string, overrides: Partial<WebhookRecord> = {}): WebhookRecord {
  const at = overrides.createdAt ?? T0 + seq;
  return {
    id: id('webhook'),
    environment,
    name: 'CRM',
    description: null,
    endpoint: 'https://example.com/hooks',
    eventTypes: ['user.created'],
    status: 'enabled',
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    lastError: null,
    createdAt: at,
    updatedAt: at,
    headers: {},
    timeoutMs: null,
    rateLimit: null,
    // Signing formats and endpoint auth (migration 18): a JWT webhook without secrets.
    format: 'jwt',
    signing: null,
    auth: null,
    // Ordered delivery per subject (migration 21).
    ordering: 'none',
    ...overrides,
  };
}

export function event(environment: string, overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    id: id('event'),
    environment,
    type: 'user.created',
    source: 'admin',
    data: { user: { id: 'kp_1', email: 'ada@example.com', tags: ['a', 'ü'] } },
    eventTimestamp: T0 - 5,
    createdAt: T0,
    ...overrides,
  };
}

export function attempt(deliveryId: string, webhookId: string, environment: string, success: boolean, startedAt: number): AttemptRecord {
  return {
    id: id('attempt'),
    deliveryId,
    webhookId,
    environment,
    startedAt,
    durationMs: 12.6,
    statusCode: success ? 200 : 500,
    errorKind: success ? null : 'status',
    errorMessage: success ? null : 'expected HTTP 200, got 500: boom',
    responseExcerpt: success ? 'ok' : 'boom',
    success,
  };
}

/** One outcome through the batch API. */
async function recordOne(s: Store, args: RecordAttemptArgs) {
  const [result] = await s.recordAttempts([args]);
  return result!;
}

export function describeStore(name: string, make: () => Promise<StoreUnderTest>): void {
  describe(`store contract: ${name}`, () => {
    let t: StoreUnderTest;
    let s: TestableStore;
    beforeEach(async () => {
      t = await make();
      s = t.store;
    });
    afterEach(async () => {
      await t?.close();
    });

    const ready = async () => {
      await s.migrate(T0);
      return s;
    };
    /** A webhook subscribed to user.created and one event fanned out to it. */
    const oneDelivery = async (environment = 'env_a', createdAt = T0) => {
      const hook = webhook(environment);
      await s.createWebhook(hook, { maxWebhooks: null });
      const ev = event(environment, { createdAt });
      const [delivery] = await s.insertEvent(ev, { newDeliveryId: () => id('msg') });
      return { hook, ev, delivery: delivery! };
    };

    test('migrate is idempotent and safe when several processes migrate at once', async () => {
      const others = await Promise.all([t.sibling(), t.sibling(), t.sibling()]);
      await Promise.all([s, ...others].map((x) => x.migrate(T0)));
      await Promise.all([s, ...others].map((x) => x.migrate(T0 + 1)));
      await s.createWebhook(webhook('env_a'), { maxWebhooks: null });
      expect(await others[2]!.listWebhooks('env_a')).toHaveLength(1);
    });

    describe('webhooks', () => {
      beforeEach(ready);

      test('round-trips every field, lists oldest first, and keeps environments apart', async () => {
        const a = webhook('env_a', { description: 'd', eventTypes: ['user.created', 'user.deleted'], createdAt: T0 + 2 });
        const b = webhook('env_a', { createdAt: T0 + 1, failingSince: T0 - 7, lastError: '500' });
        const other = webhook('env_b');
        for (const w of [a, b, other]) await s.createWebhook(w, { maxWebhooks: null });
        expect(await s.getWebhook('env_a', a.id)).toEqual(a);
        expect((await s.listWebhooks('env_a')).map((w) => w.id)).toEqual([b.id, a.id]);
        expect(await s.getWebhook('env_b', a.id)).toBeNull();
        expect((await s.listWebhooks('env_b')).map((w) => w.id)).toEqual([other.id]);
      });

      test('the cap holds when several processes create at once', async () => {
        const others = await Promise.all([t.sibling(), t.sibling()]);
        const tries = [s, ...others].flatMap((x) => [0, 1, 2].map(() => x.createWebhook(webhook('env_cap'), { maxWebhooks: 3 })));
        const results = await Promise.allSettled(tries);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(LimitReachedError);
        expect(await s.listWebhooks('env_cap')).toHaveLength(3);
        await s.createWebhook(webhook('env_other'), { maxWebhooks: 3 }); // per environment
      });

      test('update patches fields; missing or foreign webhooks give null', async () => {
        const w = webhook('env_a');
        await s.createWebhook(w, { maxWebhooks: null });
        const updated = await s.updateWebhook('env_a', w.id, { name: 'ERP', description: null, eventTypes: ['user.deleted'] }, T0 + 50);
        expect(updated).toEqual({ ...w, name: 'ERP', description: null, eventTypes: ['user.deleted'], updatedAt: T0 + 50 });
        expect(await s.updateWebhook('env_b', w.id, { name: 'x' }, T0)).toBeNull();
        expect(await s.updateWebhook('env_a', 'webhook_missing', { name: 'x' }, T0)).toBeNull();
      });

      test('an update that expects the sealed columns as read applies only while they still are', async () => {
        const w = webhook('env_a');
        await s.createWebhook(w, { maxWebhooks: null });
        const signing = { secret: 'sealed:v1:k:a:s1', previous: null, previousUntil: null, publicKey: null, privateKey: null };
        const headers = { 'X-Plain': 'p', Authorization: 'sealed:v1:k:a:h1' };
        const first = await s.updateWebhook('env_a', w.id, { format: 'standard-webhooks', signing, headers }, T0 + 1);
        expect(first).toMatchObject({ signing, headers });
        const asRead = { signing: first!.signing, auth: first!.auth, headers: first!.headers };
        const next = { ...signing, secret: 'sealed:v1:k:a:s2', previous: signing.secret, previousUntil: T0 + 99 };
        // Another writer got there first: nothing written, null.
        await s.updateWebhook('env_a', w.id, { headers: { ...headers, Authorization: 'sealed:v1:k:b:h1' } }, T0 + 2);
        expect(await s.updateWebhook('env_a', w.id, { signing: next, expect: asRead }, T0 + 3)).toBeNull();
        expect((await s.getWebhook('env_a', w.id))!.signing).toEqual(signing);
        // Read again: applied.
        const again = (await s.getWebhook('env_a', w.id))!;
        const done = await s.updateWebhook(
          'env_a',
          w.id,
          { signing: next, expect: { signing: again.signing, auth: again.auth, headers: again.headers } },
          T0 + 4,
        );
        expect(done).toMatchObject({ signing: next, headers: { Authorization: 'sealed:v1:k:b:h1' }, updatedAt: T0 + 4 });
        // Nothing sealed and nothing set: expected as empty, it applies.
        const plain = webhook('env_a');
        await s.createWebhook(plain, { maxWebhooks: null });
        expect(
          await s.updateWebhook('env_a', plain.id, { name: 'n', expect: { signing: null, auth: null, headers: {} } }, T0 + 5),
        ).toMatchObject({ name: 'n' });
        // The re-seal's listing finds a webhook whose only secret is a credential header.
        const withHeader = webhook('env_c');
        await s.createWebhook(withHeader, { maxWebhooks: null });
        await s.updateWebhook('env_c', withHeader.id, { headers: { Authorization: 'sealed:v1:k:a:h2' } }, T0 + 6);
        const listed = (await s.listWebhooksWithSecrets(null, 100)).map((x) => x.id);
        expect(listed).toContain(withHeader.id);
        expect(listed).toContain(w.id);
        expect(listed).not.toContain(plain.id);
      });

      test('delete takes deliveries and attempts with it; events stay', async () => {
        const { hook, ev, delivery } = await oneDelivery();
        await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
        await recordOne(s, {
          attempt: attempt(delivery.id, hook.id, 'env_a', false, T0),
          workerId: 'w1',
          now: T0,
          nextAttemptAt: T0 + 1000,
          disableAfterMs: DAY,
        });
        expect(await s.deleteWebhook('env_b', hook.id)).toBe(false);
        expect(await s.deleteWebhook('env_a', hook.id)).toBe(true);
        expect(await s.deleteWebhook('env_a', hook.id)).toBe(false);
        expect(await s.getDelivery('env_a', delivery.id)).toBeNull();
        expect(await s.listAttempts('env_a', delivery.id)).toEqual([]);
        expect(await s.getEvent('env_a', ev.id)).toEqual(ev);
        expect(await s.nextDueAt()).toBeNull();
      });

      test('disable holds pending deliveries; enable resumes them, or drops them', async () => {
        const { hook, delivery } = await oneDelivery();
        const disabled = await s.disableWebhook('env_a', hook.id, 'manual', T0 + 10);
        expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'manual', disabledAt: T0 + 10 });
        expect(await s.disableWebhook('env_a', hook.id, 'other', T0 + 20)).toEqual(disabled); // already disabled: unchanged
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({ status: 'held', nextAttemptAt: null });
        expect(await s.nextDueAt()).toBeNull();
        expect(await s.claimDue({ now: T0 + DAY, limit: 10, workerId: 'w1', leaseMs: LEASE })).toEqual([]);

        const enabled = await s.enableWebhook('env_a', hook.id, T0 + 30, true);
        expect(enabled).toMatchObject({ status: 'enabled', disabledReason: null, disabledAt: null, failingSince: null });
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({ status: 'pending', nextAttemptAt: T0 + 30 });

        await s.disableWebhook('env_a', hook.id, 'manual', T0 + 40);
        await s.enableWebhook('env_a', hook.id, T0 + 50, false);
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({ status: 'failed', lastResult: 'dropped', nextAttemptAt: null });
        expect(await s.disableWebhook('env_b', hook.id, 'manual', T0)).toBeNull();
        expect(await s.enableWebhook('env_b', hook.id, T0, true)).toBeNull();
      });
    });

    describe('events and deliveries', () => {
      beforeEach(ready);

      test('insertEvent fans out to the enabled, subscribed webhooks of its environment only', async () => {
        const yes = [webhook('env_a'), webhook('env_a', { eventTypes: ['user.deleted', 'user.created'] })];
        const no = [webhook('env_a', { eventTypes: ['user.deleted'] }), webhook('env_b'), webhook('env_a')];
        for (const w of [...yes, ...no]) await s.createWebhook(w, { maxWebhooks: null });
        await s.disableWebhook('env_a', no[2]!.id, 'manual', T0);
        const ev = event('env_a');
        const deliveries = await s.insertEvent(ev, { newDeliveryId: () => id('msg') });
        expect(deliveries.map((d) => d.webhookId).sort()).toEqual(yes.map((w) => w.id).sort());
        for (const d of deliveries) {
          expect(await s.getDelivery('env_a', d.id)).toEqual(d);
          expect(d).toMatchObject({ eventId: ev.id, status: 'pending', attemptCount: 0, nextAttemptAt: T0 });
          expect(await leaseOf(s, d.id)).toEqual({ workerId: null, until: null });
        }
        expect(await s.getEvent('env_a', ev.id)).toEqual(ev);
        expect(await s.getEvent('env_b', ev.id)).toBeNull();
        expect(await s.insertEvent(event('env_c'), { newDeliveryId: () => id('msg') })).toEqual([]);
      });

      test('insertEvent joins the host transaction: rollback leaves nothing, commit keeps both', async () => {
        if (!s.kysely) return expect(s.kysely).toBeUndefined(); // a non-SQL store has no host transaction
        await s.createWebhook(webhook('env_a'), { maxWebhooks: null });
        const lost = event('env_a');
        await expect(
          s.kysely.transaction().execute(async (trx) => {
            await s.insertEvent(lost, { newDeliveryId: () => id('msg'), transaction: trx });
            throw new Error('host rolls back');
          }),
        ).rejects.toThrow('host rolls back');
        expect(await s.getEvent('env_a', lost.id)).toBeNull();
        expect(await s.listDeliveries('env_a', {})).toEqual({ deliveries: [], next: null });

        const kept = event('env_a');
        const [d] = await s.kysely
          .transaction()
          .execute((trx) => s.insertEvent(kept, { newDeliveryId: () => id('msg'), transaction: trx }));
        expect(await s.getEvent('env_a', kept.id)).toEqual(kept);
        expect(await s.getDelivery('env_a', d!.id)).toMatchObject({ status: 'pending' });
        await expect(s.insertEvent(event('env_a'), { newDeliveryId: () => id('msg'), transaction: {} })).rejects.toThrow(TypeError);
      });

      test('listDeliveries: newest first, filtered, limited, scoped', async () => {
        const a = webhook('env_a', { eventTypes: ['user.created', 'user.deleted'] });
        const b = webhook('env_a');
        for (const w of [a, b]) await s.createWebhook(w, { maxWebhooks: null });
        const e1 = event('env_a', { createdAt: T0 });
        const e2 = event('env_a', { createdAt: T0 + 1000, type: 'user.deleted' });
        await s.insertEvent(e1, { newDeliveryId: () => id('msg') });
        await s.insertEvent(e2, { newDeliveryId: () => id('msg') });
        const list = async (filter: Parameters<Store['listDeliveries']>[1], env = 'env_a') =>
          (await s.listDeliveries(env, filter)).deliveries;
        const all = await list({});
        expect(all.map((d) => d.eventId)).toEqual([e2.id, e1.id, e1.id]);
        expect(all.map((d) => d.eventType)).toEqual(['user.deleted', 'user.created', 'user.created']);
        expect(await list({ webhookId: b.id })).toHaveLength(1);
        expect(await list({ eventId: e1.id })).toHaveLength(2);
        expect(await list({ eventType: 'user.deleted' })).toHaveLength(1);
        expect(await list({ limit: 1 })).toHaveLength(1);
        expect(await list({ status: 'delivered' })).toEqual([]);
        expect(await list({}, 'env_b')).toEqual([]);
        expect(await s.getDelivery('env_b', all[0]!.id)).toBeNull();
      });
    });

    describeLogContract(() => s, ready);
    describeNoticeContract(ready, () => t.sibling());
    describePaceContract(ready, () => t.sibling());
    describeOrderingContract(ready, () => t.sibling());
    describeTelemetryContract(ready);
    describeStatsContract(ready);
    describeActivityContract(ready);
    describePacksContract(ready, () => t.sibling());
    describePoisonContract(ready);
    describeDashboardContract(ready, () => t.sibling());
    describeSearchContract(ready);

    describe('claims and leases', () => {
      beforeEach(ready);

      test('claims only due work, oldest first, under a lease that holds the row until it runs out', async () => {
        const hook = webhook('env_a');
        await s.createWebhook(hook, { maxWebhooks: null });
        const due = [T0 + 300, T0 + 100, T0 + 200, T0 + 5000];
        const ids = [];
        for (const at of due) ids.push((await s.insertEvent(event('env_a', { createdAt: at }), { newDeliveryId: () => id('msg') }))[0]!.id);
        expect(await s.nextDueAt()).toBe(T0 + 100);

        const now = T0 + 1000;
        const claimed = await s.claimDue({ now, limit: 2, workerId: 'w1', leaseMs: LEASE });
        expect(claimed.map((c) => c.delivery.id)).toEqual([ids[1], ids[2]]);
        expect(claimed[0]!.webhook).toEqual(hook);
        expect(claimed[0]!.event.createdAt).toBe(T0 + 100);
        // The lease leaves the due time in place.
        expect(claimed[0]!.delivery).toMatchObject({ nextAttemptAt: T0 + 100, status: 'pending' });
        expect(claimed[0]!.dueAt).toBe(T0 + 100);
        // The lease comes with the claim, never on the public record.
        expect(claimed[0]!.lease).toEqual({ workerId: 'w1', until: now + LEASE });
        expect(claimed[0]!.delivery).not.toHaveProperty('lockedBy');
        expect(claimed[0]!.delivery).not.toHaveProperty('lockedUntil');
        expect(await leaseOf(s, ids[1]!)).toEqual({ workerId: 'w1', until: now + LEASE });

        const rest = await s.claimDue({ now, limit: 10, workerId: 'w2', leaseMs: LEASE });
        expect(rest.map((c) => c.delivery.id)).toEqual([ids[0]]); // the future one is not due
        expect(await s.claimDue({ now, limit: 10, workerId: 'w2', leaseMs: LEASE })).toEqual([]);
        expect(await s.getDelivery('env_a', ids[1]!)).toMatchObject({ nextAttemptAt: T0 + 100 });
        // The leased rows are passed over: the next due time is the future one's.
        expect(await s.nextDueAt()).toBe(T0 + 5000);
        expect(await s.nextDueAfter!(now)).toBe(T0 + 5000);
        // After it, nothing: a lease's end is not a due time (the scheduler's poll finds a lease
        // that ran out).
        expect(await s.nextDueAfter!(T0 + 5000)).toBe(null);

        // Up to the last millisecond of the leases, only the future one is due.
        const late = await s.claimDue({ now: now + LEASE - 1, limit: 10, workerId: 'w3', leaseMs: LEASE });
        expect(late.map((c) => c.delivery.id)).toEqual([ids[3]]);
        expect(await s.nextDueAt()).toBe(null);
        expect(await s.countDue(now + LEASE - 1)).toBe(0);
        expect(await s.countDue(now + LEASE)).toBe(3);

        // The lease runs out with nothing recorded: someone else claims it, same webhook-id, with
        // the due time it kept, the lag measured from it.
        const again = await s.claimDue({ now: now + LEASE, limit: 10, workerId: 'w4', leaseMs: LEASE });
        expect(new Map(again.map((c) => [c.delivery.id, c.dueAt]))).toEqual(
          new Map([
            [ids[0], T0 + 300],
            [ids[1], T0 + 100],
            [ids[2], T0 + 200],
          ]),
        );
        expect(await leaseOf(s, ids[1]!)).toEqual({ workerId: 'w4', until: now + 2 * LEASE });
      });

      test.each<[string, Partial<ClaimArgs>]>([
        ['leaving nothing out', {}],
        ['leaving a webhook out', { excludeWebhookIds: ['wh_none'] }],
        ['leaving a webhook out, along the due index', { excludeWebhookIds: ['wh_none'], byWebhook: false }],
      ])('reclaimBefore: a lease that ran out after it stays with its owner (%s)', async (_label, leaving) => {
        const hook = webhook('env_a');
        await s.createWebhook(hook, { maxWebhooks: null });
        const early = (await s.insertEvent(event('env_a', { createdAt: T0 }), { newDeliveryId: () => id('msg') }))[0]!.id;
        const late = (await s.insertEvent(event('env_a', { createdAt: T0 + 1 }), { newDeliveryId: () => id('msg') }))[0]!.id;
        await s.claimDue({ now: T0 + 10, limit: 1, workerId: 'w1', leaseMs: LEASE }); // early's lease runs out at T0 + 10 + LEASE
        await s.claimDue({ now: T0 + 500, limit: 1, workerId: 'w2', leaseMs: LEASE }); // late's at T0 + 500 + LEASE
        // Both ran out long ago (an outage); the store was last reached between the two ends.
        const args = { now: T0 + 10 * LEASE, limit: 10, workerId: 'w3', leaseMs: LEASE, ...leaving };
        expect((await s.claimDue({ ...args, reclaimBefore: T0 + 100 + LEASE })).map((c) => c.delivery.id)).toEqual([early]);
        expect(await s.claimDue({ ...args, reclaimBefore: T0 + 100 + LEASE })).toEqual([]);
        expect(await leaseOf(s, late)).toEqual({ workerId: 'w2', until: T0 + 500 + LEASE });
        // Without it (the grace over), taken.
        expect((await s.claimDue(args)).map((c) => c.delivery.id)).toEqual([late]);
      });

      /** A claim by w1 that leaves `busyId` and the environment env_b out, in the given form. */
      const claimLeaving = (now: number, busyId: string, byWebhook: boolean) =>
        s.claimDue({
          now,
          limit: 10,
          workerId: 'w1',
          leaseMs: LEASE,
          excludeWebhookIds: [busyId],
          excludeEnvironments: ['env_b'],
          byWebhook,
        });
      /** The webhooks of what a claim leaving nothing out takes after it, sorted. */
      const claimRest = async (now: number) =>
        (await s.claimDue({ now, limit: 10, workerId: 'w2', leaseMs: LEASE })).map((c) => c.webhook.id).sort();

      test.each([true, false])(
        'a claim leaving out webhooks and environments at once takes only the others, oldest first (byWebhook: %s)',
        async (byWebhook) => {
          const busy = webhook('env_a');
          const sibling = webhook('env_a');
          const full = webhook('env_b');
          const other = webhook('env_c');
          for (const w of [busy, sibling, full, other]) await s.createWebhook(w, { maxWebhooks: null });
          for (const [i, environment] of ['env_a', 'env_b', 'env_c', 'env_a', 'env_c'].entries())
            await s.insertEvent(event(environment, { createdAt: T0 + i }), { newDeliveryId: () => id('msg') });
          const claimed = await claimLeaving(T0 + 10, busy.id, byWebhook);
          // env_a's sibling (T0, T0 + 3) and env_c (T0 + 2, T0 + 4), oldest first; busy and env_b untouched.
          expect(claimed.map((c) => [c.webhook.id, c.event.createdAt])).toEqual([
            [sibling.id, T0],
            [other.id, T0 + 2],
            [sibling.id, T0 + 3],
            [other.id, T0 + 4],
          ]);
          expect(await claimRest(T0 + 10)).toEqual([busy.id, busy.id, full.id].sort());
        },
      );

      test.each([true, false])(
        'a claim leaving something out also takes leases that ran out, except those of what it leaves out (byWebhook: %s)',
        async (byWebhook) => {
          const busy = webhook('env_a');
          const sibling = webhook('env_a');
          const full = webhook('env_b');
          for (const w of [busy, sibling, full]) await s.createWebhook(w, { maxWebhooks: null });
          await s.insertEvent(event('env_a', { createdAt: T0 }), { newDeliveryId: () => id('msg') });
          await s.insertEvent(event('env_b', { createdAt: T0 + 1 }), { newDeliveryId: () => id('msg') });
          // A worker takes all three and dies: its leases run out at T0 + 101.
          expect(await s.claimDue({ now: T0 + 1, limit: 10, workerId: 'dead', leaseMs: 100 })).toHaveLength(3);
          await s.insertEvent(event('env_a', { createdAt: T0 + 500 }), { newDeliveryId: () => id('msg') });
          const claimed = await claimLeaving(T0 + 1000, busy.id, byWebhook);
          // The sibling's lease that ran out (due again at T0 + 101), then its new delivery; busy's and env_b's stay.
          expect(claimed.map((c) => [c.webhook.id, c.event.createdAt])).toEqual([
            [sibling.id, T0],
            [sibling.id, T0 + 500],
          ]);
          expect(claimed.map((c) => c.lease.workerId)).toEqual(['w1', 'w1']);
          expect(await claimRest(T0 + 1000)).toEqual([busy.id, busy.id, full.id].sort());
        },
      );

      test('excludeWebhookIds leaves a saturated webhook to others', async () => {
        const busy = webhook('env_a');
        const idle = webhook('env_a');
        for (const w of [busy, idle]) await s.createWebhook(w, { maxWebhooks: null });
        await s.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
        const claimed = await s.claimDue({ now: T0, limit: 10, workerId: 'w1', leaseMs: LEASE, excludeWebhookIds: [busy.id] });
        expect(claimed.map((c) => c.webhook.id)).toEqual([idle.id]);
      });

      test.each([
        ['', false],
        [', leaving a webhook out (claimed per webhook)', true],
      ])('concurrent claimers from several processes never get the same delivery%s', async (_, leavingOut) => {
        const hook = webhook('env_a');
        await s.createWebhook(hook, { maxWebhooks: null });
        // The webhook left out has a delivery of every event too: none of them may be claimed.
        const left = webhook('env_a');
        if (leavingOut) await s.createWebhook(left, { maxWebhooks: null });
        const total = 240;
        const expected = new Set<string>();
        for (let i = 0; i < total; i += 40) {
          await Promise.all(
            Array.from({ length: 40 }, async (_, k) => {
              const ds = await s.insertEvent(event('env_a', { createdAt: T0 + i + k }), { newDeliveryId: () => id('msg') });
              expect(ds).toHaveLength(leavingOut ? 2 : 1);
              expected.add(ds.find((d) => d.webhookId === hook.id)!.id);
            }),
          );
        }
        const workers = [s, ...(await Promise.all([t.sibling(), t.sibling(), t.sibling()]))];
        const got: string[][] = workers.map(() => []);
        await Promise.all(
          workers.map(async (w, i) => {
            for (let round = 0; round < total; round++) {
              const batch = await w.claimDue({
                now: T0 + total,
                limit: 7,
                workerId: `w${i}`,
                leaseMs: LEASE,
                ...(leavingOut ? { excludeWebhookIds: [left.id] } : {}),
              });
              if (batch.length === 0) break;
              got[i]!.push(...batch.map((c) => c.delivery.id));
            }
          }),
        );
        const all = got.flat();
        expect(all).toHaveLength(total);
        expect(new Set(all)).toEqual(expected);
      });

      test("release gives back only this worker's pending claims, due now", async () => {
        const { delivery } = await oneDelivery();
        await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
        await s.release([delivery.id], 'w2', T0 + 5);
        expect(await leaseOf(s, delivery.id)).toEqual({ workerId: 'w1', until: T0 + LEASE });
        await s.release([delivery.id], 'w1', T0 + 5);
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({ nextAttemptAt: T0 + 5, status: 'pending' });
        expect(await leaseOf(s, delivery.id)).toEqual({ workerId: null, until: null });
        expect((await s.claimDue({ now: T0 + 5, limit: 1, workerId: 'w2', leaseMs: LEASE }))[0]?.delivery.id).toBe(delivery.id);
        await s.release([], 'w2', T0);
      });
    });

    describe('attempts', () => {
      beforeEach(ready);

      test("success delivers, clears the lease and the webhook's failing state", async () => {
        const { hook, delivery } = await oneDelivery();
        await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
        await recordOne(s, {
          attempt: attempt(delivery.id, hook.id, 'env_a', false, T0),
          workerId: 'w1',
          now: T0 + 1,
          nextAttemptAt: T0 + 1000,
          disableAfterMs: DAY,
        });
        expect(await s.getWebhook('env_a', hook.id)).toMatchObject({ failingSince: T0, lastError: 'expected HTTP 200, got 500: boom' });
        await s.claimDue({ now: T0 + 1000, limit: 1, workerId: 'w1', leaseMs: LEASE });
        const ok = attempt(delivery.id, hook.id, 'env_a', true, T0 + 1000);
        expect(await recordOne(s, { attempt: ok, workerId: 'w1', now: T0 + 1001, nextAttemptAt: null, disableAfterMs: DAY })).toEqual({
          disabled: null,
        });
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({
          status: 'delivered',
          attemptCount: 2,
          nextAttemptAt: null,
          lastAttemptAt: T0 + 1000,
          lastResult: '200',
        });
        expect(await leaseOf(s, delivery.id)).toEqual({ workerId: null, until: null });
        expect(await s.getWebhook('env_a', hook.id)).toMatchObject({ failingSince: null, lastError: null });
        const attempts = await s.listAttempts('env_a', delivery.id);
        expect(attempts.map((a) => a.success)).toEqual([false, true]);
        expect(attempts[1]).toEqual({ ...ok, durationMs: 13 });
        expect(await s.listAttempts('env_b', delivery.id)).toEqual([]);
        expect(await s.nextDueAt()).toBeNull();
      });

      test('failure schedules the next try, keeps the first failing_since, fails when retries end', async () => {
        const { hook, delivery } = await oneDelivery();
        for (const [i, nextAttemptAt] of [T0 + 100, T0 + 300, null].entries()) {
          const now = T0 + i * 100;
          expect(await s.claimDue({ now: i === 2 ? T0 + 300 : now, limit: 1, workerId: 'w1', leaseMs: LEASE })).toHaveLength(1);
          await recordOne(s, {
            attempt: attempt(delivery.id, hook.id, 'env_a', false, now),
            workerId: 'w1',
            now,
            nextAttemptAt,
            disableAfterMs: DAY,
          });
          const d = await s.getDelivery('env_a', delivery.id);
          expect(d).toMatchObject({
            attemptCount: i + 1,
            nextAttemptAt: nextAttemptAt,
            status: nextAttemptAt === null ? 'failed' : 'pending',
            lastResult: '500',
          });
        }
        expect((await s.getWebhook('env_a', hook.id))?.failingSince).toBe(T0);
        expect(await s.nextDueAt()).toBeNull();
      });

      test('a worker that lost its lease records the attempt but does not change the delivery', async () => {
        const { hook, delivery } = await oneDelivery();
        await s.claimDue({ now: T0, limit: 1, workerId: 'slow', leaseMs: LEASE });
        await s.claimDue({ now: T0 + LEASE, limit: 1, workerId: 'fast', leaseMs: LEASE });
        await recordOne(s, {
          attempt: attempt(delivery.id, hook.id, 'env_a', true, T0),
          workerId: 'slow',
          now: T0 + LEASE + 1,
          nextAttemptAt: null,
          disableAfterMs: DAY,
        });
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({ status: 'pending', attemptCount: 0 });
        expect((await leaseOf(s, delivery.id)).workerId).toBe('fast');
        expect(await s.listAttempts('env_a', delivery.id)).toHaveLength(1);
      });

      describe('outcome fencing: fenced on the claim, not on the lease running out', () => {
        // A lone success takes the adapter's own path (recordGroup); a failure, or a success beside
        // a failure in one group, the shared one (kysely/outcomes.ts).
        test.each([
          ['a lone success', [true]],
          ['a failure', [false]],
          ['a success grouped with a failure', [true, false]],
        ] as const)('%s recorded after its lease ran out counts, unless the delivery was claimed again since', async (_label, outcomes) => {
          const hook = webhook('env_a');
          await s.createWebhook(hook, { maxWebhooks: null });
          const ids: string[] = [];
          for (const [i] of outcomes.entries()) {
            const [d] = await s.insertEvent(event('env_a', { createdAt: T0 + i }), { newDeliveryId: () => id('msg') });
            ids.push(d!.id);
          }
          const claimed = await s.claimDue({ now: T0 + 10, limit: 10, workerId: 'w1', leaseMs: LEASE });
          expect(claimed.map((c) => c.delivery.id).sort()).toEqual([...ids].sort());
          const leaseUntil = claimed[0]!.lease.until;
          expect(leaseUntil).toBe(T0 + 10 + LEASE);
          // Long after the lease ran out (a database outage), nobody having claimed them: recorded.
          const late = leaseUntil + 10 * LEASE;
          const group = ids.map((deliveryId, i) => ({
            attempt: attempt(deliveryId, hook.id, 'env_a', outcomes[i]!, T0 + 10),
            workerId: 'w1',
            now: late,
            nextAttemptAt: late + 1000,
            disableAfterMs: DAY,
            leaseUntil,
          }));
          await s.recordAttempts(group);
          for (const [i, deliveryId] of ids.entries()) {
            expect(await s.getDelivery('env_a', deliveryId)).toMatchObject({
              status: outcomes[i] ? 'delivered' : 'pending',
              attemptCount: 1,
            });
            expect(await leaseOf(s, deliveryId)).toEqual({ workerId: null, until: null });
          }

          // Now the same worker (one process) claims a failed one again after its lease ran out:
          // the first claim's outcome, recorded late, must not settle the second claim's attempt.
          const failed = ids.filter((_, i) => !outcomes[i]);
          const again = late + 1000;
          const pending = await s.claimDue({ now: again, limit: 10, workerId: 'w1', leaseMs: LEASE });
          expect(pending.map((c) => c.delivery.id).sort()).toEqual([...failed].sort());
          const first = pending.map((c) => ({ id: c.delivery.id, until: c.lease.until }));
          const reclaimed = await s.claimDue({ now: again + LEASE, limit: 10, workerId: 'w1', leaseMs: LEASE });
          expect(reclaimed).toHaveLength(failed.length);
          for (const { id: deliveryId, until } of first) {
            await recordOne(s, {
              attempt: attempt(deliveryId, hook.id, 'env_a', true, again),
              workerId: 'w1',
              now: again + LEASE + 1,
              nextAttemptAt: null,
              disableAfterMs: DAY,
              leaseUntil: until,
            });
            // The stale claim's attempt is kept in the history, the delivery left to the new claim.
            expect(await s.getDelivery('env_a', deliveryId)).toMatchObject({ status: 'pending', attemptCount: 1 });
            expect(await leaseOf(s, deliveryId)).toEqual({ workerId: 'w1', until: again + 2 * LEASE });
            expect(await s.listAttempts('env_a', deliveryId)).toHaveLength(2);
          }
          for (const c of reclaimed) {
            await recordOne(s, {
              attempt: attempt(c.delivery.id, hook.id, 'env_a', true, again + LEASE),
              workerId: 'w1',
              now: again + LEASE + 2,
              nextAttemptAt: null,
              disableAfterMs: DAY,
              leaseUntil: c.lease.until,
            });
            expect(await s.getDelivery('env_a', c.delivery.id)).toMatchObject({ status: 'delivered', attemptCount: 2 });
          }
        });
      });

      test('recording the same attempt twice (a retried commit) counts it once', async () => {
        const { hook, delivery } = await oneDelivery();
        await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
        const a = attempt(delivery.id, hook.id, 'env_a', false, T0);
        await recordOne(s, { attempt: a, workerId: 'w1', now: T0, nextAttemptAt: T0 + 100, disableAfterMs: DAY });
        await recordOne(s, { attempt: a, workerId: 'w1', now: T0, nextAttemptAt: T0 + 100, disableAfterMs: DAY });
        expect(await s.listAttempts('env_a', delivery.id)).toHaveLength(1);
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({ attemptCount: 1 });
      });

      test('a group of successes delivers each once, heals failing webhooks, and a retried commit of it changes nothing more', async () => {
        const failing = webhook('env_a', { failingSince: T0 - DAY, lastError: 'HTTP 500' });
        const healthy = webhook('env_a');
        for (const h of [failing, healthy]) await s.createWebhook(h, { maxWebhooks: null });
        const first = await s.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
        const second = await s.insertEvent(event('env_a', { createdAt: T0 + 1 }), { newDeliveryId: () => id('msg') });
        expect(await s.claimDue({ now: T0 + 5, limit: 10, workerId: 'w1', leaseMs: LEASE })).toHaveLength(4);
        const now = T0 + 20;
        const group = [...first, ...second].map((d, i) => ({
          attempt: attempt(d.id, d.webhookId, 'env_a', true, T0 + 10 + i),
          workerId: 'w1',
          now,
          nextAttemptAt: null,
          disableAfterMs: DAY,
        }));
        expect(await s.recordAttempts(group)).toEqual(group.map(() => ({ disabled: null })));
        for (const [i, d] of [...first, ...second].entries()) {
          expect(await s.getDelivery('env_a', d.id)).toMatchObject({
            status: 'delivered',
            attemptCount: 1,
            nextAttemptAt: null,
            lastAttemptAt: T0 + 10 + i,
            lastResult: '200',
            lastError: null,
            updatedAt: now,
          });
          expect(await leaseOf(s, d.id)).toEqual({ workerId: null, until: null });
          expect((await s.listAttempts('env_a', d.id)).map((a) => a.id)).toEqual([group[i]!.attempt.id]);
        }
        expect(await s.getWebhook('env_a', failing.id)).toMatchObject({ failingSince: null, lastError: null });
        // The webhook fails again; then the group's commit is retried (its reply was lost): the
        // attempts are already there, so nothing is counted twice and the new failure stands.
        const [later] = await s.insertEvent(event('env_a', { createdAt: T0 + 30 }), {
          newDeliveryId: () => id('msg'),
          webhookIds: [failing.id],
        });
        await s.claimDue({ now: T0 + 30, limit: 10, workerId: 'w1', leaseMs: LEASE });
        await recordOne(s, {
          attempt: attempt(later!.id, failing.id, 'env_a', false, T0 + 30),
          workerId: 'w1',
          now: T0 + 31,
          nextAttemptAt: T0 + 1000,
          disableAfterMs: DAY,
        });
        expect(await s.recordAttempts(group)).toEqual(group.map(() => ({ disabled: null })));
        expect(await s.getWebhook('env_a', failing.id)).toMatchObject({ failingSince: T0 + 30 });
        for (const d of [...first, ...second]) {
          expect(await s.getDelivery('env_a', d.id)).toMatchObject({ status: 'delivered', attemptCount: 1 });
          expect(await s.listAttempts('env_a', d.id)).toHaveLength(1);
        }
      });

      test('a failure landing disableAfterMs after failing_since disables the webhook once and holds its work', async () => {
        const { hook, delivery } = await oneDelivery();
        const [other] = await s.insertEvent(event('env_a', { createdAt: T0 + 4 * DAY }), { newDeliveryId: () => id('msg') });
        await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
        const first = await recordOne(s, {
          attempt: attempt(delivery.id, hook.id, 'env_a', false, T0),
          workerId: 'w1',
          now: T0,
          nextAttemptAt: T0 + 3 * DAY,
          disableAfterMs: 3 * DAY,
        });
        expect(first.disabled).toBeNull();
        await s.claimDue({ now: T0 + 3 * DAY, limit: 1, workerId: 'w1', leaseMs: LEASE });
        const now = T0 + 3 * DAY + 5;
        const { disabled } = await recordOne(s, {
          attempt: attempt(delivery.id, hook.id, 'env_a', false, now),
          workerId: 'w1',
          now,
          nextAttemptAt: now + DAY,
          disableAfterMs: 3 * DAY,
        });
        expect(disabled).toMatchObject({ id: hook.id, status: 'disabled', disabledReason: 'failing', disabledAt: now, failingSince: T0 });
        expect(await s.getDelivery('env_a', delivery.id)).toMatchObject({ status: 'held', nextAttemptAt: null, attemptCount: 2 });
        expect(await s.getDelivery('env_a', other!.id)).toMatchObject({ status: 'held' });
        const late = await recordOne(s, {
          attempt: attempt(other!.id, hook.id, 'env_a', false, now + 1),
          workerId: 'w1',
          now: now + 1,
          nextAttemptAt: null,
          disableAfterMs: 3 * DAY,
        });
        expect(late.disabled).toBeNull(); // already disabled: the notifier is called once
        // The disabling record retried (its commit's reply lost) answers the same.
        const last = (await s.listAttempts('env_a', delivery.id)).at(-1)!;
        const retried = await recordOne(s, { attempt: last, workerId: 'w1', now, nextAttemptAt: now + DAY, disableAfterMs: 3 * DAY });
        expect(retried.disabled).toEqual(disabled);
        expect(await s.listAttempts('env_a', delivery.id)).toHaveLength(2);
      });

      test('a batch is recorded in one call, each item with its own consequences, answers in order', async () => {
        const healthy = webhook('env_a');
        const dying = webhook('env_a', { failingSince: T0 - 4 * DAY });
        const gone = webhook('env_a');
        for (const h of [healthy, dying, gone]) await s.createWebhook(h, { maxWebhooks: null });
        const deliveries = await s.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
        const of = (h: WebhookRecord) => deliveries.find((d) => d.webhookId === h.id)!;
        expect(await s.claimDue({ now: T0, limit: 10, workerId: 'w1', leaseMs: LEASE })).toHaveLength(3);
        await s.deleteWebhook('env_a', gone.id);
        const now = T0 + 10;
        const results = await s.recordAttempts([
          {
            attempt: attempt(of(dying).id, dying.id, 'env_a', false, now),
            workerId: 'w1',
            now,
            nextAttemptAt: now + DAY,
            disableAfterMs: 3 * DAY,
          },
          { attempt: attempt(of(gone).id, gone.id, 'env_a', true, now), workerId: 'w1', now, nextAttemptAt: null, disableAfterMs: 3 * DAY },
          {
            attempt: attempt(of(healthy).id, healthy.id, 'env_a', true, now),
            workerId: 'w1',
            now,
            nextAttemptAt: null,
            disableAfterMs: 3 * DAY,
          },
        ]);
        expect(results.map((r) => r.disabled?.id ?? null)).toEqual([dying.id, null, null]);
        expect(await s.getDelivery('env_a', of(healthy).id)).toMatchObject({ status: 'delivered', attemptCount: 1 });
        expect(await s.getDelivery('env_a', of(dying).id)).toMatchObject({ status: 'held', attemptCount: 1 });
        expect(await s.getWebhook('env_a', dying.id)).toMatchObject({ status: 'disabled', disabledReason: 'failing' });
        expect(await s.getDelivery('env_a', of(gone).id)).toBeNull();
        expect(await s.recordAttempts([])).toEqual([]);
      });

      test('a group of successes by one worker: a held delivery is delivered; a lost lease, a deleted delivery and a repeat change nothing more', async () => {
        // Both adapters take such a group by a path of their own (PostgreSQL one statement,
        // SQLite one transaction of row statements): the same rules as any other group.
        const dying = webhook('env_a', { failingSince: T0 - 4 * DAY });
        const healthy = webhook('env_a');
        const gone = webhook('env_a');
        for (const h of [dying, healthy, gone]) await s.createWebhook(h, { maxWebhooks: null });
        const first = await s.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
        const second = await s.insertEvent(event('env_a', { createdAt: T0 + 1 }), { newDeliveryId: () => id('msg') });
        const of = (ds: DeliveryRecord[], h: WebhookRecord) => ds.find((d) => d.webhookId === h.id)!.id;
        expect(await s.claimDue({ now: T0 + 5, limit: 10, workerId: 'w1', leaseMs: LEASE })).toHaveLength(6);
        // The dying webhook's first delivery fails for good: the webhook is disabled and its
        // second delivery, still in flight, is held.
        const failed = await recordOne(s, {
          attempt: attempt(of(first, dying), dying.id, 'env_a', false, T0 + 6),
          workerId: 'w1',
          now: T0 + 6,
          nextAttemptAt: T0 + DAY,
          disableAfterMs: 3 * DAY,
        });
        expect(failed.disabled?.id).toBe(dying.id);
        expect(await s.getDelivery('env_a', of(second, dying))).toMatchObject({ status: 'held' });
        await s.release([of(second, healthy)], 'w1', T0 + 7); // this worker no longer holds it
        await s.deleteWebhook('env_a', gone.id);

        const now = T0 + 20;
        const success = (deliveryId: string, webhookId: string, startedAt: number) => ({
          attempt: attempt(deliveryId, webhookId, 'env_a', true, startedAt),
          workerId: 'w1',
          now,
          nextAttemptAt: null,
          disableAfterMs: 3 * DAY,
        });
        const group = [
          success(of(second, dying), dying.id, T0 + 10),
          success(of(first, healthy), healthy.id, T0 + 11),
          success(of(first, healthy), healthy.id, T0 + 12), // a second attempt of the same delivery
          success(of(second, healthy), healthy.id, T0 + 13),
          success(of(first, gone), gone.id, T0 + 14),
        ];
        const check = async () => {
          expect(await s.getDelivery('env_a', of(second, dying))).toMatchObject({
            status: 'delivered',
            attemptCount: 1,
            nextAttemptAt: null,
            lastAttemptAt: T0 + 10,
            lastResult: '200',
            updatedAt: now,
          });
          expect(await leaseOf(s, of(second, dying))).toEqual({ workerId: null, until: null });
          expect(await s.getWebhook('env_a', dying.id)).toMatchObject({ status: 'disabled', failingSince: null, lastError: null });
          expect(await s.getDelivery('env_a', of(first, healthy))).toMatchObject({
            status: 'delivered',
            attemptCount: 1,
            lastResult: '200',
          });
          expect((await s.listAttempts('env_a', of(first, healthy))).map((a) => a.id).sort()).toEqual(
            [group[1]!.attempt.id, group[2]!.attempt.id].sort(),
          );
          expect(await s.getDelivery('env_a', of(second, healthy))).toMatchObject({
            status: 'pending',
            attemptCount: 0,
            lastAttemptAt: null,
          });
          expect((await s.listAttempts('env_a', of(second, healthy))).map((a) => a.id)).toEqual([group[3]!.attempt.id]);
          expect(await s.getDelivery('env_a', of(first, gone))).toBeNull();
          expect(await s.listAttempts('env_a', of(first, gone))).toEqual([]);
        };
        expect(await s.recordAttempts(group)).toEqual(group.map(() => ({ disabled: null })));
        await check();
        // The group's commit retried (its reply was lost): the same answers, nothing counted twice.
        expect(await s.recordAttempts(group)).toEqual(group.map(() => ({ disabled: null })));
        await check();
      });

      test('an attempt for a delivery deleted meanwhile is dropped quietly', async () => {
        const { hook, delivery } = await oneDelivery();
        await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
        await s.deleteWebhook('env_a', hook.id);
        expect(
          await recordOne(s, {
            attempt: attempt(delivery.id, hook.id, 'env_a', true, T0),
            workerId: 'w1',
            now: T0,
            nextAttemptAt: null,
            disableAfterMs: DAY,
          }),
        ).toEqual({
          disabled: null,
        });
      });
    });
  });
}
