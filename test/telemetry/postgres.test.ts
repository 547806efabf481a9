import { fork } from 'node:child_process';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks, type SigningKey } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { buildForChildren, until } from '../helpers/fleet.js';
import { startReceiver } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
import { testSdk, useContextManager } from './sdk.js';

/**
 * The trace crosses processes through the database: this process emits inside the host's
 * request spans and never delivers; a child process with its own SDK (registered globally, as a
 * host would) claims and attempts. Its deliver spans must continue the trace of the request that
 * emitted each event, as children of that event's emit span.
 */
let server: TestPostgres;
let dist: string;
let key: SigningKey;
let stopContext: () => void;
beforeAll(async () => {
  stopContext = useContextManager();
  [server, dist, key] = await Promise.all([useTestPostgres('telemetry'), buildForChildren(), testKey()]);
}, 120_000);
afterAll(async () => {
  stopContext();
  await server?.close();
});
const cleanups = useCleanups();

interface Report {
  errors: string[];
  spans: Array<{
    name: string;
    kind: SpanKind;
    traceId: string;
    spanId: string;
    parentSpanId?: string;
    attributes: Record<string, unknown>;
    status: { code: number };
  }>;
  metrics: Array<{ name: string; unit: string; points: Array<{ attributes: Record<string, unknown>; value: unknown }> }>;
}

async function spawnTraceWorker(url: string, id: string) {
  const child = fork(join(import.meta.dirname, 'trace-worker.mjs'), [], {
    env: { ...process.env, IW_DIST: dist, DATABASE_URL: url, WORKER_ID: id, IW_KEY: JSON.stringify(key) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [],
  });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${id}: no ${type} within 30 s`)), 30_000);
      const onMessage = (m: { type?: string }) => {
        if (m?.type !== type) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(m as T);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`${id} exited (${code}) waiting for ${type}`)));
    });
  await next('ready');
  cleanups.push(() => (child.exitCode === null ? child.kill('SIGKILL') : undefined));
  return {
    report: () => (child.send({ type: 'report' }), next<Report>('report')),
    stop: () => (child.send({ type: 'stop' }), next('stopped')),
  };
}

test("two processes on one PostgreSQL: the worker's deliver spans continue the trace of the request that emitted in the other", async () => {
  const schema = await createSchema(server.url, 'otel');
  cleanups.push(() => schema.drop());
  const sdk = testSdk();
  const receiver = await startReceiver((req) => (req.path.startsWith('/ok') ? 200 : 500));
  const store = postgresStore({ connectionString: schema.url, maxConnections: 4 });
  // The emitting process: the host's SDK, never started (it delivers nothing).
  const emitter = createWebhooks({ store, keys: [key], issuer: 'http://127.0.0.1/', allowPrivateNetworks: true, telemetry: sdk.telemetry });
  cleanups.push(
    () => sdk.shutdown(),
    () => receiver.close(),
    () => emitter.close(),
  );
  await emitter.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
  await emitter.webhooks.create({ name: 'bad', endpoint: `${receiver.url}/bad`, eventTypes: ['user.created'] });
  const worker = await spawnTraceWorker(schema.url, 'otel-w1');

  // Three requests of the host, each its own trace; the last emits inside the host's transaction.
  const requests: Array<{ traceId: string; spanId: string; eventId: string; deliveryIds: string[] }> = [];
  for (let i = 0; i < 3; i++) {
    await sdk.host.startActiveSpan(`POST /users ${i}`, async (span) => {
      const event =
        i < 2
          ? await emitter.emit({ type: 'user.created', source: 'user', data: userData() })
          : await store.kysely
              .transaction()
              .execute((trx) => emitter.emit({ type: 'user.created', source: 'user', data: userData() }, { transaction: trx }));
      requests.push({ ...span.spanContext(), eventId: event.id, deliveryIds: event.deliveryIds });
      span.end();
    });
  }
  await until('every first attempt', () => receiver.requests.length >= 6, 20_000, 10);
  let report = await worker.report();
  await until(
    'every deliver span ended',
    async () => (report = await worker.report()).spans.filter((s) => s.name === 'webhooks.deliver').length >= 6,
    10_000,
    50,
  );
  await worker.stop();
  expect(report.errors).toEqual([]);

  const emitSpans = sdk.spans().filter((s) => s.name === 'webhooks.emit');
  expect(emitSpans).toHaveLength(3);
  expect(sdk.spans().filter((s) => s.name === 'webhooks.deliver')).toEqual([]); // this process never delivered
  const delivers = report.spans.filter((s) => s.name === 'webhooks.deliver');
  expect(delivers).toHaveLength(6);
  for (const request of requests) {
    const emitSpan = emitSpans.find((s) => s.attributes['webhooks.event_id'] === request.eventId)!;
    expect(emitSpan.spanContext().traceId).toBe(request.traceId);
    expect(emitSpan.parentSpanContext?.spanId).toBe(request.spanId);
    const mine = delivers.filter((d) => request.deliveryIds.includes(d.attributes['webhooks.delivery_id'] as string));
    expect(mine).toHaveLength(2);
    for (const d of mine) {
      expect(d.kind).toBe(SpanKind.CLIENT);
      expect(d.traceId).toBe(request.traceId);
      expect(d.parentSpanId).toBe(emitSpan.spanContext().spanId);
    }
    expect(mine.map((d) => d.status.code).sort()).toEqual([SpanStatusCode.UNSET, SpanStatusCode.ERROR].sort());
  }
  // The worker counted what the receiver saw.
  const attempts = report.metrics.find((m) => m.name === 'webhooks.attempts')!;
  const byOutcome = Object.fromEntries(attempts.points.map((p) => [p.attributes['webhooks.outcome'], p.value]));
  expect(byOutcome).toEqual({ success: 3, failure: 3 });
  expect(receiver.requests.filter((r) => r.path === '/ok')).toHaveLength(3);
  expect(report.metrics.find((m) => m.name === 'webhooks.attempt.duration')?.unit).toBe('s');
}, 120_000);
