import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { EVENT_DATA, EVENT_TYPE, ISSUER } from './payload.mjs';

// With --telemetry, the OpenTelemetry SDK is registered before any engine exists. Loaded only
// then: without it, no scenario process carries the SDK's modules (its RSS and start-up included).
if (process.env.IW_BENCH_TELEMETRY === '1') (await import('./telemetry.mjs')).registerTelemetry();

export { EVENT_DATA, EVENT_TYPE, ISSUER };

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
