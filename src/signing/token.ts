import { SignJWT } from 'jose';
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

/** RS256 JWT with header `{ alg: 'RS256', kid, typ: 'JWT' }`. */
export async function signClaims(claims: WebhookClaims, key: ImportedKey): Promise<string> {
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' }).sign(key.key);
}
