import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { WebhookVerificationError } from './errors.js';

/** The only time source the receiver reads (the engine's Clock fits). */
export interface NowSource {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export interface RemoteKeysOptions {
  clock: NowSource;
  /** A fetched key set is used this long before it is fetched again. */
  cacheMaxAgeMs: number;
  /** An unknown kid refetches the key set at most once per this window. */
  cooldownMs: number;
  /** Deadline of one key set fetch. */
  timeoutMs: number;
  fetch: typeof fetch;
}

/**
 * The issuer's key set, fetched over HTTP and cached. Key selection and import are jose's
 * (createLocalJWKSet); only the cache is ours. jose's createRemoteJWKSet would do the same, but it
 * measures cache age and cool-down on Date.now(), which the injected clock cannot drive; here both
 * run on the receiver's clock, so a test can cross a cool-down or a rotation in one step.
 *
 * A token whose kid is unknown refetches at once (a key rotated in), unless the last fetch started
 * less than `cooldownMs` ago: that bounds how often forged kids can make us call the issuer.
 */
export function remoteKeySet(url: URL, options: RemoteKeysOptions): JWTVerifyGetKey {
  const { clock, cacheMaxAgeMs, cooldownMs, timeoutMs } = options;
  let local: ReturnType<typeof createLocalJWKSet> | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let triedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;

  const load = async () => {
    triedAt = clock.now();
    let document: unknown;
    try {
      // redirect: 'manual': a key set served from elsewhere than the configured URL is refused.
      const response = await options.fetch(url, {
        headers: { accept: 'application/jwk-set+json, application/json' },
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status !== 200) throw new Error(`key set answered HTTP ${response.status}`);
      document = await response.json();
      local = createLocalJWKSet(document as JSONWebKeySet);
    } catch (cause) {
      throw new WebhookVerificationError('ERR_JWKS_UNAVAILABLE', `could not load the key set from ${url.href}`, { cause });
    }
    fetchedAt = triedAt;
  };
  // Concurrent requests share one fetch.
  const reload = () => (pending ??= load().finally(() => (pending = undefined)));

  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (!local || clock.now() - fetchedAt >= cacheMaxAgeMs) await reload();
    try {
      return await local!(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || clock.now() - triedAt < cooldownMs) throw error;
      await reload();
      return local!(header, token);
    }
  };
  return getKey;
}

/** A fixed key set (no network), for receivers that pin the issuer's public keys. */
export function staticKeySet(jwks: unknown): JWTVerifyGetKey {
  try {
    return createLocalJWKSet(jwks as JSONWebKeySet);
  } catch (cause) {
    throw new TypeError('createVerifier: jwks must be a JSON Web Key Set ({ keys: [...] })', { cause });
  }
}
