import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks } from '../../src/index.js';
import { userData } from '../helpers/fixtures.js';
import { percentile, spawnWorker, until, useFleet } from '../helpers/fleet.js';
import { createSchema } from '../helpers/postgres.js';

/**
 * Fair share across processes: every process of a PostgreSQL fleet applies the same bounds, so a
 * environment whose endpoints all hang holds at most its share in each, and another environment's
 * deliveries still start at once, whichever process claims them. Two worker processes over the
 * compiled library; the endpoints live here. Latencies are printed, never asserted: the
 * assertion is an order of events (every healthy delivery arrived before the first hanging
 * attempt could even have timed out).
 */
const setup = useFleet('fairness');
const cleanups = setup.cleanups;
const TIMEOUT_MS = 4_000;
const CONCURRENCY = 64;
const PER_WEBHOOK = 8;

/** One host on 127.0.0.1: `/ok` answers 200 and is recorded; every other path accepts and never answers. */
async function sharedHost() {
  const ok: Array<{ id: string; worker: string; at: number }> = [];
  const hanging = new Set<http.ServerResponse>();
  const hangingBy = new Map<string, number>();
  const maxHangingBy = new Map<string, number>();
  let firstHangAt = Number.POSITIVE_INFINITY;
  const server = http.createServer((req, res) => {
    req.resume();
    const worker = String(req.headers['x-worker']);
    if (req.url === '/ok') {
      req.on('end', () => {
        ok.push({ id: String(req.headers['webhook-id']), worker, at: performance.now() });
        res.end('ok');
      });
      return;
    }
    firstHangAt = Math.min(firstHangAt, performance.now());
    hanging.add(res);
    hangingBy.set(worker, (hangingBy.get(worker) ?? 0) + 1);
    maxHangingBy.set(worker, Math.max(maxHangingBy.get(worker) ?? 0, hangingBy.get(worker)!));
    res.on('close', () => {
      hanging.delete(res);
      hangingBy.set(worker, hangingBy.get(worker)! - 1);
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', 511, r));
  const endHanging = () => {
    for (const res of hanging) res.destroy();
  };
  cleanups.push(() => new Promise<void>((r) => (endHanging(), server.closeAllConnections(), server.close(() => r()))));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ok,
    hangingBy,
    maxHangingBy,
    firstHangAt: () => firstHangAt,
    endHanging,
  };
}

test('two processes on one PostgreSQL: an environment whose 40 webhooks all hang never delays another environment on the same server', async () => {
  const host = await sharedHost();
  const schema = await createSchema(setup.server.url, 'fair');
  cleanups.push(() => schema.drop());
  const delivery = { concurrency: CONCURRENCY, perWebhookConcurrency: PER_WEBHOOK, timeoutMs: TIMEOUT_MS, pollIntervalMs: 500 };
  const workers = await Promise.all(['w0', 'w1'].map((id) => spawnWorker(setup.dist, schema.url, id, setup.key, { delivery })));
  cleanups.push(() => Promise.all(workers.map((w) => w.kill())));
  // Emits only: never started, so every attempt is made by the two workers.
  const emitter = createWebhooks({
    store: postgresStore({ connectionString: schema.url, maxConnections: 4 }),
    keys: [setup.key],
    issuer: 'http://127.0.0.1/',
    allowPrivateNetworks: true,
  });
  cleanups.push(() => emitter.close());
  const create = (environment: string, path: string) =>
    emitter.webhooks.create({ environment, name: 'w', endpoint: `${host.url}${path}`, eventTypes: ['user.created'] });
  for (let i = 0; i < 40; i++) await create('noisy', `/hang/${i}`);
  await create('healthy', '/ok');

  // The noisy environment first: 8 events, 320 attempts that will all hang, more than both processes hold.
  for (let i = 0; i < 8; i++) await emitter.emit({ type: 'user.created', source: 'api', data: userData(), environment: 'noisy' });
  await until(
    'both processes holding at least their fair share of hanging attempts',
    () => workers.every((w) => (host.hangingBy.get(w.id) ?? 0) >= 16),
    TIMEOUT_MS / 2,
    5,
  );

  // Then the healthy environment, on the same server: 20 events, 25 ms apart.
  const sentAt = new Map<string, number>();
  for (let i = 0; i < 20; i++) {
    const at = performance.now();
    const ev = await emitter.emit({ type: 'user.created', source: 'api', data: userData({ id: `kp_${i}` }), environment: 'healthy' });
    sentAt.set(ev.deliveryIds[0]!, at);
    await new Promise((r) => setTimeout(r, 25));
  }
  const firstTimeout = host.firstHangAt() + TIMEOUT_MS;
  while (host.ok.length < 20 && performance.now() < firstTimeout + 2_000) await new Promise((r) => setTimeout(r, 10));

  // Every healthy delivery arrived, each once, before the first hanging attempt could time out.
  expect(new Set(host.ok.map((a) => a.id))).toEqual(new Set(sentAt.keys()));
  expect(host.ok).toHaveLength(20);
  expect(Math.max(...host.ok.map((a) => a.at))).toBeLessThan(firstTimeout);
  // Both processes were saturated by the noisy environment, and neither let it past its bound.
  for (const w of workers) {
    expect(host.maxHangingBy.get(w.id) ?? 0, w.id).toBeGreaterThanOrEqual(16);
    expect(host.maxHangingBy.get(w.id) ?? 0, w.id).toBeLessThanOrEqual(CONCURRENCY - PER_WEBHOOK);
  }
  const latencies = host.ok.map((a) => a.at - sentAt.get(a.id)!);
  console.info(
    `[processes] fairness: healthy emit -> arrival with ${JSON.stringify(Object.fromEntries(host.maxHangingBy))} attempts hanging at most per process: ` +
      `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms; ` +
      `delivered by ${JSON.stringify(Object.fromEntries(['w0', 'w1'].map((w) => [w, host.ok.filter((a) => a.worker === w).length])))}`,
  );

  // The hanging attempts end now (network errors), so the workers stop without waiting them out.
  host.endHanging();
  const stopped = await Promise.all(workers.map((w) => w.stop()));
  expect(stopped.map((s) => s.errors)).toEqual([0, 0]);
}, 60_000);
