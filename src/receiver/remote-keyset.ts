import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { readBounded } from './bounded-read.js';
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
  /** Appended to a fetch failure's message: what the operator should check (the issuer's mount prefix, or jwksUrl). */
  hint: string;
}

/**
 * Largest key set read, in bytes. A key set is a few public keys (one 4096-bit RSA key is under
 * 1 KiB of JSON), so 64 KiB leaves room for dozens during a rotation, while a hostile or broken
 * issuer cannot make the receiver buffer and parse an endless answer.
 */
export const MAX_KEY_SET_BYTES = 64 * 1024;

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
    try {
      // redirect: 'manual': a key set served from elsewhere than the configured URL is refused.
      const response = await options.fetch(url, {
        headers: { accept: 'application/jwk-set+json, application/json' },
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {});
        throw new Error(`it answered HTTP ${response.status}`);
      }
      local = createLocalJWKSet(parseKeySet(await readBounded(response, MAX_KEY_SET_BYTES, keySetTooLarge)));
    } catch (cause) {
      // Detailed, for the receiver's operator: createReceiver logs this and tells the sender less.
      const message = `could not load the key set from ${url.href}: ${reason(cause)}. ${options.hint}`;
      throw new WebhookVerificationError('ERR_JWKS_UNAVAILABLE', message, { cause });
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

/** fetch's own message is "fetch failed"; the reason (ECONNREFUSED, bad port) is in its cause. */
function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail ? `${error.message} (${detail})` : error.message;
}

const keySetTooLarge = () => new Error(`the key set is larger than ${MAX_KEY_SET_BYTES} bytes`);

function parseKeySet(bytes: Uint8Array): JSONWebKeySet {
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new Error('the answer is not JSON');
  }
  if (typeof document !== 'object' || document === null || !Array.isArray((document as { keys?: unknown }).keys)) {
    throw new Error('the answer is not a key set ({ "keys": [...] })');
  }
  return document as JSONWebKeySet;
}
