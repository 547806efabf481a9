import { systemClock } from '../clock.js';
import { checkKeyPair } from './key-check.js';
import { assertSigningKey, type ImportedKey, importSigningKey, type PublicJwk, type SigningKey, toPublicJwk } from './keys.js';

/** How a rotation is timed. */
export interface RotateOptions {
  /**
   * How long the new key is published before it signs. Default 10 minutes: longer than the
   * JWKS `max-age` (5 minutes), so every receiver's cached key set holds the new key before the
   * first token signed with it arrives.
   */
  overlapMs?: number;
  /**
   * Instead of now + overlap: the moment the new key starts signing. Give every process the same
   * value (from config) and they switch together, restarts included.
   */
  signsFrom?: number | Date;
  /**
   * The oldest token a receiver accepts. The old key stays published this long after it stops
   * signing, then leaves the JWKS. Default 5 minutes (a token is signed per attempt, just before
   * it is sent, so this only has to cover the request deadline and clock skew).
   */
  maxTokenAgeMs?: number;
}

/** Public facts about one published key: never any private member. */
export interface KeyInfo {
  kid: string;
  alg: 'RS256';
  /** `signing` now; `next` (published, signs from `signsFrom`); `retiring` (published until `unpublishAt`); `published` (given in options, never signs). */
  status: 'signing' | 'next' | 'retiring' | 'published';
  signsFrom: number | null;
  signsUntil: number | null;
  unpublishAt: number | null;
  publicKey: PublicJwk;
}

interface Entry {
  jwk: PublicJwk;
  key: Promise<ImportedKey>;
  /** -Infinity for the key the engine started with. */
  signsFrom: number;
  /** How long this key's predecessor stays published once this one signs. */
  retireAfterMs: number;
}

export const DEFAULT_OVERLAP_MS = 10 * 60_000;
export const DEFAULT_MAX_TOKEN_AGE_MS = 5 * 60_000;

/**
 * The engine's keys: one signs, all current ones are published. Holds only imported
 * (non-extractable) CryptoKeys and the public halves, so no later code path can serialise private
 * material. Rotation state lives in this object, in memory: each process of a multi-process host
 * must be given the same rotation (use `signsFrom` so they agree on the moment).
 *
 * @example
 * ```ts
 * const keys = new KeySet([current], { now: () => clock.now() });
 * await keys.rotate(next); // published now, signs in 10 minutes, `current` leaves the JWKS 5 minutes later
 * ```
 */
export class KeySet {
  #chain: Entry[];
  #extra: PublicJwk[];
  #now: () => number;

  constructor(keys: readonly SigningKey[], options: { now?: () => number } = {}) {
    if (!Array.isArray(keys) || keys.length === 0) throw new TypeError('createWebhooks: keys must be a non-empty array of private JWKs');
    for (const [i, k] of keys.entries()) assertSigningKey(k, `keys[${i}]`);
    const kids = new Set(keys.map((k) => k.kid));
    if (kids.size !== keys.length) throw new TypeError('createWebhooks: every key needs a distinct kid');
    this.#now = options.now ?? (() => systemClock.now());
    const first = keys[0]!;
    const key = importSigningKey(first).then((k) => checkKeyPair(k, toPublicJwk(first), 'keys[0]'));
    key.catch(() => {}); // surfaced on first use
    this.#chain = [{ jwk: toPublicJwk(first), key, signsFrom: -Infinity, retireAfterMs: 0 }];
    this.#extra = keys.slice(1).map(toPublicJwk);
  }

  /** The key tokens signed at `now` are signed with. */
  signingKey(now = this.#now()): Promise<ImportedKey> {
    return this.#signer(now).key;
  }

  /** The JWKS document (`{ keys: [...] }`) at `now`, public parts only. */
  jwks(now = this.#now()): { keys: PublicJwk[] } {
    return { keys: [...this.#published(now).map((e) => e.jwk), ...this.#extra].map((k) => ({ ...k })) };
  }

  /**
   * Starts a rotation to `newKey`: published at once, signing from `signsFrom` (default now +
   * overlap), and the key it replaces published until tokens it signed are stale. Resolves once
   * the key is imported and proven to sign; a bad key rejects with a TypeError and changes nothing.
   */
  async rotate(newKey: SigningKey, options: RotateOptions = {}): Promise<KeyInfo> {
    assertSigningKey(newKey, 'rotate: newKey');
    const now = this.#now();
    const overlapMs = options.overlapMs ?? DEFAULT_OVERLAP_MS;
    const retireAfterMs = options.maxTokenAgeMs ?? DEFAULT_MAX_TOKEN_AGE_MS;
    if (!Number.isInteger(overlapMs) || overlapMs < 0) throw new TypeError('rotate: overlapMs must be a non-negative integer');
    if (!Number.isInteger(retireAfterMs) || retireAfterMs < 0) throw new TypeError('rotate: maxTokenAgeMs must be a non-negative integer');
    const signsFrom = options.signsFrom === undefined ? now + overlapMs : +options.signsFrom;
    if (!Number.isFinite(signsFrom)) throw new TypeError('rotate: signsFrom must be a valid time');
    const jwk = toPublicJwk(newKey);
    const key = await importSigningKey(newKey).then((k) => checkKeyPair(k, jwk, 'rotate: newKey'));
    // Checked after the await: another rotate may have landed meanwhile.
    const last = this.#chain.at(-1)!;
    if (last.signsFrom > now)
      throw new TypeError(`rotate: a rotation to ${last.jwk.kid} is pending until ${new Date(last.signsFrom).toISOString()}`);
    if (signsFrom < last.signsFrom) throw new TypeError('rotate: signsFrom is before the current key started signing');
    if ([...this.#chain.map((e) => e.jwk), ...this.#extra].some((k) => k.kid === jwk.kid))
      throw new TypeError(`rotate: kid ${JSON.stringify(jwk.kid)} is already in the key set`);
    const entry: Entry = { jwk, key: Promise.resolve(key), signsFrom, retireAfterMs };
    this.#chain.push(entry);
    return this.#info(entry, this.#chain.length - 1, now);
  }

  /** Every published key with its schedule; public information only. */
  list(now = this.#now()): KeyInfo[] {
    const chain = this.#published(now);
    const infos = chain.map((e) => this.#info(e, this.#chain.indexOf(e), now));
    const extras = this.#extra.map(
      (jwk): KeyInfo => ({
        kid: jwk.kid,
        alg: 'RS256',
        status: 'published',
        signsFrom: null,
        signsUntil: null,
        unpublishAt: null,
        publicKey: { ...jwk },
      }),
    );
    return [...infos, ...extras];
  }

  #info(e: Entry, i: number, now: number): KeyInfo {
    const next = this.#chain[i + 1];
    const signsUntil = next ? next.signsFrom : null;
    const status = e.signsFrom > now ? 'next' : signsUntil !== null && signsUntil <= now ? 'retiring' : 'signing';
    return {
      kid: e.jwk.kid,
      alg: 'RS256',
      status,
      signsFrom: Number.isFinite(e.signsFrom) ? e.signsFrom : null,
      signsUntil,
      unpublishAt: next ? next.signsFrom + next.retireAfterMs : null,
      publicKey: { ...e.jwk },
    };
  }

  #signer(now: number): Entry {
    let signer = this.#chain[0]!;
    for (const e of this.#chain) if (e.signsFrom <= now) signer = e;
    return signer;
  }

  /** Chain keys still published at `now`; drops the ones whose tokens are all stale. */
  #published(now: number): Entry[] {
    const live = this.#chain.filter((_e, i) => {
      const next = this.#chain[i + 1];
      return !next || now < next.signsFrom + next.retireAfterMs;
    });
    // Only forget keys for good once no caller can ask about an earlier time (clocks move forward).
    if (live.length !== this.#chain.length && live[0] === this.#signer(now)) this.#chain = live;
    return live;
  }
}
