// What every bench delivery carries, in a module of its own so that the peers (which load no
// engine) and an engine loaded from another checkout (bench/peers.mjs --engine) send the same.

/** The event every scenario sends: a realistic user.created (about 330 bytes of JSON data). */
export const EVENT_TYPE = 'user.created';
export const EVENT_DATA = Object.freeze({
  user: {
    id: 'kp_0123456789abcdef0123456789abcdef',
    email: 'ada.lovelace@example.com',
    first_name: 'Ada',
    last_name: 'Lovelace',
    phone: '+44 20 7946 0000',
    username: 'ada',
    is_password_reset_requested: false,
    is_suspended: false,
    organizations: [{ code: 'org_0123456789ab', permissions: ['read:users', 'write:users'], roles: ['admin'] }],
  },
});
export const ISSUER = 'https://auth.example.com';
