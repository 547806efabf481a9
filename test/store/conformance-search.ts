import { beforeEach, describe, expect, test } from 'vitest';
import { event, id, T0, type TestableStore, webhook } from './conformance.js';

/**
 * What was sent about a user or an organization (Store.searchEvents, summarizeEvents): events by
 * their subject or their user's email, across webhooks, newest first, in keyset pages. Part of
 * the store contract: run by describeStore on every adapter.
 */
export function describeSearchContract(ready: () => Promise<TestableStore>): void {
  describe('events by subject', () => {
    let s: TestableStore;
    beforeEach(async () => {
      s = await ready();
    });

    const user = (userId: string, email: string) => ({ user: { id: userId, email } });
    const emit = (environment: string, createdAt: number, subject: string | null, data: Record<string, unknown>, type = 'user.created') =>
      s.insertEvent(event(environment, { type, data, createdAt }), { newDeliveryId: () => id('msg'), subject });

    test('by subject or by email (any case), across every webhook, newest first, with every delivery', async () => {
      const eventTypes = ['user.created', 'organization.user_added', 'organization.updated'];
      const crm = webhook('env_a', { eventTypes });
      const billing = webhook('env_a', { eventTypes: ['user.created'] });
      const elsewhere = webhook('env_b', { eventTypes });
      for (const w of [crm, billing, elsewhere]) await s.createWebhook(w, { maxWebhooks: null });
      await emit('env_a', T0, 'kp_ada', user('kp_ada', 'Ada@Example.com'));
      await emit('env_a', T0 + 1, 'kp_bob', user('kp_bob', 'bob@example.com'));
      await emit(
        'env_a',
        T0 + 2,
        'kp_ada',
        { membership: { user_id: 'kp_ada', organization_code: 'org_acme' } },
        'organization.user_added',
      );
      await emit('env_a', T0 + 3, 'org_acme', { organization: { code: 'org_acme', name: 'Acme' } }, 'organization.updated');
      // another environment's event about the same user is not found from env_a
      await emit('env_b', T0 + 4, 'kp_ada', user('kp_ada', 'ada@example.com'));

      const ada = await s.searchEvents('env_a', { key: 'kp_ada', limit: 10, before: null });
      expect(ada.events.map((e) => [e.type, e.subject, e.createdAt])).toEqual([
        ['organization.user_added', 'kp_ada', T0 + 2],
        ['user.created', 'kp_ada', T0],
      ]);
      // every delivery of each event found, to each webhook of the environment subscribed to it
      const [membership, created] = ada.events.map((e) => e.id);
      expect(ada.deliveries.map((d) => [d.eventId, d.webhookId]).sort()).toEqual(
        [
          [membership, crm.id],
          [created, crm.id],
          [created, billing.id],
        ].sort(),
      );

      // by email, in any case: the user's events that carry it
      const byEmail = await s.searchEvents('env_a', { key: 'ADA@example.COM', limit: 10, before: null });
      expect(byEmail.events.map((e) => e.createdAt)).toEqual([T0]);

      const org = await s.searchEvents('env_a', { key: 'org_acme', limit: 10, before: null });
      expect(org.events.map((e) => e.type)).toEqual(['organization.updated']);

      expect(await s.searchEvents('env_a', { key: 'kp_nobody', limit: 10, before: null })).toEqual({ events: [], deliveries: [] });
      expect((await s.searchEvents('env_b', { key: 'kp_ada', limit: 10, before: null })).events).toHaveLength(1);
      // a key no database could store finds nothing, and is no error
      expect((await s.searchEvents('env_a', { key: 'kp\u0000ada', limit: 10, before: null })).events).toEqual([]);
    });

    test('keyset pages: each event once, newest first, whether found by subject, by email or by both', async () => {
      await s.createWebhook(webhook('env_a'), { maxWebhooks: null });
      // Found by subject only (another email), by email only (no subject), by both; some in one millisecond.
      const made: string[] = [];
      const kinds: Array<[number, string | null, string]> = [
        [T0, 'kp_ada', 'other@example.com'],
        [T0 + 1, null, 'ada@example.com'],
        [T0 + 1, 'kp_ada', 'ada@example.com'],
        [T0 + 1, 'kp_ada', 'x@example.com'],
        [T0 + 2, null, 'ADA@example.com'],
        [T0 + 3, 'kp_bob', 'bob@example.com'],
        [T0 + 3, 'kp_ada', 'ada@example.com'],
      ];
      for (const [at, subject, email] of kinds) {
        const [d] = await emit('env_a', at, subject, user(subject ?? 'kp_unknown', email));
        if (subject === 'kp_ada' || email.toLowerCase() === 'ada@example.com') made.push(d!.eventId);
      }
      const whole = await s.searchEvents('env_a', { key: 'kp_ada', limit: 100, before: null });
      const byEmail = await s.searchEvents('env_a', { key: 'ada@example.com', limit: 100, before: null });
      expect(whole.events).toHaveLength(4);
      expect(byEmail.events).toHaveLength(4);
      // newest first: by time, then id
      const sorted = (events: Array<{ createdAt: number; id: string }>) =>
        [...events].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((e) => e.id);
      for (const key of ['kp_ada', 'ada@example.com']) {
        const all = await s.searchEvents('env_a', { key, limit: 100, before: null });
        expect(all.events.map((e) => e.id)).toEqual(sorted(all.events));
        // pages of 1 and of 2, joined, are the whole list
        for (const limit of [1, 2]) {
          const seen: string[] = [];
          let before = null;
          for (let pages = 0; pages < 20; pages++) {
            const page: Awaited<ReturnType<TestableStore['searchEvents']>> = await s.searchEvents('env_a', { key, limit, before });
            seen.push(...page.events.map((e) => e.id));
            const last = page.events.at(-1);
            if (!last || page.events.length < limit) break;
            before = { createdAt: last.createdAt, id: last.id };
          }
          expect(seen, `${key} in pages of ${limit}`).toEqual(all.events.map((e) => e.id));
        }
      }
      // between them, the user's id and email find every event about the user, and nothing else
      expect(new Set([...whole.events, ...byEmail.events].map((e) => e.id))).toEqual(new Set(made));
    });

    test('an email no database could store or index is left out, and the event is written', async () => {
      const hook = webhook('env_a');
      await s.createWebhook(hook, { maxWebhooks: null });
      const [withNul] = await emit('env_a', T0, 'kp_nul', user('kp_nul', 'a\u0000b@example.com'));
      const [long] = await emit('env_a', T0 + 1, 'kp_long', user('kp_long', `${'a'.repeat(3000)}@example.com`));
      expect(withNul).toBeDefined();
      expect(long).toBeDefined();
      expect((await s.searchEvents('env_a', { key: 'kp_nul', limit: 10, before: null })).events).toHaveLength(1);
      expect((await s.searchEvents('env_a', { key: 'kp_long', limit: 10, before: null })).events).toHaveLength(1);
    });

    test('summaries: subject and test flag by id, of the environment only', async () => {
      const hook = webhook('env_a');
      await s.createWebhook(hook, { maxWebhooks: null });
      const [real] = await emit('env_a', T0, 'kp_ada', user('kp_ada', 'ada@example.com'));
      const [sample] = await s.insertEvent(event('env_a', { data: { ...user('kp_test', 'test@example.com'), test: true } }), {
        newDeliveryId: () => id('msg'),
        subject: 'kp_test',
        webhookIds: [hook.id],
      });
      const found = await s.summarizeEvents('env_a', [real!.eventId, sample!.eventId, 'event_unknown']);
      const byId = new Map(found.map((e) => [e.id, e]));
      expect(byId.size).toBe(2);
      expect(byId.get(real!.eventId)).toMatchObject({ subject: 'kp_ada', test: false, type: 'user.created', createdAt: T0 });
      // written by the general path (a test event): the subject is kept there too
      expect(byId.get(sample!.eventId)).toMatchObject({ subject: 'kp_test', test: true });
      expect(await s.summarizeEvents('env_b', [real!.eventId])).toEqual([]);
      expect(await s.summarizeEvents('env_a', [])).toEqual([]);
    });
  });
}
