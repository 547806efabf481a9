import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Dialect, startAuth, startVerifyingReceiver } from './harness.js';

const ALL = [
  'user.created',
  'user.updated',
  'user.deleted',
  'user.authenticated',
  'user.authentication_failed',
  'organization.created',
  'organization.updated',
  'organization.deleted',
] as const;

const PASSWORD = 'correct horse battery staple';

describe.each<Dialect>(['sqlite', 'postgres'])('better-auth on %s: each write delivers one verified event', (dialect) => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  let r: Awaited<ReturnType<typeof startVerifyingReceiver>>;
  beforeAll(async () => {
    s = await startAuth(dialect, {}, `bauth_events_${dialect}`);
    r = await startVerifyingReceiver(s.issuer);
    await s.hooks.webhooks.create({ name: 'everything', endpoint: r.url, eventTypes: [...ALL] });
  });
  afterAll(async () => {
    await r?.close();
    await s?.close();
  });

  /** Runs `action`, waits for exactly one more delivered event, and returns it. */
  async function oneEvent(action: () => Promise<unknown>) {
    return (await events(action, 1))[0]!;
  }

  /** Runs `action`, waits for exactly `n` more delivered events, and returns them in type order. */
  async function events(action: () => Promise<unknown>, n: number) {
    const before = r.received.length;
    await action();
    await r.waitFor(before + n);
    await s.hooks.drain();
    expect(r.received.length, `${n} events, no more`).toBe(before + n);
    return r.received.slice(before).sort((a, b) => a.type.localeCompare(b.type));
  }

  const ada = { browser: undefined as unknown as ReturnType<typeof s.client>, id: '' };

  test('sign-up: user.created, source user, the Kinde user shape', async () => {
    ada.browser = s.client();
    const event = await oneEvent(async () => {
      const res = await ada.browser.call('/sign-up/email', {
        body: { email: 'Ada@Example.com', password: PASSWORD, name: 'Ada King Lovelace' },
      });
      expect(res.status).toBe(200);
      ada.id = res.json.user.id;
    });
    expect(event).toMatchObject({ type: 'user.created', source: 'user' });
    expect(event.data).toEqual({
      user: {
        id: ada.id,
        email: 'ada@example.com',
        first_name: 'Ada',
        last_name: 'King Lovelace',
        phone: null,
        username: null,
        is_password_reset_requested: false,
        is_suspended: false,
        organizations: [],
      },
    });
  });

  test('a refused sign-in: user.authentication_failed with the user and the reason', async () => {
    const event = await oneEvent(async () => {
      const res = await s.client().call('/sign-in/email', { body: { email: 'ada@example.com', password: 'not the password' } });
      expect(res.status).toBe(401);
    });
    expect(event).toMatchObject({ type: 'user.authentication_failed', source: 'user' });
    expect(event.data).toEqual({ user: { id: ada.id, email: 'ada@example.com', reason: 'INVALID_EMAIL_OR_PASSWORD' } });
  });

  test('sign-in: user.authenticated', async () => {
    ada.browser = s.client();
    const event = await oneEvent(async () => {
      const res = await ada.browser.call('/sign-in/email', { body: { email: 'ada@example.com', password: PASSWORD } });
      expect(res.status).toBe(200);
    });
    expect(event).toMatchObject({ type: 'user.authenticated', source: 'user' });
    expect(event.data).toEqual({ user: { id: ada.id, email: 'ada@example.com', connection_id: null, organization_code: null } });
  });

  test('update: user.updated with the new name', async () => {
    const event = await oneEvent(async () => {
      const res = await ada.browser.call('/update-user', { body: { name: 'Augusta Ada' } });
      expect(res.status).toBe(200);
    });
    expect(event).toMatchObject({ type: 'user.updated', source: 'user' });
    expect(event.data.user).toMatchObject({ id: ada.id, first_name: 'Augusta', last_name: 'Ada' });
  });

  let admin: ReturnType<typeof s.client>;
  test('admin create: user.created with source admin', async () => {
    const res = await s.client().call('/sign-up/email', { body: { email: 'root@example.com', password: PASSWORD, name: 'Root' } });
    expect(res.status).toBe(200);
    await r.waitFor(r.received.length + 1);
    await s.sql(`update "user" set role = 'admin' where email = 'root@example.com'`);
    admin = s.client();
    await oneEvent(() => admin.call('/sign-in/email', { body: { email: 'root@example.com', password: PASSWORD } }));
    const event = await oneEvent(async () => {
      const created = await admin.call('/admin/create-user', {
        body: { email: 'grace@example.com', password: PASSWORD, name: 'Grace Hopper', role: 'user' },
      });
      expect(created.status, created.text).toBe(200);
    });
    expect(event).toMatchObject({ type: 'user.created', source: 'admin' });
    expect(event.data.user).toMatchObject({ email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' });
  });

  test('a ban through the admin plugin: user.updated with is_suspended', async () => {
    const [grace] = (await s.sql(`select id from "user" where email = 'grace@example.com'`)) as Array<{ id: string }>;
    const event = await oneEvent(async () => {
      const res = await admin.call('/admin/ban-user', { body: { userId: grace!.id } });
      expect(res.status, res.text).toBe(200);
    });
    expect(event).toMatchObject({ type: 'user.updated', source: 'admin' });
    expect(event.data.user).toMatchObject({ id: grace!.id, is_suspended: true });
  });

  let orgId = '';
  test("organization create, update, delete: one event each, and the owner's user.updated as its membership comes and goes", async () => {
    const [created, owner] = await events(async () => {
      const res = await ada.browser.call('/organization/create', { body: { name: 'Analytical Engines', slug: 'analytical' } });
      expect(res.status, res.text).toBe(200);
      orgId = res.json.id;
    }, 2);
    expect(created!).toMatchObject({ type: 'organization.created', source: 'user' });
    expect(owner).toMatchObject({
      type: 'user.updated',
      data: { user: { id: ada.id, organizations: [{ code: orgId, roles: ['owner'] }] } },
    });
    expect(created!.data).toEqual({ organization: { code: orgId, name: 'Analytical Engines', external_id: null, slug: 'analytical' } });

    const updated = await oneEvent(async () => {
      const res = await ada.browser.call('/organization/update', { body: { organizationId: orgId, data: { name: 'Difference Engines' } } });
      expect(res.status, res.text).toBe(200);
    });
    expect(updated).toMatchObject({ type: 'organization.updated', data: { organization: { code: orgId, name: 'Difference Engines' } } });

    // Ada is now a member (owner): her next update carries the membership.
    const again = await oneEvent(() => ada.browser.call('/update-user', { body: { name: 'Ada Lovelace' } }));
    expect(again.data.user.organizations).toEqual([{ code: orgId, roles: ['owner'] }]);

    const [deleted, left] = await events(async () => {
      const res = await ada.browser.call('/organization/delete', { body: { organizationId: orgId } });
      expect(res.status, res.text).toBe(200);
    }, 2);
    expect(deleted).toMatchObject({ type: 'organization.deleted', data: { organization: { code: orgId } } });
    expect(left).toMatchObject({ type: 'user.updated', data: { user: { id: ada.id, organizations: [] } } });
  });

  test('delete: user.deleted', async () => {
    const event = await oneEvent(async () => {
      const res = await ada.browser.call('/delete-user', { body: { password: PASSWORD } });
      expect(res.status, res.text).toBe(200);
    });
    expect(event).toEqual(expect.objectContaining({ type: 'user.deleted', source: 'user', data: { user: { id: ada.id } } }));
  });

  test('a server call (auth.api) is source api; a 300-character name and odd fields never fail a sign-up', async () => {
    const name = `${'N'.repeat(300)} ${'L'.repeat(300)}`;
    const event = await oneEvent(() =>
      s.auth.api.signUpEmail({ body: { email: 'long@example.com', password: PASSWORD, name, image: 'x'.repeat(2000) } }),
    );
    expect(event).toMatchObject({ type: 'user.created', source: 'api' });
    expect(event.data.user.first_name).toBe('N'.repeat(255));
    expect(event.data.user.last_name).toBe('L'.repeat(255));
    expect(s.errors).toEqual([]);
  });

  test("a social sign-up (better-auth's createOAuthUser: user and account in one transaction): user.created", async () => {
    const context = await s.auth.$context;
    const event = await oneEvent(() =>
      context.internalAdapter.createOAuthUser(
        { email: 'oauth@example.com', name: 'Octo Cat', emailVerified: true } as never,
        {
          providerId: 'github',
          accountId: 'gh-1',
        } as never,
      ),
    );
    expect(event).toMatchObject({ type: 'user.created', source: 'api' });
    expect(event.data.user).toMatchObject({ email: 'oauth@example.com', first_name: 'Octo', last_name: 'Cat' });
  });

  test('every delivery was verified once (no duplicates)', () => {
    expect(new Set(r.received.map((e) => e.webhookId)).size).toBe(r.received.length);
  });
});
