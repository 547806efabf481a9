// A host process with an OpenTelemetry SDK registered globally (as a host's --import setup
// would), delivering from the shared PostgreSQL: the other half of postgres.test.ts. Plain .mjs
// over the compiled dist (children cannot use vitest's TypeScript transform). The parent asks
// for what it recorded ({ type: 'report' }) and stops it ({ type: 'stop' }).
import { pathToFileURL } from 'node:url';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const { IW_DIST, DATABASE_URL, WORKER_ID, IW_KEY } = process.env;
setTimeout(() => process.exit(3), 120_000).unref(); // never outlive a broken test run
process.on('disconnect', () => process.exit(0));

// The SDK first, then the engine: meters are taken when the engine is created.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const spans = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
class CollectingReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const reader = new CollectingReader();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

const load = (path) => import(pathToFileURL(`${IW_DIST}/${path}`).href);
const { createWebhooks } = await load('src/index.js');
const { postgresStore } = await load('adapters/postgres/index.js');
const errors = [];
const hooks = createWebhooks({
  store: postgresStore({ connectionString: DATABASE_URL, maxConnections: 4 }),
  keys: [JSON.parse(IW_KEY)],
  issuer: 'http://127.0.0.1/',
  allowPrivateNetworks: true,
  workerId: WORKER_ID,
  delivery: { pollIntervalMs: 500, timeoutMs: 2000 },
  logger: { warn: () => {}, error: (message, meta) => errors.push(`${message} ${JSON.stringify(meta)}`) },
});
await hooks.start();
process.send({ type: 'ready' });

process.on('message', async (message) => {
  if (message?.type === 'report') {
    const { resourceMetrics } = await reader.collect();
    process.send({
      type: 'report',
      errors,
      spans: spans.getFinishedSpans().map((s) => ({
        name: s.name,
        kind: s.kind,
        traceId: s.spanContext().traceId,
        spanId: s.spanContext().spanId,
        parentSpanId: s.parentSpanContext?.spanId,
        attributes: s.attributes,
        status: s.status,
      })),
      metrics: resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.map((m) => ({
          name: m.descriptor.name,
          unit: m.descriptor.unit,
          points: m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value })),
        })),
      ),
    });
  } else if (message?.type === 'stop') {
    await hooks.close();
    process.send({ type: 'stopped' }, () => process.disconnect());
  }
});
