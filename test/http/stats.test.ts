import { decodeJwt } from 'jose';
import { expect, test } from 'vitest';
import type { EmitInput } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { serveHandler, startReceiver } from '../helpers/http.js';
import { bearerAuth, client, conforming, createBody } from './setup.js';

/**
 * The dashboard's stats, the log's filters and a delivery's message over real HTTP, against a
 * real receiver, on a ManualClock engine (one next attempt after 5 s). Every response is checked
 * against the OpenAPI document (setup.ts).
 */

const cleanups = useCleanups();
const HOUR = 3_600_000;

async function setup() {
  const engine = await makeEngine({ authorize: bearerAuth, backoff: { schedule: [5_000], jitter: 0 } });
  cleanups.push(() => engine.close());
  const handler = conforming(engine.hooks.handler);
  const server = await serveHandler(handler);
  cleanups.push(() => server.close());
  const api = client(handler, server.url);
  return { engine, hooks: engine.hooks, clock: engine.clock, api };
}

test('stats: the list over 24 hours and a webhook over 24h / 7d / 30d, from what was recorded', async () => {
  let healthy = true;
  const receiver = await startReceiver(() => (healthy ? 200 : 500));
  cleanups.push(() => receiver.close());
  const { hooks, clock, api } = await setup();
  await hooks.start();
  const created = await api('POST', '/api/v1/webhooks', { body: createBody({ endpoint: `${receiver.url}/a` }), env: 'env-a' });
  const id = created.json.webhook.id as string;
  const quiet = (
    await api('POST', '/api/v1/webhooks', {
      body: createBody({ endpoint: `${receiver.url}/b`, event_types: ['role.created'] }),
      env: 'env-a',
    })
  ).json.webhook.id as string;
  const emit = () => hooks.emit({ type: 'user.created', source: 'api', data: userData(), environment: 'env-a' } as EmitInput);
  await emit();
  await emit();
  await hooks.drain();
  await clock.advance(2 * HOUR);
  healthy = false;
  await emit();
  await hooks.drain();

  const list = await api('GET', '/api/v1/webhooks/stats', { env: 'env-a' });
  expect(list.status).toBe(200);
  const mine = list.json.stats.find((s: { webhook_id: string }) => s.webhook_id === id);
  expect(mine).toMatchObject({ attempts: 3, succeeded: 2, failed: 1, success_rate: 2 / 3 });
  expect(mine.series).toHaveLength(24);
  expect(mine.series.at(-1)).toMatchObject({ succeeded: 0, failed: 1 });
  expect(mine.series.at(-3)).toMatchObject({ succeeded: 2, failed: 0 });
  expect(list.json.stats.find((s: { webhook_id: string }) => s.webhook_id === quiet)).toMatchObject({ attempts: 0, success_rate: null });
  // Another environment sees none of it.
  expect((await api('GET', '/api/v1/webhooks/stats', { env: 'env-b' })).json.stats).toEqual([]);

  for (const [range, points] of [
    ['24h', 24],
    ['7d', 28],
    ['30d', 30],
  ] as const) {
    const res = await api('GET', `/api/v1/webhooks/${id}/stats?range=${range}`, { env: 'env-a' });
    expect(res.status).toBe(200);
    expect(res.json.overview).toMatchObject({ range, attempts: 3, succeeded: 2, failed: 1 });
    expect(res.json.overview.points).toHaveLength(points);
    expect(res.json.overview.median_ms).toBeGreaterThanOrEqual(0);
  }
  expect((await api('GET', `/api/v1/webhooks/${id}/stats`, { env: 'env-a' })).json.overview.range).toBe('24h');
  expect((await api('GET', `/api/v1/webhooks/${id}/stats?range=1y`, { env: 'env-a' })).json.errors[0].code).toBe('INVALID_RANGE');
  expect((await api('GET', `/api/v1/webhooks/${id}/stats?days=1`, { env: 'env-a' })).json.errors[0].code).toBe('UNKNOWN_PARAMETER');
  expect((await api('GET', `/api/v1/webhooks/${id}/stats`, { env: 'env-b' })).json.errors[0].code).toBe('WEBHOOK_NOT_FOUND');
});

test('the log filtered by date range and searched by event id or delivery id; the message is what the receiver got', async () => {
  const receiver = await startReceiver(() => 200);
  cleanups.push(() => receiver.close());
  const { hooks, clock, api } = await setup();
  await hooks.start();
  const id = (await api('POST', '/api/v1/webhooks', { body: createBody({ endpoint: `${receiver.url}/a` }), env: 'env-a' })).json.webhook
    .id as string;
  const emitted = [];
  const t0 = clock.now();
  for (let i = 0; i < 3; i++) {
    emitted.push(await hooks.emit({ type: 'user.created', source: 'api', data: userData(), environment: 'env-a' } as EmitInput));
    await hooks.drain();
    await clock.advance(HOUR);
  }
  const base = `/api/v1/webhooks/${id}/deliveries`;
  const ids = (res: { json: { deliveries: { id: string }[] } }) => res.json.deliveries.map((d) => d.id);
  const iso = (ms: number) => new Date(ms).toISOString();
  // Created in [t0 + 1 h, t0 + 2 h]: the second only.
  const ranged = await api('GET', `${base}?since=${iso(t0 + HOUR)}&until=${iso(t0 + 2 * HOUR)}`, { env: 'env-a' });
  expect(ids(ranged)).toEqual(emitted[1]!.deliveryIds);
  expect(ids(await api('GET', `${base}?since=${iso(t0 + HOUR)}`, { env: 'env-a' }))).toEqual([
    ...emitted[2]!.deliveryIds,
    ...emitted[1]!.deliveryIds,
  ]);
  expect(ids(await api('GET', `${base}?search=${emitted[0]!.id}`, { env: 'env-a' }))).toEqual(emitted[0]!.deliveryIds);
  expect(ids(await api('GET', `${base}?search=${emitted[2]!.deliveryIds[0]}`, { env: 'env-a' }))).toEqual(emitted[2]!.deliveryIds);
  expect(ids(await api('GET', `${base}?search=msg_unknown&status=delivered`, { env: 'env-a' }))).toEqual([]);
  expect((await api('GET', `${base}?search=hello`, { env: 'env-a' })).json.errors[0].code).toBe('INVALID_SEARCH');
  expect((await api('GET', `${base}?since=yesterday`, { env: 'env-a' })).json.errors[0].code).toBe('INVALID_SINCE');
  expect((await api('GET', `${base}?since=${iso(t0 + HOUR)}&until=${iso(t0)}`, { env: 'env-a' })).json.errors[0].code).toBe(
    'INVALID_SINCE',
  );

  // The message: the claims the receiver verified (its timestamp: the attempt's start), the headers it got.
  const deliveryId = emitted[1]!.deliveryIds[0]!;
  const res = await api('GET', `${base}/${deliveryId}`, { env: 'env-a' });
  expect(res.status).toBe(200);
  const got = receiver.requests.find((r) => r.headers['webhook-id'] === deliveryId)!;
  const { iat, timestamp, ...claims } = decodeJwt(got.body);
  const { iat: shownIat, timestamp: shownTimestamp, ...shown } = res.json.payload;
  expect(shown).toEqual(claims);
  expect(shownTimestamp).toBe(res.json.attempts[0].started_on);
  expect(Math.abs(Date.parse(shownTimestamp) - Date.parse(timestamp as string))).toBeLessThan(60_000);
  expect(Math.abs(shownIat - (iat as number))).toBeLessThan(60);
  for (const name of ['content-type', 'webhook-id', 'user-agent']) expect(res.json.headers[name]).toBe(got.headers[name]);
  expect(res.json.delivery.id).toBe(deliveryId);
  expect(res.json.attempts).toHaveLength(1);
  // Another webhook's path, another environment: not found.
  expect((await api('GET', `${base}/${deliveryId}`, { env: 'env-b' })).json.errors[0].code).toBe('DELIVERY_NOT_FOUND');
  expect((await api('GET', `${base}/msg_nope`, { env: 'env-a' })).json.errors[0].code).toBe('DELIVERY_NOT_FOUND');
});
