import { generateSigningKey, type SigningKey } from '../../src/index.js';

let cached: Promise<SigningKey> | undefined;
/** One 2048-bit key per test file (key generation costs ~100 ms). */
export function testKey(): Promise<SigningKey> {
  cached ??= generateSigningKey();
  return cached;
}

export function userData(overrides: Record<string, unknown> = {}) {
  return {
    user: {
      id: 'kp_0123456789abcdef',
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: null,
      username: null,
      is_password_reset_requested: false,
      is_suspended: false,
      organizations: [{ code: 'org_1234', permissions: null, roles: null }],
      ...overrides,
    },
  };
}

/** A stored `user.created` event of environment `default`, emitted at `at` (what a token is built from). */
export function userEvent(at: number, { id = 'event_1', source = 'api' }: { id?: string; source?: 'api' | 'admin' | 'user' } = {}) {
  return {
    id,
    environment: 'default',
    type: 'user.created',
    source,
    data: userData(),
    eventTimestamp: at,
    createdAt: at,
  };
}
