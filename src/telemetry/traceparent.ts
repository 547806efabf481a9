import { isSpanContextValid, type SpanContext } from '@opentelemetry/api';

/** Version 00 of the W3C Trace Context header: `00-<trace id>-<span id>-<flags>`, lowercase hex. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A span context as a W3C `traceparent` (what `emit` stores with the event and what the optional
 * request header carries), or null when there is no valid context to continue. Written here, not
 * through the global propagator: the host may have registered none, and the stored form must not
 * depend on its choice.
 */
export function toTraceparent(context: SpanContext): string | null {
  if (!isSpanContextValid(context)) return null;
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The remote span context a stored `traceparent` names, or null when it is absent or malformed. */
export function fromTraceparent(value: string | null | undefined): SpanContext | null {
  if (!value) return null;
  const match = TRACEPARENT.exec(value);
  if (!match) return null;
  const context: SpanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true };
  return isSpanContextValid(context) ? context : null;
}
