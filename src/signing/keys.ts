import { KeyObject } from 'node:crypto';
import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

/** A private RSA key as a JWK with its `kid` (what `generateSigningKey` returns). */
export interface SigningKey extends JWK {
  kty: 'RSA';
  kid: string;
  n: string;
  e: string;
  d: string;
}

/** The public half as published in the JWKS. */
export interface PublicJwk {
  kty: 'RSA';
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

const MIN_BITS = 2048;

/**
 * Makes a new RS256 private key (2048-bit by default) as a JWK, with `kid` set to its RFC 7638
 * thumbprint. Store it like any secret; pass it in `createWebhooks({ keys: [key] })`.
 *
 * @example
 * ```ts
 * const key = await generateSigningKey();
 * fs.writeFileSync('signing-key.json', JSON.stringify(key), { mode: 0o600 });
 * ```
 */
export async function generateSigningKey(options: { modulusLength?: number; kid?: string } = {}): Promise<SigningKey> {
  const modulusLength = options.modulusLength ?? 2048;
  if (!Number.isInteger(modulusLength) || modulusLength < MIN_BITS) {
    throw new TypeError(`generateSigningKey: modulusLength must be an integer >= ${MIN_BITS}`);
  }
  const { privateKey } = await generateKeyPair('RS256', { modulusLength, extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = options.kid ?? (await calculateJwkThumbprint({ kty: 'RSA', n: jwk.n!, e: jwk.e! }));
  return { ...jwk, kty: 'RSA', kid, alg: 'RS256', use: 'sig' } as SigningKey;
}

/** Checks a key given in the options; throws a TypeError that never quotes key material. */
export function assertSigningKey(key: unknown, where: string): asserts key is SigningKey {
  const k = key as Partial<SigningKey> | null;
  if (typeof k !== 'object' || k === null) throw new TypeError(`${where}: must be a private JWK object`);
  if (k.kty !== 'RSA') throw new TypeError(`${where}: RS256 needs an RSA key (kty "RSA"), got kty ${JSON.stringify(k.kty ?? null)}`);
  if (typeof k.d !== 'string' || !k.d) throw new TypeError(`${where}: is a public key; a private key (with "d") is needed to sign`);
  if (typeof k.n !== 'string' || typeof k.e !== 'string') throw new TypeError(`${where}: is missing its modulus "n" or exponent "e"`);
  // e = 1 makes "signatures" that anyone can forge; an even e is not an RSA key at all.
  const e = BigInt(`0x${Buffer.from(k.e, 'base64url').toString('hex') || '0'}`);
  if (e < 3n || e % 2n === 0n) throw new TypeError(`${where}: RSA public exponent "e" must be odd and at least 3`);
  const bits = modulusBits(k.n);
  if (bits < MIN_BITS) throw new TypeError(`${where}: RSA key of ${bits} bits is too short; RS256 needs ${MIN_BITS} bits or more`);
  if (typeof k.kid !== 'string' || k.kid.length === 0 || k.kid.length > 200)
    throw new TypeError(`${where}: needs a "kid" (1-200 characters)`);
  if (k.alg !== undefined && k.alg !== 'RS256') throw new TypeError(`${where}: alg must be RS256, got ${JSON.stringify(k.alg)}`);
}

function modulusBits(n: string): number {
  const bytes = Buffer.from(n, 'base64url');
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  if (i === bytes.length) return 0;
  return (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i]!));
}

/** Public parts only: the private members (d, p, q, dp, dq, qi, oth) never leave this function. */
export function toPublicJwk(key: SigningKey): PublicJwk {
  return { kty: 'RSA', n: key.n, e: key.e, kid: key.kid, alg: 'RS256', use: 'sig' };
}

/** A key ready to sign: its kid and the imported (non-extractable) CryptoKey. */
export interface ImportedKey {
  kid: string;
  key: CryptoKey;
  /** The same key as node:crypto signs with (see `token.ts`). */
  object: KeyObject;
  /** The token header `{ alg: 'RS256', kid, typ: 'JWT' }`, base64url-encoded once. */
  header: string;
}

/** Imports the private key as a non-extractable CryptoKey; errors name the kid, never key material. */
export async function importSigningKey(key: SigningKey): Promise<ImportedKey> {
  const { kid, n, e, d, p, q, dp, dq, qi } = key;
  try {
    const imported = (await importJWK({ kty: 'RSA', n, e, d, p, q, dp, dq, qi }, 'RS256', { extractable: false })) as CryptoKey;
    const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid, typ: 'JWT' })).toString('base64url');
    return { kid, key: imported, object: KeyObject.from(imported), header };
  } catch (error) {
    throw new TypeError(`key ${JSON.stringify(kid)} could not be imported as an RS256 private key`, { cause: error });
  }
}
