import { sign } from 'node:crypto';
import type { EventRecord } from '../model.js';
import type { ImportedKey } from './keys.js';

/** The claims of every webhook token. `timestamp` is the time of this attempt. */
export interface WebhookClaims {
  type: string;
  event_id: string;
  event_timestamp: string;
  timestamp: string;
  source: string;
  data: Record<string, unknown>;
  iss: string;
  iat: number;
}

export function buildClaims(event: EventRecord, issuer: string, now: number): WebhookClaims {
  return {
    type: event.type,
    event_id: event.id,
    event_timestamp: new Date(event.eventTimestamp).toISOString(),
    timestamp: new Date(now).toISOString(),
    source: event.source,
    data: event.data,
    iss: issuer,
    iat: Math.floor(now / 1000),
  };
}

/**
 * RS256 JWT with header `{ alg: 'RS256', kid, typ: 'JWT' }`: base64url(header).base64url(claims),
 * signed RSASSA-PKCS1-v1_5 with SHA-256 in libuv's thread pool. Written out rather than through
 * jose's `SignJWT`, which validates the claims it is given, encodes base64 in JavaScript and goes
 * through WebCrypto: measurably more CPU per token, and at fan-out 1 every delivery signs one. The
 * tokens are verified with jose in the tests (and by receivers) like any other.
 */
export function signClaims(claims: WebhookClaims, key: ImportedKey): Promise<string> {
  const input = `${key.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return new Promise((resolve, reject) =>
    sign('sha256', Buffer.from(input), key.object, (error, signature) =>
      error ? reject(error) : resolve(`${input}.${signature.toString('base64url')}`),
    ),
  );
}
