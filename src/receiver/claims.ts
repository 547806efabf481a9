import { WebhookVerificationError } from './errors.js';

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

/**
 * Checks the envelope of a verified token: every claim a handler relies on is present with its
 * type, and `timestamp` (the time of this attempt, renewed on every attempt) is inside
 * `[now - maxAge, now + skew]`. Without that window a captured delivery could be replayed forever.
 */
export function checkClaims(payload: Record<string, unknown>, now: number, maxAgeMs: number, skewMs: number): void {
  for (const name of ['type', 'event_id', 'event_timestamp', 'timestamp', 'source'] as const) {
    if (typeof payload[name] !== 'string' || payload[name] === '') invalid(`the "${name}" claim must be a non-empty string`);
  }
  const data = payload.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) invalid('the "data" claim must be an object');
  if (typeof payload.iat !== 'number') invalid('the "iat" claim must be a number');

  const stamp = payload.timestamp as string;
  const at = ISO_UTC.test(stamp) ? Date.parse(stamp) : Number.NaN;
  if (Number.isNaN(at)) invalid('the "timestamp" claim must be an ISO 8601 date-time');
  if (now - at > maxAgeMs) {
    throw new WebhookVerificationError('ERR_TIMESTAMP_STALE', `timestamp is more than ${maxAgeMs / 1000} s old`);
  }
  if (at - now > skewMs) {
    throw new WebhookVerificationError('ERR_TIMESTAMP_FUTURE', `timestamp is more than ${skewMs / 1000} s in the future`);
  }
}

function invalid(message: string): never {
  throw new WebhookVerificationError('ERR_INVALID_CLAIMS', message);
}
