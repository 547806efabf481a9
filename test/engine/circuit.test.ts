import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';

/**
 * The circuit on the record tells what the scheduler does: a failing webhook (failing_since set)
 * is `half_open`, probed one attempt at a time however much is due; a success closes it and
 * attempts run side by side again. SQLite file, real endpoint on 127.0.0.1, ManualClock.
 */
const cleanups = useCleanups();

/** An endpoint that answers `status` after `delayMs` of real time and counts requests in flight at once. */
async function countingEndpoint(delayMs: number) {
  const state = { status: 500, inFlight: 0, maxInFlight: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    state.requests++;
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    setTimeout(() => {
      state.inFlight--;
      res.writeHead(state.status).end(state.status === 200 ? 'ok' : 'down');
    }, delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state };
}

test('a failing webhook says half_open and gets one attempt at a time while more is due; a success closes it and attempts run in parallel again', async () => {
  // Each answer takes 150 ms: attempts started together overlap at the endpoint.
  const endpoint = await countingEndpoint(150);
  const e = await makeEngine({ authorize: () => ({ environment: 'default' }) });
  cleanups.push(() => e.hooks.close());
  const { hooks, clock } = e;
  await hooks.start();
  const wh = await hooks.webhooks.create({ name: 'flaky', endpoint: `${endpoint.url}/in`, eventTypes: ['user.created'] });
  expect(wh.circuit).toBe('closed');
  const wire = async () => (await (await hooks.handler(new Request(`https://auth.example.com/api/v1/webhooks/${wh.id}`))).json()).webhook;
  expect(await wire()).toMatchObject({ failing_since: null, circuit: 'closed' });

  // One failure opens the probe.
  await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
  await hooks.drain();
  expect(endpoint.state.requests).toBe(1);
  expect(await hooks.webhooks.get(wh.id)).toMatchObject({ failingSince: clock.now(), circuit: 'half_open' });
  expect((await hooks.webhooks.list()).map((w) => w.circuit)).toEqual(['half_open']);
  expect(await wire()).toMatchObject({ failing_since: new Date(clock.now()).toISOString(), circuit: 'half_open' });

  // Six more due at once while it keeps failing: each is tried, never two at a time
  // (perWebhookConcurrency is 8: closed, all six would be in flight together).
  endpoint.state.maxInFlight = 0;
  for (let i = 0; i < 6; i++) await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id: `kp_${i}` }) });
  await hooks.drain();
  expect(endpoint.state.requests).toBe(7);
  expect(endpoint.state.maxInFlight).toBe(1);
  expect((await hooks.deliveries.list({ status: 'pending' })).deliveries).toHaveLength(7);
  expect((await hooks.webhooks.get(wh.id)).circuit).toBe('half_open');

  // The endpoint recovers; the seven come due again over the next seconds (back-off 5 s ± 10 %).
  // The first success closes the circuit.
  endpoint.state.status = 200;
  await clock.advance(6_000);
  await hooks.drain();
  expect((await hooks.deliveries.list({ status: 'delivered' })).deliveries).toHaveLength(7);
  expect(await hooks.webhooks.get(wh.id)).toMatchObject({ failingSince: null, circuit: 'closed' });
  expect(await wire()).toMatchObject({ failing_since: null, circuit: 'closed' });

  // Closed again: six due at once go out side by side.
  endpoint.state.maxInFlight = 0;
  for (let i = 0; i < 6; i++) await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id: `kp_ok_${i}` }) });
  await hooks.drain();
  expect(endpoint.state.requests).toBe(7 + 7 + 6);
  expect(endpoint.state.maxInFlight).toBeGreaterThan(1);
});
