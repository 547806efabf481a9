import { expect, test } from 'vitest';
import { kindeOrganization, kindeUser, splitName } from '../../src/better-auth/mapping.js';
import { Catalog } from '../../src/catalog/catalog.js';

test("the plugins' fields map onto Kinde's user: username, phone, ban, memberships with their roles", () => {
  const data = {
    user: kindeUser(
      {
        id: 'u1',
        email: 'ada@example.com',
        name: 'Ada',
        username: 'ada',
        phoneNumber: '+441234567890',
        banned: true,
        image: 'x',
        emailVerified: true,
      },
      [
        { organizationId: 'org_1', role: 'admin, member' },
        { organizationId: 'org_2', role: null },
      ],
    ),
  };
  expect(data).toEqual({
    user: {
      id: 'u1',
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: '',
      phone: '+441234567890',
      username: 'ada',
      is_password_reset_requested: false,
      is_suspended: true,
      organizations: [
        { code: 'org_1', roles: ['admin', 'member'] },
        { code: 'org_2', roles: null },
      ],
    },
  });
});

test('what the schema would refuse is clamped or left out, and the result passes the catalog', () => {
  const catalog = new Catalog();
  const long = '😀'.repeat(200); // 400 UTF-16 units: clamped without splitting a pair
  const user = kindeUser({
    id: 'u2',
    email: 'not an address',
    name: `${long} \ud800tail`,
    username: 'u'.repeat(300),
    phoneNumber: '9'.repeat(100),
  });
  expect(user.email).toBeNull();
  expect((user.first_name as string).length).toBe(254);
  expect(user.first_name).toBe('😀'.repeat(127));
  expect(user.last_name).toBe('\ufffdtail');
  expect((user.username as string).length).toBe(255);
  expect((user.phone as string).length).toBe(64);
  expect(() => catalog.validateEvent('user.created', { user })).not.toThrow();
  expect(() => catalog.validateEvent('organization.created', { organization: kindeOrganization({ id: 'o1', name: null }) })).not.toThrow();
});

test('names split on the first whitespace; the rest is the last name', () => {
  expect(splitName('  Augusta Ada King  ')).toEqual({ first: 'Augusta', last: 'Ada King' });
  expect(splitName(null)).toEqual({ first: '', last: '' });
});
