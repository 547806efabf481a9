import { metrics, trace } from '@opentelemetry/api';
import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks } from '../../src/index.js';
import { DUE_COUNT_MAX_AGE_MS } from '../../src/telemetry/due-count.js';
import { createInstruments } from '../../src/telemetry/metrics.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { useTelemetryEngines } from './engine.js';
import { testSdk, total } from './sdk.js';

const { cleanups, setup } = useTelemetryEngines();

const ALLOWED_KEYS = new Set(['webhooks.outcome', 'webhooks.event_type', 'webhooks.error_kind', 'webhooks.reason']);

/** The seven metrics and their units: a contract (README "Observability", the metrics table). */
const UNITS = {
  'webhooks.events': '{event}',
  'webhooks.attempts': '{attempt}',
  'webhooks.attempt.duration': 's',
  'webhooks.deliveries.due': '{delivery}',
  'webhooks.delivery.lag': 's',
  'webhooks.webhooks.disabled': '{webhook}',
  'webhooks.notices': '{notice}',
};

describe('metrics', () => {
  test('attempts by outcome, event type and error kind match what a real receiver saw; durations and lag in seconds', async () => {
    const { sdk, receiver, hooks, clock } = await setup();
    const ok = await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created', 'user.updated'] });
    const bad = await hooks.webhooks.create({ name: 'bad', endpoint: `${receiver.url}/bad`, eventTypes: ['user.created'] });
    // Emitted before the engine runs, then 30 s of (engine) time pass: every first attempt starts 30 s late.
    for (const type of ['user.created', 'user.created', 'user.updated'] as const)
      await hooks.emit({ type, source: 'api', data: userData() });
    await clock.advance(30_000);
    await hooks.start();
    await hooks.drain();
    await clock.advance(10_000); // the back-off's first step (5 s ± 10 %): bad's two deliveries once more, on time
    await hooks.drain();

    const seen = receiver.requests.map((r) => `${r.path} ${r.path.startsWith('/ok') ? 200 : 500}`);
    expect(seen.filter((s) => s === '/ok 200')).toHaveLength(3);
    expect(seen.filter((s) => s === '/bad 500')).toHaveLength(4);

    const attempts = await sdk.counter('webhooks.attempts');
    expect(total(attempts)).toBe(receiver.requests.length);
    expect(total(attempts, { 'webhooks.outcome': 'success', 'webhooks.event_type': 'user.created' })).toBe(2);
    expect(total(attempts, { 'webhooks.outcome': 'success', 'webhooks.event_type': 'user.updated' })).toBe(1);
    expect(total(attempts, { 'webhooks.outcome': 'failure', 'webhooks.event_type': 'user.created', 'webhooks.error_kind': 'status' })).toBe(
      4,
    );
    expect(attempts.filter(([a]) => a['webhooks.outcome'] === 'success' && 'webhooks.error_kind' in a)).toEqual([]);

    const events = await sdk.counter('webhooks.events');
    expect(events.map(([a, v]) => [a['webhooks.event_type'], v]).sort()).toEqual([
      ['user.created', 2],
      ['user.updated', 1],
    ]);

    // Durations: the histogram holds the attempts' own durations, in seconds (the log stores ms).
    const logged = [];
    for (const id of [ok.id, bad.id])
      for (const d of (await hooks.deliveries.list({ webhookId: id })).deliveries) logged.push(...(await hooks.deliveries.attempts(d.id)));
    expect(logged).toHaveLength(7);
    const durations = await sdk.histogram('webhooks.attempt.duration');
    const byOutcome = Object.fromEntries(durations.map((d) => [d.attributes['webhooks.outcome'], d]));
    expect(Object.keys(byOutcome).sort()).toEqual(['failure', 'success']);
    expect([byOutcome.success!.count, byOutcome.failure!.count]).toEqual([3, 4]);
    const loggedSeconds = logged.reduce((s, a) => s + a.durationMs, 0) / 1000;
    const recorded = byOutcome.success!.sum + byOutcome.failure!.sum;
    expect(recorded).toBeGreaterThan(0);
    expect(Math.abs(recorded - loggedSeconds)).toBeLessThanOrEqual(7 * 0.0005); // the log rounds to whole ms
    expect(byOutcome.failure!.max!).toBeLessThan(2); // the 2 s deadline, in seconds

    // Lag: the five first attempts started exactly 30 s after they were due; the two retries on time.
    const [lag] = await sdk.histogram('webhooks.delivery.lag');
    expect(lag).toMatchObject({ count: 7, sum: 150, min: 0, max: 30, attributes: {} });

    const collected = await sdk.collect();
    expect(collected.get('webhooks.attempts')!.descriptor.unit).toBe('{attempt}');
    expect(collected.get('webhooks.events')!.descriptor.unit).toBe('{event}');
    expect(collected.get('webhooks.attempt.duration')!.descriptor.unit).toBe('s');
    expect(collected.get('webhooks.delivery.lag')!.descriptor.unit).toBe('s');
    for (const m of collected.values())
      for (const p of m.dataPoints as Array<{ attributes: Record<string, unknown> }>)
        for (const key of Object.keys(p.attributes)) expect(ALLOWED_KEYS.has(key), `${m.descriptor.name}: ${key}`).toBe(true);
  });

  test('the due gauge follows a backlog, with at most one count query per collection interval', async () => {
    const dir = tempDir();
    const inner = sqliteStore({ filename: dir.file('webhooks.db') });
    let counts = 0;
    const store = Object.assign(Object.create(inner) as typeof inner, {
      countDue: (now: number) => {
        counts++;
        return inner.countDue(now);
      },
    });
    const { sdk, receiver, hooks, clock } = await setup({ store });
    cleanups.push(() => dir.cleanup());
    await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    await hooks.webhooks.create({ name: 'bad', endpoint: `${receiver.url}/bad`, eventTypes: ['user.created'] });
    const emit = async (n: number) => {
      for (let i = 0; i < n; i++) await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    };
    const afterMaxAge = () => new Promise((r) => setTimeout(r, DUE_COUNT_MAX_AGE_MS + 50));

    await emit(5);
    expect(await sdk.gauge('webhooks.deliveries.due')).toBe(10);
    expect(counts).toBe(1);
    await emit(3);
    // Collections in the same interval (two readers, say) share one count: still 10, no query.
    expect(await sdk.gauge('webhooks.deliveries.due')).toBe(10);
    expect(counts).toBe(1);
    await afterMaxAge();
    expect(await sdk.gauge('webhooks.deliveries.due')).toBe(16);
    expect(counts).toBe(2);

    // Worked off: ok's are delivered, bad's wait for their next try (not due yet), then come due.
    await hooks.start();
    await hooks.drain();
    await afterMaxAge();
    expect(await sdk.gauge('webhooks.deliveries.due')).toBe(0);
    await hooks.close();
    await clock.advance(60_000); // the engine is closed: nobody works the backlog
    await afterMaxAge();
    await sdk.collect();
    const before = counts;
    expect(before).toBe(3); // closed: no longer observed, no query
    const reopened = createWebhooks({
      store: sqliteStore({ filename: dir.file('webhooks.db') }),
      keys: [await testKey()],
      issuer: 'https://auth.example.com',
      clock,
      telemetry: sdk.telemetry,
    });
    cleanups.push(() => reopened.close());
    expect(await sdk.gauge('webhooks.deliveries.due')).toBe(8);
    expect(counts).toBe(before); // the closed engine's callback is gone
  });

  test('an automatic disable and the calls of the notifier are counted, by reason and outcome', async () => {
    let calls = 0;
    const { sdk, receiver, hooks, clock } = await setup({
      disableAfterMs: 3600_000,
      backoff: { jitter: 0 },
      notifier: {
        webhookDisabled: () => {
          if (++calls === 1) throw new Error('mail server down');
        },
      },
    });
    await hooks.webhooks.create({ name: 'bad', endpoint: `${receiver.url}/bad`, eventTypes: ['user.created'] });
    await hooks.start();
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    // Failing for more than the hour: disabled at about 1 h 6 min; the notice fails, and its first
    // retry (1 min later) succeeds, all within these two hours.
    await clock.advance(2 * 3600_000);
    await hooks.drain();
    expect(total(await sdk.counter('webhooks.webhooks.disabled'), { 'webhooks.reason': 'failing' })).toBe(1);
    // By now every one of the seven has a data point, so each is exported, with its unit.
    const collected = await sdk.collect();
    expect(Object.fromEntries([...collected].map(([name, m]) => [name, m.descriptor.unit]))).toEqual(UNITS);
    const notices = await sdk.counter('webhooks.notices');
    expect(total(notices, { 'webhooks.outcome': 'failure' })).toBe(1);
    expect(total(notices, { 'webhooks.outcome': 'success' })).toBe(1);
    expect(total(await sdk.counter('webhooks.webhooks.disabled'))).toBe(1);
    // A manual disable is the operator's own act: not counted.
    const other = await hooks.webhooks.create({ name: 'other', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    await hooks.webhooks.disable(other.id);
    expect(total(await sdk.counter('webhooks.webhooks.disabled'))).toBe(1);
  });

  test('the global meter provider is used when none is given; the API no-op is detected and costs no calls', async () => {
    // Nothing registered: the API's no-op meter, recognised as such.
    expect(createInstruments(metrics.getMeterProvider().getMeter('x'))).toBeNull();
    const sdk = testSdk();
    cleanups.push(() => sdk.shutdown());
    expect(createInstruments(sdk.meterProvider.getMeter('x'))).not.toBeNull();

    metrics.setGlobalMeterProvider(sdk.meterProvider);
    cleanups.push(() => metrics.disable());
    const receiver = await startReceiver();
    const env = await makeEngine();
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
    );
    await env.hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    await env.hooks.start();
    await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await env.hooks.drain();
    expect(await sdk.counter('webhooks.attempts')).toEqual([[{ 'webhooks.outcome': 'success', 'webhooks.event_type': 'user.created' }, 1]]);
  });

  test("the telemetry option's providers win over registered globals: spans and metrics reach them, the globals get nothing", async () => {
    const global = testSdk();
    metrics.setGlobalMeterProvider(global.meterProvider);
    trace.setGlobalTracerProvider(global.tracerProvider);
    cleanups.push(
      () => global.shutdown(),
      () => trace.disable(),
      () => metrics.disable(),
    );
    // Control: with the globals registered and no option, the globals do get the engine's telemetry,
    // so their silence below is the option at work, not a global that never registered.
    const control = await makeEngine();
    cleanups.push(() => control.close());
    await control.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    expect(total(await global.counter('webhooks.events'))).toBe(1);
    expect(global.spans().map((s) => s.name)).toEqual(['webhooks.emit']);

    const { sdk, receiver, hooks } = await setup(); // telemetry: { meterProvider, tracerProvider } of its own
    const spansBefore = global.spans().length;
    await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
    await hooks.start();
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(receiver.requests).toHaveLength(1);
    expect(
      sdk
        .spans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['webhooks.deliver', 'webhooks.emit']);
    expect(total(await sdk.counter('webhooks.events'))).toBe(1);
    expect(total(await sdk.counter('webhooks.attempts'), { 'webhooks.outcome': 'success' })).toBe(1);
    expect(global.spans()).toHaveLength(spansBefore);
    expect(total(await global.counter('webhooks.events'))).toBe(1); // the control's event only
    expect(await global.counter('webhooks.attempts')).toEqual([]);
    expect((await global.histogram('webhooks.delivery.lag')).length).toBe(0);
  });

  test('telemetry options are checked at once', async () => {
    const base = { store: sqliteStore({ filename: ':memory:' }), keys: [await testKey()], issuer: 'https://auth.example.com' };
    expect(() => createWebhooks({ ...base, telemetry: 'on' as never })).toThrow(/telemetry must be an object/);
    expect(() => createWebhooks({ ...base, telemetry: { meterProvider: {} as never } })).toThrow(/meterProvider/);
    expect(() => createWebhooks({ ...base, telemetry: { tracerProvider: { getMeter() {} } as never } })).toThrow(/tracerProvider/);
    expect(() => createWebhooks({ ...base, telemetry: { propagateTraceContext: 'yes' as never } })).toThrow(/propagateTraceContext/);
    await base.store.close();
  });
});
