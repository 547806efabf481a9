
import { assertSigningKey, importSigningKey, toPublicJwk, type ImportedKey, type PublicJwk, type SigningKey } from './keys.js';

/**
 * The engine's keys: the first signs, all are published. Holds only imported CryptoKeys and the
 * public halves after construction, so no later code path can serialise private material.
 */
export class KeySet {
  #published: PublicJwk[];
  #signer: Promise<ImportedKey>;

  constructor(keys: readonly SigningKey[]) {
    if (!Array.isArray(keys) || keys.length === 0) throw new TypeError('createWebhooks: keys must be a non-empty array of private JWKs');
    keys.forEach((k, i) => assertSigningKey(k, `keys[${i}]`));
    const kids = new Set(keys.map((k) => k.kid));
    if (kids.size !== keys.length) throw new TypeError('createWebhooks: every key needs a distinct kid');
    this.#published = keys.map(toPublicJwk);
    this.#signer = importSigningKey(keys[0]!);
    this.#signer.catch(() => {}); // surfaced on first use
  }

  /** The key new tokens are signed with. */
  signingKey(): Promise<ImportedKey> {
    return this.#signer;
  }

  /** The JWKS document (`{ keys: [...] }`), public parts only. */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.#published.map((k) => ({ ...k })) };
  }
}

