import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { DataPointType, MeterProvider, type MetricData, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** A reader the test collects from when it wants to, instead of on a timer. */
class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * The host's OpenTelemetry SDK as a test sees it: real providers from the SDK, with an in-memory
 * span exporter (every span as it ends) and a metric reader collected on demand.
 */
export function testSdk() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const collect = async (): Promise<Map<string, MetricData>> => {
    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
    return new Map(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.map((m) => [m.descriptor.name, m] as const)));
  };
  return {
    telemetry: { meterProvider, tracerProvider },
    meterProvider,
    tracerProvider,
    /** The host application's own tracer (its request spans). */
    host: tracerProvider.getTracer('host-app'),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    collect,
    /** Counter points of `name` as [attributes, value]. */
    async counter(name: string): Promise<Array<[Record<string, unknown>, number]>> {
      const m = (await collect()).get(name);
      if (!m) return [];
      if (m.dataPointType !== DataPointType.SUM) throw new Error(`${name} is not a counter`);
      return m.dataPoints.map((p) => [p.attributes, p.value]);
    },
    /** Histogram points of `name`: attributes, count, sum, min, max. */
    async histogram(name: string) {
      const m = (await collect()).get(name);
      if (!m) return [];
      if (m.dataPointType !== DataPointType.HISTOGRAM) throw new Error(`${name} is not a histogram`);
      return m.dataPoints.map((p) => ({
        attributes: p.attributes,
        count: p.value.count,
        sum: p.value.sum ?? NaN,
        min: p.value.min,
        max: p.value.max,
      }));
    },
    /** The single value of gauge `name`, or undefined when nothing was observed. */
    async gauge(name: string): Promise<number | undefined> {
      const m = (await collect()).get(name);
      if (!m || m.dataPoints.length === 0) return undefined;
      if (m.dataPointType !== DataPointType.GAUGE) throw new Error(`${name} is not a gauge`);
      if (m.dataPoints.length !== 1) throw new Error(`${name} has ${m.dataPoints.length} points`);
      return m.dataPoints[0]!.value;
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

export type TestSdk = ReturnType<typeof testSdk>;

/** The host's active context across awaits (what `startActiveSpan` needs), for one test file. */
export function useContextManager(): () => void {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  return () => {
    context.disable();
  };
}

/** Sums counter points whose attributes include `match`. */
export function total(points: Array<[Record<string, unknown>, number]>, match: Record<string, unknown> = {}): number {
  return points.filter(([a]) => Object.entries(match).every(([k, v]) => a[k] === v)).reduce((sum, [, v]) => sum + v, 0);
}
