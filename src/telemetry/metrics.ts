import { type Attributes, type Counter, createNoopMeter, type Histogram, type Meter, type ObservableCallback } from '@opentelemetry/api';
import type { AttemptRecord, ClaimedDelivery } from '../model.js';

/**
 * The engine's metrics: names, units and attributes are a contract (docs/operations.md, "Observability").
 * Attributes are bounded sets only (outcome, event type from the catalog, error kind, reason):
 * never ids, endpoints, environments or user data, which would explode cardinality and leak.
 */
export const METRICS = {
  events: 'webhooks.events',
  attempts: 'webhooks.attempts',
  attemptDuration: 'webhooks.attempt.duration',
  due: 'webhooks.deliveries.due',
  lag: 'webhooks.delivery.lag',
  disabled: 'webhooks.webhooks.disabled',
  notices: 'webhooks.notices',
} as const;

// Seconds. HTTP client durations: OpenTelemetry's semantic-convention buckets (5 milliseconds to
// 10 s; the attempt deadline is 15 s by default). Lag: from milliseconds (keeping up) to hours (a
// backlog).
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15];
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 12 * 3600];

const SUCCESS: Attributes = Object.freeze({ 'webhooks.outcome': 'success' });
const FAILURE: Attributes = Object.freeze({ 'webhooks.outcome': 'failure' });

/** The API's no-op meter (what the global provider hands out when no SDK is registered). */
const NoopMeter = createNoopMeter().constructor;

/**
 * The instruments, or null when `meter` is the API's no-op: then the engine builds no attribute
 * object and makes no call per delivery. (Meters are not proxies: an SDK registered after
 * `createWebhooks` is not seen, which is why docs/operations.md registers it first.)
 */
export function createInstruments(meter: Meter): Instruments | null {
  return meter instanceof NoopMeter ? null : new Instruments(meter);
}

export class Instruments {
  readonly #events: Counter;
  readonly #attempts: Counter;
  readonly #duration: Histogram;
  readonly #lag: Histogram;
  readonly #disabled: Counter;
  readonly #notices: Counter;

  constructor(private readonly meter: Meter) {
    this.#events = meter.createCounter(METRICS.events, { unit: '{event}', description: 'Events emitted (stored with their deliveries).' });
    this.#attempts = meter.createCounter(METRICS.attempts, {
      unit: '{attempt}',
      description: 'HTTP attempts of deliveries, by outcome (only HTTP 200 is a success).',
    });
    this.#duration = meter.createHistogram(METRICS.attemptDuration, {
      unit: 's',
      description: 'Duration of one attempt: the request, up to the response (or the error).',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#lag = meter.createHistogram(METRICS.lag, {
      unit: 's',
      description: 'From the time a delivery became due to the start of its attempt: how far behind the engine is.',
      advice: { explicitBucketBoundaries: LAG_BUCKETS },
    });
    this.#disabled = meter.createCounter(METRICS.disabled, {
      unit: '{webhook}',
      description: 'Webhooks disabled automatically after failing for the disable period.',
    });
    this.#notices = meter.createCounter(METRICS.notices, {
      unit: '{notice}',
      description: "Calls of the host's notifier with a notice, by outcome.",
    });
  }

  event(type: string): void {
    this.#events.add(1, { 'webhooks.event_type': type });
  }

  attempt(claimed: ClaimedDelivery, attempt: AttemptRecord): void {
    const type = claimed.delivery.eventType;
    this.#attempts.add(
      1,
      attempt.success
        ? { 'webhooks.outcome': 'success', 'webhooks.event_type': type }
        : { 'webhooks.outcome': 'failure', 'webhooks.event_type': type, 'webhooks.error_kind': attempt.errorKind ?? 'internal' },
    );
    this.#duration.record(attempt.durationMs / 1000, attempt.success ? SUCCESS : FAILURE);
    this.#lag.record(Math.max(0, attempt.startedAt - claimed.dueAt) / 1000);
  }

  disabled(reason: string): void {
    this.#disabled.add(1, { 'webhooks.reason': reason });
  }

  notice(success: boolean): void {
    this.#notices.add(1, success ? SUCCESS : FAILURE);
  }

  /** Observes the due count on each collection; returns a function that stops it (at close). */
  observeDue(read: () => Promise<number | null>): () => void {
    const gauge = this.meter.createObservableGauge(METRICS.due, {
      unit: '{delivery}',
      description: 'Deliveries due now and waiting for an attempt, in this store (every environment).',
    });
    const callback: ObservableCallback = async (result) => {
      const n = await read();
      if (n !== null) result.observe(n);
    };
    gauge.addCallback(callback);
    return () => gauge.removeCallback(callback);
  }
}
