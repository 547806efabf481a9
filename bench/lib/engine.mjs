import { createWebhooks, generateSigningKey } from 'identity-webhooks';

// With --telemetry, the OpenTelemetry SDK is registered before any engine exists. Loaded only
// then: without it, no scenario process carries the SDK's modules (its RSS and start-up included).
if (process.env.IW_BENCH_TELEMETRY === '1') (await import('./telemetry.mjs')).registerTelemetry();

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

let key;
/** One RS256 key per process (generating one costs ~100 ms). */
export function signingKey() {
  key ??= generateSigningKey();
  return key;
}

/**
 * An engine as a host would build it, on `store`. Loopback receivers need allowPrivateNetworks;
 * everything else is the defaults unless a scenario says otherwise (and the README lists it).
 */
export async function makeEngine({ store, delivery, transport, errors = [] } = {}) {
  return createWebhooks({
    store,
    keys: [await signingKey()],
    issuer: ISSUER,
    allowPrivateNetworks: true,
    ...(delivery ? { delivery } : {}),
    ...(transport ? { transport } : {}),
    logger: {
      warn: () => {},
      // Kept, not printed per call: an error storm would itself slow the run down.
      error: (message, meta) => void (errors.length < 20 && errors.push(`${message} ${meta ? JSON.stringify(meta) : ''}`)),
    },
  });
}

/** Creates `count` webhooks in `environment`, each on its own receiver origin (urls[i % urls.length]). */
export async function addWebhooks(hooks, { count, urls, environment = 'default', path = '/ok', offset = 0 }) {
  const made = [];
  for (let i = 0; i < count; i++) {
    const base = urls[(offset + i) % urls.length];
    made.push(
      await hooks.webhooks.create({
        name: `bench ${offset + i}`,
        endpoint: `${base}${path}/${offset + i}`,
        eventTypes: [EVENT_TYPE],
        environment,
      }),
    );
  }
  return made;
}
