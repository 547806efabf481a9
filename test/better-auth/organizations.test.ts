import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Dialect, startAuth } from './harness.js';

const PASSWORD = 'correct horse battery staple';

/**
 * better-auth's organization and admin routes with the plugin on, over HTTP: invite, accept, list
 * the members, change a role, remove a member, and the admin's user list. Their counts run
 * `db.fn.count(...)` on the Kysely the plugin hands better-auth (it once lost `fn.count`: 500s).
 */
describe.each<Dialect>(['sqlite', 'postgres'])('better-auth on %s: organization and admin routes with the plugin', (dialect) => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  beforeAll(async () => {
    s = await startAuth(dialect, {}, `bauth_orgs_${dialect}`);
  });
  afterAll(async () => {
    await s?.close();
  });

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
    const org = await owner.call('/organization/create', { body: { name: 'Acme', slug: 'acme' } });
    expect(org.status, org.text).toBe(200);
    const invitation = await owner.call('/organization/invite-member', {
      body: { email: 'bob@example.com', role: 'member', organizationId: org.json.id },
    });
    expect(invitation.status, invitation.text).toBe(200);
    const accepted = await bob.call('/organization/accept-invitation', { body: { invitationId: invitation.json.id } });
    expect(accepted.status, accepted.text).toBe(200);
    const members = await owner.call(`/organization/list-members?organizationId=${org.json.id}`);
    expect(members.status, members.text).toBe(200);
    expect(members.json.total).toBe(2);
    const bobMember = members.json.members.find((m: { user: { email: string } }) => m.user.email === 'bob@example.com');
    const role = await owner.call('/organization/update-member-role', {
      body: { memberId: bobMember.id, role: 'admin', organizationId: org.json.id },
    });
    expect(role.status, role.text).toBe(200);
    expect(role.json.role).toBe('admin');
    const removed = await owner.call('/organization/remove-member', {
      body: { memberIdOrEmail: 'bob@example.com', organizationId: org.json.id },
    });
    expect(removed.status, removed.text).toBe(200);
    const after = await owner.call(`/organization/list-members?organizationId=${org.json.id}`);
    expect(after.status, after.text).toBe(200);
    expect(after.json.total).toBe(1);
    const users = await owner.call('/admin/list-users');
    expect(users.status, users.text).toBe(200);
    expect(users.json.total).toBe(2);
    expect(users.json.users).toHaveLength(2);
    expect(s.errors).toEqual([]);
  });
});
