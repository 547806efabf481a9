// `--telemetry`: every engine process registers an OpenTelemetry SDK before it creates its
// engine, as a host's `--import ./otel.mjs` would: the AsyncLocalStorage context manager, a
// tracer provider that samples everything (BatchSpanProcessor, the SDK's default for export),
// and a meter provider read every 10 s (a typical scrape; the due gauge counts once per read).
// The exporters are in memory and keep counts, not data, so the heap does not grow with the
// run: what is measured is the engine's instrumentation and the SDK, not a network exporter.
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export const telemetryCounts = { spans: 0, metricExports: 0 };

const SUCCESS = { code: 0 }; // ExportResultCode.SUCCESS

let registered = false;

export function registerTelemetry() {
  if (registered) return;
  registered = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const spanExporter = {
    export(spans, done) {
      telemetryCounts.spans += spans.length;
      done(SUCCESS);
    },
    async shutdown() {},
  };
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spanExporter)] }));
  const metricExporter = {
    export(_metrics, done) {
      telemetryCounts.metricExports++;
      done(SUCCESS);
    },
    selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
    async forceFlush() {},
    async shutdown() {},
  };
  metrics.setGlobalMeterProvider(
    new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 10_000 })] }),
  );
}

/** Exports what is still buffered; returns what was exported in this process (a check that the SDK saw the engine). */
export async function flushTelemetry() {
  await trace.getTracerProvider().getDelegate?.().forceFlush?.();
  return { ...telemetryCounts };
}
