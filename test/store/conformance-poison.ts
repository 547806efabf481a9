import { beforeEach, describe, expect, test } from 'vitest';
import { MAX_DEPTH } from '../../src/emit.js';
import type { Store } from '../../src/store.js';
import { description as validDescription, endpoint as validEndpoint, name as validName } from '../../src/validate.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';

const DAY = 24 * 3600_000;
/**
 * The largest time emit accepts for `eventTimestamp` (src/emit.ts: a safe integer within the
 * Date range, ±8.64e15 ms), and the largest a Date can hold.
 */
const MAX_TIME = 8.64e15;

/**
 * Text an account holder may store that a database could read as something else: astral characters
 * (surrogate pairs in JavaScript, 4-byte UTF-8), quotes, backslashes, LIKE wildcards, SQL.
 */
const NAME = `Acme 𝔸𝕔𝕞𝕖 😀 "q" 'q' \`q\` \\n\\ 100% a_b '; drop table iw_webhooks; --`;
const DESCRIPTION = `it's "fine"\\\r\n\t%_%\n' or '1'='1\n$1 $$ \\x00 ${'𝄞'.repeat(50)} /* */ -- ; select pg_sleep(10);`;
/** The name backwards, by code point (its surrogate pairs kept whole). */
const REVERSED = [...NAME].reverse().join('');
/** An endpoint as the engine stores it: normalised by `new URL` (validate.endpoint). */
const ENDPOINT = new URL(`https://例え.jp/a_b/%25/100%/ü?q='x' OR 1=1;--&p=100%&u=_&s=\\&e=😀`).href;

/**
 * `levels` levels of objects and arrays (the outermost counts as one, as emit counts `data`),
 * keys in several scripts, quotes, backslashes, LIKE wildcards, NUL and lone surrogates (JSON
 * escapes both, so emit takes them) at every level, and numbers at the edges of a double.
 */
function nestedData(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { '🔑': 'leaf 😀', ключ: null, 'a"b\\c': 5e-324 };
  for (let i = 2; i < levels; i++)
    value = { [`鍵${i}`]: value, '%': `${i}%`, _: i, '': 'empty key', 'x\u0000y': '\u0000', '\ud800': '\udfff' };
  return { numbers: [1, -2.5, 1e308, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER], '😀': value };
}

/** Depth of `value` in objects and arrays, the way emit counts it (`data` itself is level 1). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/**
 * Hostile inputs at the store contract itself, run by describeStore on every adapter, so SQLite
 * and PostgreSQL are held to the same answers (the engine's own guards are covered by
 * test/security/poison.test.ts): ids and environments no record can have (NUL, lone surrogates,
 * LIKE wildcards) find nothing and never throw; text, times at the edge emit allows and data as
 * deep as emit allows come back exactly as written.
 */
export function describePoisonContract(ready: () => Promise<Store>): void {
  describe('hostile inputs', () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });

    test('names, descriptions, endpoints and errors with astral characters, quotes, backslashes, % and _ come back byte-identical', async () => {
      // The engine's own validation takes them unchanged: a store must too.
      expect([validName(NAME), validName(REVERSED), validDescription(DESCRIPTION), validEndpoint(ENDPOINT)]).toEqual([
        NAME,
        REVERSED,
        DESCRIPTION,
        ENDPOINT,
      ]);
      const hook = webhook('env_a', {
        name: NAME,
        description: DESCRIPTION,
        endpoint: ENDPOINT,
        failingSince: T0 - 4 * DAY,
        lastError: NAME,
      });
      await s.createWebhook(hook, { maxWebhooks: null });
      expect(await s.getWebhook('env_a', hook.id)).toEqual(hook);
      expect(await s.listWebhooks('env_a')).toEqual([hook]);
      // A neighbour whose name differs only where a LIKE would not see it.
      const lookalike = webhook('env_a', { name: NAME.replaceAll('%', 'x').replaceAll('_', 'y') });
      await s.createWebhook(lookalike, { maxWebhooks: null });
      expect(await s.listWebhooks('env_a')).toEqual([hook, lookalike]);

      const patched = await s.updateWebhook(
        'env_a',
        hook.id,
        { name: REVERSED, description: NAME, endpoint: `${ENDPOINT}&more=%25_` },
        T0 + 1,
      );
      expect(patched).toEqual({
        ...hook,
        name: REVERSED,
        description: NAME,
        endpoint: `${ENDPOINT}&more=%25_`,
        updatedAt: T0 + 1,
      });
      expect(await s.getWebhook('env_a', hook.id)).toEqual(patched);
      const back = await s.updateWebhook('env_a', hook.id, { name: NAME, description: DESCRIPTION, endpoint: ENDPOINT }, T0 + 2);
      expect(back).toEqual({ ...hook, updatedAt: T0 + 2 });

      // Through a claim, an attempt with a hostile error and response, the disable and its notice.
      const [delivery] = await s.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
      const deliveryId = delivery!.id;
      const claimed = await s.claimDue({ now: T0 + 3, limit: 10, workerId: 'w1', leaseMs: LEASE });
      expect(claimed.find((c) => c.delivery.id === deliveryId)!.webhook).toEqual(back);
      const failed = { ...attempt(deliveryId, hook.id, 'env_a', false, T0 + 3), errorMessage: DESCRIPTION, responseExcerpt: NAME };
      const [result] = await s.recordAttempts([
        { attempt: failed, workerId: 'w1', now: T0 + 4, nextAttemptAt: T0 + DAY, disableAfterMs: 3 * DAY },
      ]);
      expect(result!.disabled).toMatchObject({ name: NAME, description: DESCRIPTION, endpoint: ENDPOINT, lastError: DESCRIPTION });
      expect(await s.listAttempts('env_a', deliveryId)).toEqual([{ ...failed, durationMs: 13 }]);
      expect((await s.getDelivery('env_a', deliveryId))!.lastError).toBe(DESCRIPTION);
      const [notice] = await s.listNotices({ environment: 'env_a', limit: 10 });
      expect(notice!.info.webhook).toEqual(result!.disabled);
      expect(notice!.info.lastError).toBe(DESCRIPTION);
      const [held] = await s.claimNotices({ now: T0 + 5, limit: 1, workerId: 'w1', leaseMs: LEASE });
      expect(await s.finishNotice(held!.id, 'w1', { now: T0 + 6, sent: false, nextAttemptAt: T0 + DAY, error: NAME })).toBe(true);
      expect((await s.listNotices({ environment: 'env_a', limit: 10 }))[0]!.lastError).toBe(NAME);
    });

    test('event types and environments with _ match exactly: fan-out and the log filter are not LIKE patterns', async () => {
      const exact = webhook('env__', { eventTypes: ['org_member.added'] });
      const other = webhook('env__', { eventTypes: ['orgxmember.added'] });
      const elsewhere = webhook('env_x', { eventTypes: ['org_member.added', 'orgxmember.added'] });
      for (const w of [exact, other, elsewhere]) await s.createWebhook(w, { maxWebhooks: null });
      const underscored = await s.insertEvent(event('env__', { type: 'org_member.added' }), { newDeliveryId: () => id('msg') });
      expect(underscored.map((d) => d.webhookId)).toEqual([exact.id]);
      const plain = await s.insertEvent(event('env__', { type: 'orgxmember.added' }), { newDeliveryId: () => id('msg') });
      expect(plain.map((d) => d.webhookId)).toEqual([other.id]);
      const log = async (eventType: string) => (await s.listDeliveries('env__', { eventType })).deliveries.map((d) => d.id);
      expect(await log('org_member.added')).toEqual(underscored.map((d) => d.id));
      expect(await log('org%member.added')).toEqual([]);
      expect(await log('org_member.%')).toEqual([]);
      expect((await s.listWebhooks('env__')).map((w) => w.id).sort()).toEqual([exact.id, other.id].sort());
      expect(await s.listWebhooks('env_%')).toEqual([]);
    });

    test('times at the largest (and smallest) value emit accepts are stored and read back exactly, through claims and pages', async () => {
      // What emit's bound is: the edge of the Date range, where one more millisecond is no time at all.
      expect(new Date(MAX_TIME).getTime()).toBe(MAX_TIME);
      expect(new Date(MAX_TIME + 1).getTime()).toBeNaN();
      const hook = webhook('env_a', { createdAt: MAX_TIME - 2, updatedAt: MAX_TIME, failingSince: MAX_TIME - 1, lastError: 'x' });
      const early = webhook('env_a', { createdAt: -MAX_TIME, updatedAt: -MAX_TIME });
      for (const w of [hook, early]) await s.createWebhook(w, { maxWebhooks: null });
      expect(await s.getWebhook('env_a', hook.id)).toEqual(hook);
      expect((await s.listWebhooks('env_a')).map((w) => w.id)).toEqual([early.id, hook.id]);

      const last = event('env_a', { eventTimestamp: MAX_TIME, createdAt: MAX_TIME });
      const first = event('env_a', { eventTimestamp: -MAX_TIME, createdAt: MAX_TIME - 1 });
      const lastDeliveries = await s.insertEvent(last, { newDeliveryId: () => id('msg') });
      await s.insertEvent(first, { newDeliveryId: () => id('msg') });
      expect(await s.getEvent('env_a', last.id)).toEqual(last);
      expect(await s.getEvent('env_a', first.id)).toEqual(first);
      for (const d of lastDeliveries) {
        expect(await s.getDelivery('env_a', d.id)).toEqual(d);
        expect(d).toMatchObject({ createdAt: MAX_TIME, updatedAt: MAX_TIME, nextAttemptAt: MAX_TIME });
      }
      expect(await s.nextDueAt()).toBe(MAX_TIME - 1);
      expect(await s.countDue(MAX_TIME)).toBe(4);

      // Pages one at a time: the cursor carries the largest time and finds the rest.
      const walked: number[] = [];
      let after = null;
      do {
        const page: Awaited<ReturnType<Store['listDeliveries']>> = await s.listDeliveries('env_a', { limit: 1, after });
        walked.push(...page.deliveries.map((d) => d.createdAt));
        after = page.next;
      } while (after);
      expect(walked).toEqual([MAX_TIME, MAX_TIME, MAX_TIME - 1, MAX_TIME - 1]);

      const claimed = await s.claimDue({ now: MAX_TIME, limit: 10, workerId: 'w1', leaseMs: LEASE });
      expect(claimed).toHaveLength(4);
      for (const c of claimed) {
        expect(c.lease).toEqual({ workerId: 'w1', until: MAX_TIME + LEASE });
        expect(c.delivery.nextAttemptAt).toBe(c.event.createdAt);
        expect(c.event).toEqual(c.event.id === last.id ? last : first);
        expect(c.dueAt).toBe(c.event.createdAt);
      }
      const mine = claimed.find((c) => c.webhook.id === hook.id && c.event.id === last.id)!;
      const ok = attempt(mine.delivery.id, hook.id, 'env_a', true, MAX_TIME);
      await s.recordAttempts([{ attempt: ok, workerId: 'w1', now: MAX_TIME + 1, nextAttemptAt: null, disableAfterMs: DAY }]);
      expect(await s.getDelivery('env_a', mine.delivery.id)).toMatchObject({
        status: 'delivered',
        lastAttemptAt: MAX_TIME,
        updatedAt: MAX_TIME + 1,
      });
      expect(await s.listAttempts('env_a', mine.delivery.id)).toEqual([{ ...ok, durationMs: 13 }]);
    });

    test(`data nested ${MAX_DEPTH} levels deep (the most emit accepts) with unicode keys comes back exactly, key order included`, async () => {
      await s.createWebhook(webhook('env_a'), { maxWebhooks: null });
      // What emit stores: the host's data through JSON (src/emit.ts), so no undefined or -0 can be in it.
      const data = JSON.parse(JSON.stringify(nestedData(MAX_DEPTH))) as Record<string, unknown>;
      expect(depthOf(data)).toBe(MAX_DEPTH);
      const ev = event('env_a', { data });
      await s.insertEvent(ev, { newDeliveryId: () => id('msg') });
      const stored = await s.getEvent('env_a', ev.id);
      expect(stored).toEqual(ev);
      expect(JSON.stringify(stored!.data)).toBe(JSON.stringify(data));
      const [claimed] = await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
      expect(JSON.stringify(claimed!.event.data)).toBe(JSON.stringify(data));
    });

    /** A webhook in env_a with one delivery that failed once (an attempt on record). */
    const seeded = async () => {
      const hook = webhook('env_a');
      await s.createWebhook(hook, { maxWebhooks: null });
      const ev = event('env_a');
      const [delivery] = await s.insertEvent(ev, { newDeliveryId: () => id('msg') });
      await s.claimDue({ now: T0, limit: 1, workerId: 'w1', leaseMs: LEASE });
      await s.recordAttempts([
        { attempt: attempt(delivery!.id, hook.id, 'env_a', false, T0), workerId: 'w1', now: T0, nextAttemptAt: null, disableAfterMs: DAY },
      ]);
      return { hook: (await s.getWebhook('env_a', hook.id))!, ev, delivery: (await s.getDelivery('env_a', delivery!.id))! };
    };

    /** Every id lookup and id-addressed change of the contract, answering what "not found" means for each. */
    const lookups = (environment: string, ids: { webhook: string; event: string; delivery: string }) =>
      [
        ['getWebhook', () => s.getWebhook(environment, ids.webhook), null],
        ['updateWebhook', () => s.updateWebhook(environment, ids.webhook, { name: 'x' }, T0 + 1), null],
        ['disableWebhook', () => s.disableWebhook(environment, ids.webhook, 'manual', T0 + 1), null],
        ['enableWebhook', () => s.enableWebhook(environment, ids.webhook, T0 + 1, true), null],
        ['deleteWebhook', () => s.deleteWebhook(environment, ids.webhook), false],
        [
          'recoverFailed',
          () => s.recoverFailed(environment, ids.webhook, { since: 0, until: T0 + 1, now: T0 + 1, limit: 10, after: null }),
          null,
        ],
        ['getEvent', () => s.getEvent(environment, ids.event), null],
        ['getDelivery', () => s.getDelivery(environment, ids.delivery), null],
        ['listAttempts', () => s.listAttempts(environment, ids.delivery), []],
        ['resendDelivery', () => s.resendDelivery(environment, ids.delivery, T0 + 1), null],
        ['listDeliveries by webhook', () => s.listDeliveries(environment, { webhookId: ids.webhook }), { deliveries: [], next: null }],
        ['listDeliveries by event', () => s.listDeliveries(environment, { eventId: ids.event }), { deliveries: [], next: null }],
      ] as const;

    /** The call's answer, or the error's message: a throw shows up as a failed comparison naming the call. */
    const answer = async (call: () => Promise<unknown>) => {
      try {
        return await call();
      } catch (error) {
        return `threw ${error instanceof Error ? error.message : String(error)}`;
      }
    };

    test('ids with NUL, lone surrogates or LIKE wildcards find nothing and change nothing, and never throw', async () => {
      const { hook, ev, delivery } = await seeded();
      const variants = (real: string, prefix: string) => [
        `${real}\u0000`,
        `${prefix}_\u0000`,
        `\u0000${real}`,
        `${real.slice(0, -1)}\ud800`,
        `${prefix}_\udfff`,
        `${real}\ud83d`, // a high surrogate without its low half
        `${prefix}_%`,
        `${real.slice(0, -1)}_`,
        `${real.slice(0, 8)}%`,
      ];
      const webhooks = variants(hook.id, 'webhook');
      const events = variants(ev.id, 'event');
      const deliveries = variants(delivery.id, 'msg');
      for (let i = 0; i < webhooks.length; i++) {
        const ids = { webhook: webhooks[i]!, event: events[i]!, delivery: deliveries[i]! };
        for (const [what, call, notFound] of lookups('env_a', ids)) {
          expect.soft([what, ids, await answer(call)]).toEqual([what, ids, notFound]);
        }
      }
      // The real records are as they were.
      expect(await s.getWebhook('env_a', hook.id)).toEqual(hook);
      expect(await s.getEvent('env_a', ev.id)).toEqual(ev);
      expect(await s.getDelivery('env_a', delivery.id)).toEqual(delivery);
      expect(await s.listAttempts('env_a', delivery.id)).toHaveLength(1);
    });

    test('environments with NUL, lone surrogates or LIKE wildcards see nothing of any other environment, and never throw', async () => {
      const { hook, ev, delivery } = await seeded();
      const ids = { webhook: hook.id, event: ev.id, delivery: delivery.id };
      // A tenant whose name is the replacement character: what a lone surrogate becomes if a driver rewrites it.
      const neighbour = webhook('env_\ufffd');
      await s.createWebhook(neighbour, { maxWebhooks: null });
      const [neighbourDelivery] = await s.insertEvent(event('env_\ufffd'), { newDeliveryId: () => id('msg') });
      for (const environment of [
        'env_a\u0000',
        '\u0000',
        'env_\u0000a',
        'env_\ud800',
        'env_\udfff',
        'env_%',
        'env__',
        '%',
        '_____',
        'ENV_A',
      ]) {
        for (const [what, call, notFound] of lookups(environment, ids)) {
          expect.soft([what, environment, await answer(call)]).toEqual([what, environment, notFound]);
        }
        const theirs = { webhook: neighbour.id, event: neighbourDelivery!.eventId, delivery: neighbourDelivery!.id };
        for (const [what, call, notFound] of lookups(environment, theirs)) {
          expect.soft([what, environment, await answer(call)]).toEqual([what, environment, notFound]);
        }
        expect.soft([environment, await answer(() => s.listWebhooks(environment))]).toEqual([environment, []]);
        expect
          .soft([environment, await answer(() => s.listDeliveries(environment, {}))])
          .toEqual([environment, { deliveries: [], next: null }]);
        expect.soft([environment, await answer(() => s.listNotices({ environment, limit: 10 }))]).toEqual([environment, []]);
      }
      expect(await s.getWebhook('env_a', hook.id)).toEqual(hook);
      expect(await s.getWebhook('env_\ufffd', neighbour.id)).toEqual(neighbour);
      expect((await s.listDeliveries('env_\ufffd', {})).deliveries.map((d) => d.id)).toEqual([neighbourDelivery!.id]);
    });
  });
}
