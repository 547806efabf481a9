import { describe, expect, test } from 'vitest';
import { DEFAULT_BACKOFF_SCHEDULE } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';

const HOUR = 3600_000;
const cleanups = useCleanups();

async function setup(respond: Parameters<typeof startReceiver>[0]) {
  const receiver = await startReceiver(respond);
  // No jitter: with it, about one run in seventy put the 14th attempt before 72 h, so the
  // disabling failure was also the last of the schedule and the delivery ended 'failed', not 'held'.
  const env = await makeEngine({ backoff: { jitter: 0 } });
  cleanups.push(
    () => receiver.close(),
    () => env.close(),
  );
  await env.hooks.start();
  return { receiver, ...env };
}

describe('72-hour auto-disable', () => {
  test('the default schedule keeps retrying past 72 hours', () => {
    const total = DEFAULT_BACKOFF_SCHEDULE.reduce((a, b) => a + b, 0);
    expect(total * 0.9).toBeGreaterThan(72 * HOUR); // even with the jitter taking 10% off every delay
  });

  test('one event to a dead endpoint: retried for days, disabled once 72 h have failed, notifier called once', async () => {
    const { hooks, receiver, clock, notified } = await setup(() => 500);
    const wh = await hooks.webhooks.create({ name: 'dead', endpoint: `${receiver.url}/dead`, eventTypes: ['user.created'] });
    const start = clock.now();
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect((await hooks.webhooks.get(wh.id)).failingSince).toBe(start);

    await clock.advance(71 * HOUR);
    const before = receiver.requests.length;
    expect(before).toBeGreaterThan(8);
    expect((await hooks.webhooks.get(wh.id)).status).toBe('enabled');
    expect(notified).toHaveLength(0);

    await clock.advance(30 * HOUR);
    const disabled = await hooks.webhooks.get(wh.id);
    expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'failing' });
    expect(disabled.disabledAt! - start).toBeGreaterThanOrEqual(72 * HOUR);
    expect(notified).toHaveLength(1);
    expect(notified[0]).toMatchObject({
      environment: 'default',
      reason: 'failing',
      failingSince: start,
      lastError: 'expected HTTP 200, got 500: status 500',
    });
    expect(notified[0]!.webhook.id).toBe(wh.id);
    const [d] = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries;
    expect(d!.status).toBe('held');
    // Same webhook-id on every one of those attempts.
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);

    // Held: nothing more is sent, however long we wait; no second notification.
    const sent = receiver.requests.length;
    await clock.advance(200 * HOUR);
    expect(receiver.requests.length).toBe(sent);
    expect(notified).toHaveLength(1);
    expect(clock.pendingTimers).toBeLessThanOrEqual(1);
  });

  test('a success resets the clock: intermittent failures never reach 72 hours', async () => {
    let healthy = false;
    const { hooks, receiver, clock, notified } = await setup(() => (healthy ? 200 : 500));
    const wh = await hooks.webhooks.create({ name: 'flaky', endpoint: `${receiver.url}/f`, eventTypes: ['user.created'] });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    await clock.advance(60 * HOUR);
    expect((await hooks.webhooks.get(wh.id)).failingSince).not.toBeNull();
    healthy = true;
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect((await hooks.webhooks.get(wh.id)).failingSince).toBeNull();
    healthy = false;
    const restart = clock.now();
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect((await hooks.webhooks.get(wh.id)).failingSince).toBe(restart);
    await clock.advance(30 * HOUR);
    expect((await hooks.webhooks.get(wh.id)).status).toBe('enabled');
    expect(notified).toHaveLength(0);
  });

  test('enable() resumes held deliveries with the same webhook-id', async () => {
    let healthy = false;
    const { hooks, receiver, clock, notified } = await setup(() => (healthy ? 200 : 500));
    const wh = await hooks.webhooks.create({ name: 'dead', endpoint: `${receiver.url}/d`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    await clock.advance(100 * HOUR);
    expect((await hooks.webhooks.get(wh.id)).status).toBe('disabled');
    expect(notified).toHaveLength(1);

    // While disabled, new events are not queued for it.
    const later = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    expect(later.deliveryIds).toHaveLength(0);

    healthy = true;
    const enabled = await hooks.webhooks.enable(wh.id);
    expect(enabled).toMatchObject({ status: 'enabled', disabledReason: null, failingSince: null });
    await hooks.drain();
    const last = receiver.requests.at(-1)!;
    expect(last.headers['webhook-id']).toBe(ev.deliveryIds[0]);
    expect(await hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'delivered' });
  });

  test('enable({ resumeHeld: false }) drops held deliveries instead', async () => {
    const { hooks, receiver, clock } = await setup(() => 500);
    const wh = await hooks.webhooks.create({ name: 'dead', endpoint: `${receiver.url}/d`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    await clock.advance(100 * HOUR);
    const sent = receiver.requests.length;
    await hooks.webhooks.enable(wh.id, { resumeHeld: false });
    await hooks.drain();
    expect(receiver.requests.length).toBe(sent);
    expect(await hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'failed', lastResult: 'dropped' });
  });

  test('manual disable holds pending deliveries and does not notify', async () => {
    const { hooks, receiver, notified } = await setup(() => 500);
    const wh = await hooks.webhooks.create({ name: 'w', endpoint: `${receiver.url}/w`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const off = await hooks.webhooks.disable(wh.id);
    expect(off).toMatchObject({ status: 'disabled', disabledReason: 'manual' });
    expect(await hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'held' });
    expect(notified).toHaveLength(0);
  });

  test('exhausting the schedule fails the delivery', async () => {
    const receiver = await startReceiver(() => 500);
    const env = await makeEngine({ backoff: { schedule: [1000, 1000], jitter: 0 } });
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
    );
    await env.hooks.start();
    await env.hooks.webhooks.create({ name: 'w', endpoint: `${receiver.url}/w`, eventTypes: ['user.created'] });
    const ev = await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await env.hooks.drain();
    await env.clock.advance(5000);
    expect(receiver.requests).toHaveLength(3);
    expect(await env.hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'failed', attemptCount: 3, nextAttemptAt: null });
  });
});
