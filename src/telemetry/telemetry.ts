import { context, metrics, ROOT_CONTEXT, SpanKind, type Tracer, trace } from '@opentelemetry/api';
import type { Clock } from '../clock.js';
import type { AttemptRecord, ClaimedDelivery, WebhookRecord } from '../model.js';
import type { DeliveryStore } from '../store.js';
import type { TelemetryOptions } from '../types.js';
import { VERSION } from '../version.js';
import { DueCount } from './due-count.js';
import { createInstruments, type Instruments } from './metrics.js';
import { describeAttempt, describeEmitFailure } from './spans.js';
import { fromTraceparent, toTraceparent } from './traceparent.js';

/** The instrumentation scope of every meter and tracer of the engine. */
export const SCOPE = 'identity-webhooks';

/**
 * OpenTelemetry for the engine, through the API only (a peer dependency: the host's SDK and ours
 * share one global; with none registered every call is a no-op). Traces: `webhooks.emit` in the
 * host's active context, its traceparent stored with the event; `webhooks.deliver` per attempt,
 * a child of that stored context (never of whatever context happens to be active), so the trace
 * continues in any process, hours later. Metrics: see `metrics.ts`.
 *
 * Cost without an SDK: one non-recording span object per emit and per attempt, and no metric
 * call at all (the no-op meter is detected once, here).
 */
export class Telemetry {
  readonly #tracer: Tracer;
  readonly #metrics: Instruments | null;
  readonly #propagate: boolean;
  readonly #stopDue: () => void = () => {};

  constructor(options: TelemetryOptions | undefined, deps: { store: Pick<DeliveryStore, 'countDue'>; clock: Clock }) {
    const o = checkOptions(options);
    this.#tracer = (o.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE, VERSION);
    this.#metrics = createInstruments((o.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE, VERSION));
    this.#propagate = o.propagateTraceContext === true;
    if (this.#metrics) {
      const due = new DueCount(() => deps.store.countDue(deps.clock.now()));
      this.#stopDue = this.#metrics.observeDue(() => due.read());
    }
  }

  /**
   * Runs emit's validation and write inside a `webhooks.emit` span (INTERNAL, in the caller's
   * active context) and gives the write the span's traceparent to store; counts the event.
   */
  emit<T extends { id: string; type: string; deliveryIds: string[] }>(write: (traceparent: string | null) => Promise<T>): Promise<T> {
    const parent = context.active();
    const span = this.#tracer.startSpan('webhooks.emit', { kind: SpanKind.INTERNAL }, parent);
    const recording = span.isRecording();
    const traceparent = toTraceparent(span.spanContext());
    // Active only when recorded: then the host's database spans of the write nest under it.
    const written = recording ? context.with(trace.setSpan(parent, span), write, undefined, traceparent) : write(traceparent);
    return written.then(
      (event) => {
        this.#metrics?.event(event.type);
        if (recording) {
          span.setAttributes({
            'webhooks.event_type': event.type,
            'webhooks.event_id': event.id,
            'webhooks.deliveries': event.deliveryIds.length,
          });
        }
        span.end();
        return event;
      },
      (error: unknown) => {
        if (recording) describeEmitFailure(span, error);
        span.end();
        throw error;
      },
    );
  }

  /**
   * Runs one attempt inside a `webhooks.deliver` span (CLIENT, child of the context stored with
   * the event) and records its metrics. `attempt` gets the `traceparent` header value when
   * `propagateTraceContext` is on.
   */
  async deliver<T extends { record: AttemptRecord }>(
    claimed: ClaimedDelivery,
    attempt: (traceparent: string | undefined) => Promise<T>,
  ): Promise<T> {
    const stored = fromTraceparent(claimed.traceparent);
    const parent = stored ? trace.setSpanContext(ROOT_CONTEXT, stored) : ROOT_CONTEXT;
    const span = this.#tracer.startSpan('webhooks.deliver', { kind: SpanKind.CLIENT }, parent);
    const recording = span.isRecording();
    const header = this.#propagate ? (toTraceparent(span.spanContext()) ?? undefined) : undefined;
    // Active while it runs, so an HTTP client instrumentation the host installed nests under it.
    const result = recording ? await context.with(trace.setSpan(ROOT_CONTEXT, span), attempt, undefined, header) : await attempt(header);
    if (recording) describeAttempt(span, claimed, result.record);
    span.end();
    this.#metrics?.attempt(claimed, result.record);
    return result;
  }

  /** A record disabled this webhook (counted once: only the record that flipped it reports it). */
  disabled(webhook: WebhookRecord): void {
    this.#metrics?.disabled(webhook.disabledReason ?? 'failing');
  }

  /** The notifier took a notice, or threw. */
  notice(success: boolean): void {
    this.#metrics?.notice(success);
  }

  /**
   * Runs `fn` outside the caller's context: the scheduler's loop, woken from a host request,
   * must not carry that request's span (and keep it alive) into every later pass.
   */
  detached<T>(fn: () => T): T {
    return context.with(ROOT_CONTEXT, fn);
  }

  /** Stops observing the due gauge (the store is about to close). */
  close(): void {
    this.#stopDue();
  }
}

function checkOptions(options: TelemetryOptions | undefined): TelemetryOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw new TypeError('createWebhooks: telemetry must be an object');
  const { meterProvider, tracerProvider, propagateTraceContext } = options;
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== 'function')
    throw new TypeError('createWebhooks: telemetry.meterProvider must be an OpenTelemetry MeterProvider (with getMeter)');
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== 'function')
    throw new TypeError('createWebhooks: telemetry.tracerProvider must be an OpenTelemetry TracerProvider (with getTracer)');
  if (propagateTraceContext !== undefined && typeof propagateTraceContext !== 'boolean')
    throw new TypeError('createWebhooks: telemetry.propagateTraceContext must be a boolean');
  return { meterProvider, tracerProvider, propagateTraceContext };
}
