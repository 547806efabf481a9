import { webcrypto } from 'node:crypto';
import { type CryptoKey, importJWK } from 'jose';
import type { ImportedKey, PublicJwk } from './keys.js';

const PROBE = new TextEncoder().encode('identity-webhooks: key pair check');

/**
 * Signs a fixed probe with the private key and verifies it with the public half we publish.
 * Why: a JWK whose `d` does not belong to its `n` imports fine, and then every token it signs
 * fails verification at every receiver. Better a TypeError at startup or at `rotate()`. The
 * message names the kid only; WebCrypto's own errors never carry key material either.
 */
export async function checkKeyPair(imported: ImportedKey, publicJwk: PublicJwk, where: string): Promise<ImportedKey> {
  let ok = false;
  try {
    const signature = await webcrypto.subtle.sign('RSASSA-PKCS1-v1_5', imported.key as webcrypto.CryptoKey, PROBE);
    const verifier = (await importJWK({ ...publicJwk }, 'RS256')) as CryptoKey;
    ok = await webcrypto.subtle.verify('RSASSA-PKCS1-v1_5', verifier as webcrypto.CryptoKey, signature, PROBE);
  } catch (error) {
    throw new TypeError(`${where}: key ${JSON.stringify(publicJwk.kid)} cannot sign RS256`, { cause: error });
  }
  if (!ok) throw new TypeError(`${where}: the private half of key ${JSON.stringify(publicJwk.kid)} does not match its public modulus`);
  return imported;
}
