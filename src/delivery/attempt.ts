import type { Clock } from '../clock.js';
import type { AttemptRecord, ClaimedDelivery } from '../model.js';
import { newId } from '../ids.js';
import type { Guard } from './guard/guard.js';
import { TransportError, type Transport } from './transport.js';

import { VERSION } from '../version.js';

/** Names us to receivers; the version comes from package.json at build time (scripts/version.mjs). */
export const USER_AGENT = `identity-webhooks/${VERSION}`;

/**
 * One HTTP try of one delivery: POST the token with `webhook-id`, classify the outcome. Only an
 * HTTP 200 is a success; any other status (redirects included: they are never followed), a
 * timeout, a network error or an address the guard refuses (`blocked`) is a failure. Never
 * throws: every outcome becomes an attempt record.
 */
export async function runAttempt(
  claimed: ClaimedDelivery,
  token: Promise<string>,
  deps: { transport: Transport; clock: Clock; timeoutMs: number; guard?: Guard },
  /** W3C trace context for the receiver (`telemetry.propagateTraceContext`); absent: no header. */
  traceparent?: string,
): Promise<AttemptRecord> {
  const startedAt = deps.clock.now();
  const t0 = performance.now();
  const base = {
    id: newId('attempt', startedAt),
    deliveryId: claimed.delivery.id,
    webhookId: claimed.webhook.id,
    environment: claimed.delivery.environment,
    startedAt,
  };
  try {
    const body = await token;
    const headers: Record<string, string> = {
      'content-type': 'application/jwt',
      'webhook-id': claimed.delivery.id,
      'user-agent': USER_AGENT,
    };
    if (traceparent !== undefined) headers.traceparent = traceparent;
    const res = await deps.transport.send({
      url: claimed.webhook.endpoint,
      headers,
      body,
      timeoutMs: deps.timeoutMs,
      ...(deps.guard ? { guard: deps.guard, policy: deps.guard } : {}),
    });
    const success = res.status === 200;
    return {
      ...base,
      durationMs: performance.now() - t0,
      statusCode: res.status,
      errorKind: success ? null : res.status >= 300 && res.status < 400 ? 'redirect' : 'status',
      errorMessage: success ? null : unexpectedStatus(res.status, res.excerpt),
      responseExcerpt: res.excerpt || null,
      success,
    };
  } catch (error) {
    const known = error instanceof TransportError;
    return {
      ...base,
      durationMs: performance.now() - t0,
      statusCode: null,
      errorKind: known ? error.code : 'internal',
      errorMessage: (error instanceof Error ? error.message : String(error)).slice(0, 500),
      responseExcerpt: null,
      success: false,
    };
  }
}

/** Says what was wrong with the answer: only 200 counts (a 204 or 201 surprises people), and how the body began. */
function unexpectedStatus(status: number, excerpt: string): string {
  const start = excerpt.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `expected HTTP 200, got ${status}${start ? `: ${start}` : ''}`;
}
