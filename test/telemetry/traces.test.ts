import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { useTelemetryEngines } from './engine.js';
import { testSdk, total } from './sdk.js';

const { cleanups, setup } = useTelemetryEngines();

const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('traces', () => {
  test("deliver spans continue the trace of the host's span active at emit: after a restart, under another active span, on every attempt", async () => {
    const { sdk, receiver, hooks, restart, clock } = await setup();
    const ok = await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    const bad = await hooks.webhooks.create({ name: 'bad', endpoint: `${receiver.url}/bad`, eventTypes: ['user.created'] });
    const request = await sdk.host.startActiveSpan('POST /signup', async (span) => {
      const event = await hooks.emit({ type: 'user.created', source: 'user', data: userData() });
      span.end();
      return { span, event };
    });
    const requestContext = request.span.spanContext();

    // Another process (here: a restarted engine on the same file) does the work, while an
    // unrelated request of the host is the active context.
    const again = await restart();
    await sdk.host.startActiveSpan('GET /health', async (span) => {
      await again.start();
      await again.drain();
      await clock.advance(10_000); // bad's second attempt
      await again.drain();
      span.end();
    });
    const spans = sdk.spans();
    const health = named(spans, 'GET /health')[0]!;

    const [emitSpan, ...moreEmits] = named(spans, 'webhooks.emit');
    expect(moreEmits).toEqual([]);
    expect(emitSpan!.kind).toBe(SpanKind.INTERNAL);
    expect(emitSpan!.spanContext().traceId).toBe(requestContext.traceId);
    expect(parentOf(emitSpan!)).toBe(requestContext.spanId);
    expect(emitSpan!.attributes).toEqual({
      'webhooks.event_type': 'user.created',
      'webhooks.event_id': request.event.id,
      'webhooks.deliveries': 2,
    });
    expect(emitSpan!.status.code).toBe(SpanStatusCode.UNSET);

    const delivers = named(spans, 'webhooks.deliver');
    expect(delivers).toHaveLength(receiver.requests.length);
    expect(delivers).toHaveLength(3);
    for (const d of delivers) {
      expect(d.kind).toBe(SpanKind.CLIENT);
      expect(d.spanContext().traceId).toBe(requestContext.traceId);
      expect(parentOf(d)).toBe(emitSpan!.spanContext().spanId); // the stored context, not GET /health
      expect(d.spanContext().traceId).not.toBe(health.spanContext().traceId);
    }
    const deliveryOf = (webhookId: string) =>
      request.event.deliveryIds.find((id) =>
        receiver.requests.some((r) => r.headers['webhook-id'] === id && r.path === (webhookId === ok.id ? '/ok' : '/bad')),
      );
    const success = delivers.find((d) => d.attributes['webhooks.webhook_id'] === ok.id)!;
    expect(success.attributes).toEqual({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'webhooks.webhook_id': ok.id,
      'webhooks.delivery_id': deliveryOf(ok.id),
      'webhooks.event_type': 'user.created',
      'webhooks.attempt': 1,
    });
    expect(success.status.code).toBe(SpanStatusCode.UNSET);
    const failures = delivers.filter((d) => d.attributes['webhooks.webhook_id'] === bad.id);
    expect(failures.map((d) => d.attributes['webhooks.attempt'])).toEqual([1, 2]);
    for (const f of failures) {
      expect(f.attributes).toMatchObject({
        'http.response.status_code': 500,
        'error.type': '500',
        'webhooks.delivery_id': deliveryOf(bad.id),
      });
      expect(Object.keys(f.attributes).sort()).toEqual([...Object.keys(success.attributes), 'error.type'].sort());
      expect(f.status).toEqual({ code: SpanStatusCode.ERROR, message: 'status' });
    }
    // Off by default: receivers are not told the trace.
    expect(receiver.requests.map((r) => r.headers.traceparent)).toEqual([undefined, undefined, undefined]);
  });

  test('without a host span, emit starts the trace and its deliveries join it', async () => {
    const { sdk, receiver, hooks } = await setup();
    await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    await hooks.start();
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const [emitSpan] = named(sdk.spans(), 'webhooks.emit');
    const [deliver] = named(sdk.spans(), 'webhooks.deliver');
    expect(parentOf(emitSpan!)).toBeUndefined();
    expect(deliver!.spanContext().traceId).toBe(emitSpan!.spanContext().traceId);
    expect(parentOf(deliver!)).toBe(emitSpan!.spanContext().spanId);
  });

  test("a refused emit is an ERROR span naming the error's code only; nothing is counted", async () => {
    const { sdk, hooks } = await setup();
    await expect(
      sdk.host.startActiveSpan('POST /users', async (span) => {
        try {
          return await hooks.emit({
            type: 'user.created',
            source: 'api',
            data: { user: { id: 42, email: 'private@example.com' } } as never,
          });
        } finally {
          span.end();
        }
      }),
    ).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
    const [emitSpan] = named(sdk.spans(), 'webhooks.emit');
    expect(emitSpan!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ERR_VALIDATION' });
    expect(emitSpan!.attributes).toEqual({ 'error.type': 'ERR_VALIDATION' });
    expect(emitSpan!.events).toEqual([]); // no exception event: its message may quote the data
    expect(total(await sdk.counter('webhooks.events'))).toBe(0);
  });

  test('propagateTraceContext: each request carries a traceparent naming its deliver span', async () => {
    const sdk = testSdk();
    const { receiver, hooks } = await setup({ telemetry: { ...sdk.telemetry, propagateTraceContext: true } });
    cleanups.push(() => sdk.shutdown());
    await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    await hooks.start();
    await sdk.host.startActiveSpan('POST /signup', async (span) => {
      await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
      span.end();
    });
    await hooks.drain();
    const [deliver] = named(sdk.spans(), 'webhooks.deliver');
    const { traceId, spanId } = deliver!.spanContext();
    expect(receiver.requests[0]!.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  test('an attempt with no answer: error.type is its kind, no status code; the span is an ERROR', async () => {
    const { sdk, hooks } = await setup({ delivery: { timeoutMs: 2000, pollIntervalMs: 3600_000 } });
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close(); // nothing listens there any more: connection refused
    await hooks.webhooks.create({ name: 'gone', endpoint: `${url}/gone`, eventTypes: ['user.created'] });
    await hooks.start();
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const [deliver] = named(sdk.spans(), 'webhooks.deliver');
    expect(deliver!.attributes['error.type']).toBe('network');
    expect(deliver!.attributes).not.toHaveProperty('http.response.status_code');
    expect(deliver!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'network' });
    expect(await sdk.counter('webhooks.attempts')).toEqual([
      [{ 'webhooks.outcome': 'failure', 'webhooks.event_type': 'user.created', 'webhooks.error_kind': 'network' }, 1],
    ]);
  });

  test('a global tracer provider registered after createWebhooks is used; with none, nothing is stored with the event', async () => {
    const dir = tempDir();
    const store = sqliteStore({ filename: dir.file('webhooks.db') });
    const receiver = await startReceiver();
    const env = await makeEngine({ store });
    cleanups.push(
      () => dir.cleanup(),
      () => receiver.close(),
      () => env.close(),
    );
    await env.hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    await env.hooks.start();
    const untraced = await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await env.hooks.drain();

    const sdk = testSdk();
    trace.setGlobalTracerProvider(sdk.tracerProvider);
    cleanups.push(
      () => sdk.shutdown(),
      () => trace.disable(),
    );
    const traced = await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await env.hooks.drain();
    const stored = await store.kysely.selectFrom('iw_events').select(['id', 'traceparent']).execute();
    const [emitSpan] = named(sdk.spans(), 'webhooks.emit');
    const { traceId, spanId } = emitSpan!.spanContext();
    // Both events carry the same (manual) time: compared by id, not by order.
    expect(Object.fromEntries(stored.map((r) => [r.id, r.traceparent]))).toEqual({
      [untraced.id]: null,
      [traced.id]: `00-${traceId}-${spanId}-01`,
    });
    expect(named(sdk.spans(), 'webhooks.deliver').map((s) => s.spanContext().traceId)).toEqual([traceId]);
    expect(receiver.requests).toHaveLength(2);
  });
});
