import { expect, test } from 'vitest';
import { createReceiver, createVerifier, type UserCreatedEvent } from '../../src/receiver/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { serveHandler } from '../helpers/http.js';

// The engine (SQLite file, ManualClock, its JWKS served over HTTP at the issuer) delivers to a
// createReceiver endpoint served over real HTTP; the receiver fetches the key set from the issuer.
const cleanups = useCleanups();

async function setup(handler: (event: UserCreatedEvent, webhookId: string) => Promise<void>) {
  const env = await makeEngine();
  cleanups.push(() => env.close());
  const failures: unknown[] = [];
  const receive = createReceiver({
    verifier: createVerifier({ issuer: env.issuer, clock: env.clock }),
    on: { 'user.created': (event, ctx) => handler(event, ctx.webhookId) },
    onError: (error) => void failures.push(error),
  });
  const site = await serveHandler(receive);
  cleanups.push(() => site.close());
  await env.hooks.start();
  const webhook = await env.hooks.webhooks.create({
    name: 'CRM',
    endpoint: `${site.url}/webhooks`,
    eventTypes: ['user.created', 'user.updated'],
  });
  return { ...env, webhook, failures };
}

test('a handler that throws makes the engine retry; the retry is handled once', async () => {
  const runs: string[] = [];
  const processed: Array<{ webhookId: string; email: string | null }> = [];
  const { hooks, clock, webhook, failures } = await setup(async (event, webhookId) => {
    runs.push(webhookId);
    if (runs.length === 1) throw new Error('CRM is down');
    processed.push({ webhookId, email: event.data.user.email });
  });

  const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
  await hooks.drain();
  let [delivery] = (await hooks.deliveries.list({ webhookId: webhook.id })).deliveries;
  expect(delivery).toMatchObject({ status: 'pending', attemptCount: 1, lastResult: '400' });
  expect(failures).toEqual([new Error('CRM is down')]);

  await clock.advance(10_000); // past the first back-off step (5 s ± 10%)
  await hooks.drain();
  [delivery] = (await hooks.deliveries.list({ webhookId: webhook.id })).deliveries;
  expect(delivery).toMatchObject({ status: 'delivered', attemptCount: 2 });

  const attempts = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
  expect(attempts.map((a) => [a.statusCode, a.responseExcerpt && JSON.parse(a.responseExcerpt)])).toEqual([
    [400, { message: 'processing user.created failed' }],
    [200, { message: 'processed' }],
  ]);
  expect(runs).toEqual([ev.deliveryIds[0], ev.deliveryIds[0]]);
  expect(processed).toEqual([{ webhookId: ev.deliveryIds[0], email: 'ada@example.com' }]);
});

test('an event type without a handler is acknowledged at once, so the engine does not resend it', async () => {
  const runs: string[] = [];
  const { hooks, webhook } = await setup(async (_e, id) => void runs.push(id));
  await hooks.emit({ type: 'user.updated', source: 'user', data: userData() });
  await hooks.emit({ type: 'user.created', source: 'user', data: userData() });
  await hooks.drain();
  const deliveries = (await hooks.deliveries.list({ webhookId: webhook.id })).deliveries;
  expect(deliveries.map((d) => [d.status, d.attemptCount])).toEqual([
    ['delivered', 1],
    ['delivered', 1],
  ]);
  expect(runs).toHaveLength(1);
});

test('a retry minutes after the first attempt is accepted: each attempt is signed afresh', async () => {
  let calls = 0;
  const { hooks, clock, webhook } = await setup(async () => {
    if (++calls <= 3) throw new Error('down');
  });
  // The event happened an hour ago; only the attempt's own timestamp is held to the 5-minute window.
  await hooks.emit({ type: 'user.created', source: 'api', data: userData(), eventTimestamp: clock.now() - 3600_000 });
  await hooks.drain();
  await clock.advance(10 * 60_000); // retries at ~5 s, ~65 s and ~6 min after the first attempt
  await hooks.drain();
  const [delivery] = (await hooks.deliveries.list({ webhookId: webhook.id })).deliveries;
  expect(delivery).toMatchObject({ status: 'delivered', attemptCount: 4 });
  expect(calls).toBe(4);
});
