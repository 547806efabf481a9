import { type Span, SpanStatusCode } from '@opentelemetry/api';
import type { AttemptRecord, ClaimedDelivery } from '../model.js';
import { errorType } from './log-fields.js';

/**
 * The attributes of a `webhooks.deliver` span, exactly these: ids and the endpoint's host belong
 * on spans (one per attempt), never on metrics. Nothing of the token, the payload, the response
 * body or the key: the attempt's error message is left out too, since it quotes the response,
 * and a receiver may echo what it was sent.
 */
export function describeAttempt(span: Span, claimed: ClaimedDelivery, attempt: AttemptRecord): void {
  span.setAttributes({
    'http.request.method': 'POST',
    'webhooks.webhook_id': claimed.webhook.id,
    'webhooks.delivery_id': claimed.delivery.id,
    'webhooks.event_type': claimed.delivery.eventType,
    'webhooks.attempt': claimed.delivery.attemptCount + 1,
  });
  const host = hostOf(claimed.webhook.endpoint);
  if (host) span.setAttribute('server.address', host);
  if (attempt.statusCode !== null) span.setAttribute('http.response.status_code', attempt.statusCode);
  if (attempt.success) return;
  // As OpenTelemetry's HTTP conventions have it: the status code when there was an answer (only
  // 200 counts here, so a 204 is an error too), else a short category (timeout, network, dns,
  // blocked, internal).
  span.setAttribute('error.type', attempt.statusCode !== null ? String(attempt.statusCode) : (attempt.errorKind ?? 'internal'));
  span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.errorKind ?? 'internal' });
}

/** Marks a failed `webhooks.emit`: the error's code only (its message may quote the event's data). */
export function describeEmitFailure(span: Span, error: unknown): void {
  const type = errorType(error);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

function hostOf(endpoint: string): string | null {
  try {
    return new URL(endpoint).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
}
