import http from 'node:http';
import { expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, systemClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { percentile } from '../helpers/fleet.js';
import { tempDir } from '../helpers/http.js';

/**
 * Fair sharing of delivery slots: one environment's dead endpoints must never slow another's. The
 * noisy neighbour as it was found: 50 webhooks of one environment on endpoints that accept and
 * never answer, and 5 webhooks of another environment on a hanging path of a server shared with
 * the healthy environment. Before the fair share, 8 such webhooks took all 64 slots for 15 s at a
 * time and the healthy environment waited a median of 13 s.
 */
const cleanups = useCleanups();
// Long, so that a busy machine has room: the healthy deliveries must all arrive before the first
// hanging attempt times out, which they would wait for if the hanging ones held their slots.
const TIMEOUT_MS = 30_000;

/** A server on 127.0.0.1: `/ok…` answers 200 and is recorded; anything else hangs until closed. */
async function server() {
  const arrivals: Array<{ path: string; at: number }> = [];
  const hanging = new Set<http.ServerResponse>();
  const s = http.createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/ok')) {
      arrivals.push({ path: req.url, at: performance.now() });
      res.end('ok');
    } else hanging.add(res);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return { url, arrivals, hanging };
}

test('50 hanging webhooks of one environment and 5 on a shared server leave a healthy environment on that server unaffected', async () => {
  const dead = await server();
  const shared = await server();
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  const hooks = createWebhooks({
    store: sqliteStore({ filename: dir.file('fair.db') }),
    keys: [await testKey()],
    issuer: 'https://auth.example.com',
    clock: systemClock,
    allowPrivateNetworks: true,
    delivery: { timeoutMs: TIMEOUT_MS, pollIntervalMs: 200 }, // otherwise the defaults: 64 slots, 8 per webhook
    logger: { warn: () => {}, error: () => {} },
  });
  cleanups.push(() => hooks.close());
  await hooks.start();
  const make = (environment: string, endpoint: string) =>
    hooks.webhooks.create({ environment, name: 'w', endpoint, eventTypes: ['user.created'] });
  for (let i = 0; i < 50; i++) await make('noisy', `${dead.url}/hang/${i}`);
  for (let i = 0; i < 5; i++) await make('neighbour', `${shared.url}/hang/shared`);
  await make('healthy', `${shared.url}/ok`);

  // The noisy environments go first: 10 events each, 550 attempts that will all hang.
  for (let i = 0; i < 10; i++) {
    await hooks.emit({ type: 'user.created', source: 'api', data: userData(), environment: 'noisy' });
    await hooks.emit({ type: 'user.created', source: 'api', data: userData(), environment: 'neighbour' });
  }
  const busy = performance.now();
  // Never answered, each holds one slot (a webhook earns more by answering): 50 + 5 webhooks,
  // within the noisy environment's bounds.
  while (dead.hanging.size + shared.hanging.size < 40 && performance.now() - busy < 3_000) await new Promise((r) => setTimeout(r, 10));
  expect(dead.hanging.size + shared.hanging.size).toBeGreaterThanOrEqual(40); // the slots they may take are taken

  // Then the healthy environment, on the same server as a hanging path: 30 events, 100 ms apart.
  const sentAt = new Map<number, number>();
  for (let i = 0; i < 30; i++) {
    sentAt.set(i, performance.now());
    await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id: `kp_${i}` }), environment: 'healthy' });
    await new Promise((r) => setTimeout(r, 100));
  }
  const deadline = busy + TIMEOUT_MS - 1_000;
  while (shared.arrivals.length < 30 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const firstTimeout = busy + TIMEOUT_MS;
  // Every healthy delivery arrived, and well before the first hanging attempt even timed out.
  expect(shared.arrivals).toHaveLength(30);
  expect(Math.max(...shared.arrivals.map((a) => a.at))).toBeLessThan(firstTimeout);
  const latencies = shared.arrivals.map((a, i) => a.at - sentAt.get(i)!);
  console.log(
    `[fairness] healthy latency with ${dead.hanging.size + shared.hanging.size} attempts hanging: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
  );
  // Neither noisy environment got past its share of the 64 slots while others had work.
  expect(dead.hanging.size).toBeLessThanOrEqual(64 - 8);
  // The hanging attempts end now (a network error each), so that closing the engine does not wait out their timeout.
  for (const res of [...dead.hanging, ...shared.hanging]) res.destroy();
}, 90_000);
