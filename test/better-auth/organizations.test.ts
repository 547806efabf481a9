import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Dialect, type Received, startAuth, startVerifyingReceiver } from './harness.js';

const PASSWORD = 'correct horse battery staple';

/**
 * better-auth's organization and admin routes with the plugin on, over HTTP: invite, accept, list
 * the members, change a role, remove a member, and the admin's user list. Their counts run
 * `db.fn.count(...)` on the Kysely the plugin hands better-auth (it once lost `fn.count`: 500s).
 */
describe.each<Dialect>(['sqlite', 'postgres'])('better-auth on %s: organization and admin routes with the plugin', (dialect) => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  let r: Awaited<ReturnType<typeof startVerifyingReceiver>>;
  beforeAll(async () => {
    s = await startAuth(dialect, {}, `bauth_orgs_${dialect}`);
    r = await startVerifyingReceiver(s.issuer);
    await s.hooks.webhooks.create({
      name: 'memberships',
      endpoint: r.url,
      eventTypes: [
        'user.updated',
        'membership.created',
        'membership.updated',
        'membership.deleted',
        'invitation.created',
        'invitation.accepted',
        'invitation.rejected',
        'invitation.canceled',
      ],
    });
  });
  afterAll(async () => {
    await r?.close();
    await s?.close();
  });

  /** Runs `action` and returns the events it delivered (every one, once delivery is idle). */
  async function eventsOf<T>(action: () => Promise<T>): Promise<{ result: T; events: Received[] }> {
    const before = r.received.length;
    const result = await action();
    await s.hooks.drain();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await s.hooks.drain();
    return { result, events: r.received.slice(before) };
  }
  const typesOf = (events: Received[]) => events.map((e) => e.type).sort();

  test('invite → accept → list members → change role → remove; the admin lists the users', async () => {
    const owner = s.client();
    const bob = s.client();
    for (const [who, email, name] of [
      [owner, 'owner@example.com', 'Owner'],
      [bob, 'bob@example.com', 'Bob'],
    ] as const) {
      const up = await who.call('/sign-up/email', { body: { email, password: PASSWORD, name } });
      expect(up.status, up.text).toBe(200);
    }
    await s.sql(`update "user" set role = 'admin' where email = 'owner@example.com'`);
    const created = await eventsOf(() => owner.call('/organization/create', { body: { name: 'Acme', slug: 'acme' } }));
    const org = created.result;
    expect(org.status, org.text).toBe(200);
    // Its creator's membership (role owner), and the creator's organizations as they now are.
    expect(typesOf(created.events)).toEqual(['membership.created', 'user.updated']);
    expect(created.events.find((e) => e.type === 'user.updated')!.data.user.organizations).toEqual([
      { code: org.json.id, roles: ['owner'] },
    ]);
    const bobId = (await s.sql(`select id from "user" where email = 'bob@example.com'`))[0] as { id: string };
    const invited = await eventsOf(() =>
      owner.call('/organization/invite-member', { body: { email: 'bob@example.com', role: 'member', organizationId: org.json.id } }),
    );
    const invitation = invited.result;
    expect(invitation.status, invitation.text).toBe(200);
    expect(typesOf(invited.events)).toEqual(['invitation.created']);
    expect(invited.events[0]!.data).toMatchObject({
      invitation: {
        id: invitation.json.id,
        organization_code: org.json.id,
        email: 'bob@example.com',
        roles: ['member'],
        status: 'pending',
      },
    });
    const joined = await eventsOf(() => bob.call('/organization/accept-invitation', { body: { invitationId: invitation.json.id } }));
    expect(joined.result.status, joined.result.text).toBe(200);
    expect(typesOf(joined.events)).toEqual(['invitation.accepted', 'membership.created', 'user.updated']);
    const bobUpdated = joined.events.find((e) => e.type === 'user.updated')!;
    expect(bobUpdated.data.user).toMatchObject({ id: bobId.id, organizations: [{ code: org.json.id, roles: ['member'] }] });
    expect(joined.events.find((e) => e.type === 'membership.created')!.data).toMatchObject({
      membership: { organization_code: org.json.id, user_id: bobId.id, roles: ['member'] },
    });
    const members = await owner.call(`/organization/list-members?organizationId=${org.json.id}`);
    expect(members.status, members.text).toBe(200);
    expect(members.json.total).toBe(2);
    const bobMember = members.json.members.find((m: { user: { email: string } }) => m.user.email === 'bob@example.com');
    const changed = await eventsOf(() =>
      owner.call('/organization/update-member-role', { body: { memberId: bobMember.id, role: 'admin', organizationId: org.json.id } }),
    );
    expect(changed.result.status, changed.result.text).toBe(200);
    expect(changed.result.json.role).toBe('admin');
    expect(typesOf(changed.events)).toEqual(['membership.updated', 'user.updated']);
    expect(changed.events.find((e) => e.type === 'user.updated')!.data.user.organizations).toEqual([
      { code: org.json.id, roles: ['admin'] },
    ]);
    const removed = await eventsOf(() =>
      owner.call('/organization/remove-member', { body: { memberIdOrEmail: 'bob@example.com', organizationId: org.json.id } }),
    );
    expect(removed.result.status, removed.result.text).toBe(200);
    expect(typesOf(removed.events)).toEqual(['membership.deleted', 'user.updated']);
    expect(removed.events.find((e) => e.type === 'user.updated')!.data.user.organizations).toEqual([]);
    const after = await owner.call(`/organization/list-members?organizationId=${org.json.id}`);
    expect(after.status, after.text).toBe(200);
    expect(after.json.total).toBe(1);
    // Invited again: rejected; invited once more: canceled by the owner; joined and then left.
    const { result: again } = await eventsOf(() =>
      owner.call('/organization/invite-member', { body: { email: 'bob@example.com', role: 'member', organizationId: org.json.id } }),
    );
    const rejected = await eventsOf(() => bob.call('/organization/reject-invitation', { body: { invitationId: again.json.id } }));
    expect(rejected.result.status, rejected.result.text).toBe(200);
    expect(typesOf(rejected.events)).toEqual(['invitation.rejected']);
    const { result: third } = await eventsOf(() =>
      owner.call('/organization/invite-member', { body: { email: 'bob@example.com', role: 'member', organizationId: org.json.id } }),
    );
    const canceled = await eventsOf(() => owner.call('/organization/cancel-invitation', { body: { invitationId: third.json.id } }));
    expect(canceled.result.status, canceled.result.text).toBe(200);
    expect(typesOf(canceled.events)).toEqual(['invitation.canceled']);
    const { result: fourth } = await eventsOf(() =>
      owner.call('/organization/invite-member', { body: { email: 'bob@example.com', role: 'member', organizationId: org.json.id } }),
    );
    await eventsOf(() => bob.call('/organization/accept-invitation', { body: { invitationId: fourth.json.id } }));
    const left = await eventsOf(() => bob.call('/organization/leave', { body: { organizationId: org.json.id } }));
    expect(left.result.status, left.result.text).toBe(200);
    expect(typesOf(left.events)).toEqual(['membership.deleted', 'user.updated']);
    expect(left.events.find((e) => e.type === 'user.updated')!.data.user.organizations).toEqual([]);
    // Each delivered once.
    expect(new Set(r.received.map((e) => e.webhookId)).size).toBe(r.received.length);
    const users = await owner.call('/admin/list-users');
    expect(users.status, users.text).toBe(200);
    expect(users.json.total).toBe(2);
    expect(users.json.users).toHaveLength(2);
    expect(s.errors).toEqual([]);
  });
});
