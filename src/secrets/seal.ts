/**
 * Secrets sealed at rest: every secret a webhook carries (a credential header's value, a signing
 * secret, an OAuth2 client secret, an mTLS private key) is stored as a sealed text, never in
 * clear. Sealing is AES-256-GCM under the host's `secretsKey`, with the owning row's id as
 * associated data, so a sealed value copied onto another row does not open there.
 *
 * `secretsKey` is one or more 32-byte keys. The first seals; every one opens, so a host rotates by
 * putting a new key first, running {@link Sealer.reseal} over its rows (or letting updates do it),
 * then dropping the old key.
 *
 * A sealed text reads `sealed:v1:<key id>:<iv>:<ciphertext and tag>` (base64url parts). The key id
 * is the first 8 hex digits of the key's SHA-256: it says which key to try, not the key.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { WebhooksError } from '../errors.js';

/** A 32-byte key: the bytes, or their base64 / base64url / hex text. */
export type SecretsKeyInput = Uint8Array | string;

/** How every sealed text begins (a store may look for it, e.g. in a column of JSON). */
export const SEALED_PREFIX = 'sealed:v1:';
const PREFIX = SEALED_PREFIX;

interface Key {
  id: string;
  bytes: Buffer;
}

/** Seals and opens secrets under the host's keys. Made by {@link createSealer}. */
export interface Sealer {
  /** Seals `plaintext` for the row `rowId`, under the first key. */
  seal(plaintext: string, rowId: string): string;
  /** Opens a text {@link seal} made for the same `rowId`, under whichever key sealed it. */
  open(sealed: string, rowId: string): string;
  /** True when `sealed` was sealed by a key other than the first: {@link reseal} would change it. */
  isStale(sealed: string): boolean;
  /** Opens and seals again under the first key (unchanged when already under it). */
  reseal(sealed: string, rowId: string): string;
}

/** True for a text {@link Sealer.seal} made (whatever the key). */
export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

function keyBytes(input: SecretsKeyInput, index: number): Buffer {
  let bytes: Buffer;
  if (typeof input === 'string') {
    const text = input.trim();
    bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  } else if (input instanceof Uint8Array) {
    bytes = Buffer.from(input);
  } else {
    throw new TypeError(`secretsKey[${index}] must be 32 bytes, or their base64 or hex text`);
  }
  const make = `make one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`;
  if (bytes.length !== 32) throw new TypeError(`secretsKey[${index}] must be 32 bytes (got ${bytes.length}); ${make}`);
  // 32 random bytes hold about 30 distinct values; fewer than half of them is no random key (all
  // zeros, a repeated pattern, a word padded out): refused before it seals anything.
  // (The sealing key only: an older one listed to open what it sealed must still be accepted.)
  if (index === 0 && new Set(bytes).size < 16)
    throw new TypeError(`secretsKey[${index}] is not random (${new Set(bytes).size} distinct bytes of 32); ${make}`);
  return bytes;
}

/**
 * The sealer for the host's `secretsKey` (one key or several, the first sealing), or null when
 * the host gave none: then a webhook that needs a secret is refused with `ERR_SECRETS_KEY_REQUIRED`
 * (see {@link requireSealer}). Throws a `TypeError` for a key that is not 32 bytes.
 */
export function createSealer(secretsKey: SecretsKeyInput | readonly SecretsKeyInput[] | undefined): Sealer | null {
  if (secretsKey === undefined) return null;
  const inputs = Array.isArray(secretsKey) ? secretsKey : [secretsKey as SecretsKeyInput];
  if (inputs.length === 0) throw new TypeError('secretsKey must hold at least one key');
  const keys: Key[] = inputs.map((input, i) => {
    const bytes = keyBytes(input, i);
    return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 8), bytes };
  });
  const first = keys[0] as Key;

  const seal = (plaintext: string, rowId: string): string => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', first.bytes, iv);
    cipher.setAAD(Buffer.from(rowId, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${first.id}:${iv.toString('base64url')}:${body.toString('base64url')}`;
  };

  const open = (sealed: string, rowId: string): string => {
    const parts = sealed.startsWith(PREFIX) ? sealed.slice(PREFIX.length).split(':') : [];
    if (parts.length !== 3) throw unreadable(rowId, 'it is not a sealed text');
    const [keyId, ivText, bodyText] = parts as [string, string, string];
    const key = keys.find((k) => k.id === keyId);
    if (key === undefined) throw unreadable(rowId, `it was sealed under key ${keyId}, which secretsKey no longer holds`);
    const body = Buffer.from(bodyText, 'base64url');
    if (body.length < 16) throw unreadable(rowId, 'it is cut short');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(ivText, 'base64url'));
      decipher.setAAD(Buffer.from(rowId, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw unreadable(rowId, 'it does not open under its key for this row (altered, or copied from another row)');
    }
  };

  const isStale = (sealed: string): boolean => !sealed.startsWith(`${PREFIX}${first.id}:`);

  return {
    seal,
    open,
    isStale,
    reseal: (sealed, rowId) => (isStale(sealed) ? seal(open(sealed, rowId), rowId) : sealed),
  };
}

function unreadable(rowId: string, why: string): WebhooksError {
  return new WebhooksError('ERR_SECRETS_KEY_REQUIRED', `a secret stored for ${rowId} cannot be opened: ${why}`);
}

/**
 * The sealer, or a typed refusal naming what needs it: for a webhook created or updated with a
 * secret (a credential header, a signing format, endpoint auth) when the host set no `secretsKey`.
 */
export function requireSealer(sealer: Sealer | null, what: string, field?: string): Sealer {
  if (sealer !== null) return sealer;
  throw new WebhooksError(
    'ERR_SECRETS_KEY_REQUIRED',
    `${what} needs a secret stored sealed, and the engine has no secretsKey: set the secretsKey option (32 random bytes, base64) to use it`,
    field === undefined ? {} : { field },
  );
}
