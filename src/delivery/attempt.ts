import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { AttemptRecord, ClaimedDelivery } from '../model.js';
import { VERSION } from '../version.js';
import type { EndpointAccess } from './endpoint-access.js';
import type { Guard } from './guard/guard.js';
import { type Transport, TransportError, type TransportRequest } from './transport.js';

/** Names us to receivers; the version comes from package.json at build time (scripts/version.mjs). */
export const USER_AGENT = `identity-webhooks/${VERSION}`;

/**
 * One HTTP try of one delivery: POST the token with `webhook-id`, classify the outcome. Only an
 * HTTP 200 is a success; any other status (redirects included: they are never followed), a
 * timeout, a network error or an address the guard refuses (`blocked`) is a failure. Never
 * throws: every outcome becomes an attempt record.
 *
 * The record and the request are object literals, never `{ ...base, more }`: on Node 20 each
 * property added after a spread is slow to add, and this record is built once per delivery.
 */
export async function runAttempt(
  claimed: ClaimedDelivery,
  token: Promise<string>,
  deps: { transport: Transport; clock: Clock; timeoutMs: number; guard?: Guard },
  /** W3C trace context for the receiver (`telemetry.propagateTraceContext`); absent: no header. */
  traceparent?: string,
  /** The webhook's format and auth (issue 37: `endpoint-access.ts`); absent: a JWT, no auth. */
  access?: EndpointAccess,
): Promise<AttemptRecord> {
  const startedAt = deps.clock.now();
  const t0 = performance.now();
  const id = newId('attempt', startedAt);
  const record = (
    statusCode: number | null,
    errorKind: AttemptRecord['errorKind'],
    errorMessage: string | null,
    responseExcerpt: string | null,
  ): AttemptRecord => ({
    id,
    deliveryId: claimed.delivery.id,
    webhookId: claimed.webhook.id,
    environment: claimed.delivery.environment,
    startedAt,
    durationMs: performance.now() - t0,
    statusCode,
    errorKind,
    errorMessage,
    responseExcerpt,
    success: errorKind === null,
  });
  try {
    const body = await token;
    const headers: Record<string, string> = {
      'content-type': access === undefined ? 'application/jwt' : access.contentType,
      'webhook-id': claimed.delivery.id,
      'user-agent': USER_AGENT,
    };
    if (traceparent !== undefined) headers.traceparent = traceparent;
    // Signing formats and endpoint auth (issue 37): the signature, the bearer token, the client certificate.
    if (access !== undefined) Object.assign(headers, await access.headers(claimed.delivery.id, body, false));
    const request: TransportRequest = { url: claimed.webhook.endpoint, headers, body, timeoutMs: deps.timeoutMs };
    if (deps.guard) request.guard = deps.guard;
    if (access?.clientCertificate !== undefined) request.clientCertificate = access.clientCertificate;
    let res = await deps.transport.send(request);
    if (res.status === 401 && access?.refreshes) {
      // Refused with the token we had: once more with a new one.
      Object.assign(headers, await access.headers(claimed.delivery.id, body, true));
      res = await deps.transport.send(request);
    }
    // An endpoint that echoes what it was sent must not put our bearer token in the attempt log.
    if (access?.refreshes && headers.authorization)
      res = { status: res.status, excerpt: res.excerpt.replaceAll(headers.authorization.slice(7), '********') };
    if (res.status === 200) return record(200, null, null, res.excerpt || null);
    const kind = res.status >= 300 && res.status < 400 ? 'redirect' : 'status';
    return record(res.status, kind, unexpectedStatus(res.status, res.excerpt), res.excerpt || null);
  } catch (error) {
    const kind = error instanceof TransportError ? error.code : 'internal';
    return record(null, kind, (error instanceof Error ? error.message : String(error)).slice(0, 500), null);
  }
}

/** Says what was wrong with the answer: only 200 counts (a 204 or 201 surprises people), and how the body began. */
function unexpectedStatus(status: number, excerpt: string): string {
  const start = excerpt.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `expected HTTP 200, got ${status}${start ? `: ${start}` : ''}`;
}
