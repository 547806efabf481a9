/**
 * Standard Webhooks (https://www.standardwebhooks.com): the body, the secrets and the
 * `webhook-signature` header, computed exactly as the specification and its reference verifiers
 * (`standardwebhooks`, `svix`) compute them:
 *
 * - body: JSON `{ type, timestamp, data }` plus our `event_id`, `event_timestamp`, `source`;
 * - signed content: `{webhook-id}.{webhook-timestamp}.{body}` (the timestamp in Unix seconds);
 * - `v1,<base64 HMAC-SHA256>` keyed by the bytes after `whsec_` (base64), one per live secret,
 *   space-separated; `v1a,<base64 Ed25519>` when the webhook has an asymmetric key.
 */
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import type { EventRecord } from '../model.js';

export const SECRET_PREFIX = 'whsec_';
export const PUBLIC_KEY_PREFIX = 'whpk_';
export const PRIVATE_KEY_PREFIX = 'whsk_';

/** Random bytes in a new signing secret: within the specification's 24 to 64. */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The HMAC key of a `whsec_…` secret: the base64 bytes after the prefix (a bare base64 text too). */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** A new Ed25519 pair for `v1a`: `whsk_` + base64 of the PKCS#8 DER, `whpk_` + base64 of the raw public key. */
export function newEd25519Pair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'jwk' }).x as string;
  return {
    privateKey: `${PRIVATE_KEY_PREFIX}${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`,
    publicKey: `${PUBLIC_KEY_PREFIX}${Buffer.from(raw, 'base64url').toString('base64')}`,
  };
}

/** The private key object of a `whsk_…` text. */
export function ed25519PrivateKey(text: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(text.slice(PRIVATE_KEY_PREFIX.length), 'base64'), format: 'der', type: 'pkcs8' });
}

/** The public key object of a `whpk_…` text (the raw 32 bytes). */
export function ed25519PublicKey(text: string): KeyObject {
  const raw = Buffer.from(text.startsWith(PUBLIC_KEY_PREFIX) ? text.slice(PUBLIC_KEY_PREFIX.length) : text, 'base64');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/**
 * The body of a Standard Webhooks delivery. Like the JWT's claims it is the same for every
 * webhook of the event, so one serves them all; `timestamp` is the time it was built for.
 */
export function standardBody(event: EventRecord, now: number): string {
  return JSON.stringify({
    type: event.type,
    timestamp: new Date(now).toISOString(),
    data: event.data,
    event_id: event.id,
    event_timestamp: new Date(event.eventTimestamp).toISOString(),
    source: event.source,
  });
}

/** What signs one webhook's deliveries: its live HMAC keys (newest first) and its Ed25519 key, if any. */
export interface StandardKeys {
  hmac: readonly Buffer[];
  ed25519: KeyObject | null;
}

/** The `webhook-signature` value for one delivery: every live secret's `v1`, then `v1a`, space-separated. */
export function signatureHeader(keys: StandardKeys, id: string, timestamp: number, body: string): string {
  const content = `${id}.${timestamp}.${body}`;
  let header = '';
  for (const key of keys.hmac) {
    header += `${header ? ' ' : ''}v1,${createHmac('sha256', key).update(content).digest('base64')}`;
  }
  if (keys.ed25519) header += `${header ? ' ' : ''}v1a,${sign(null, Buffer.from(content), keys.ed25519).toString('base64')}`;
  return header;
}
