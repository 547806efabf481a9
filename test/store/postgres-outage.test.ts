import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks } from '../../src/index.js';
import { until } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../helpers/throwaway-postgres.js';

/**
 * Outcome fencing across a real outage: a cluster of the test's own (initdb on another port) is
 * stopped (fast shutdown) mid-load for longer than the lease, then started again. An exchange
 * whose 200 the engine received must still be recorded when the database is back (it is fenced on
 * the claim, not on the lease's end), so it is not sent again; only an exchange that had no answer
 * yet may be. The figures are printed; the bound asserted is on counts, not time.
 */
const TIMEOUT = 1_000;
const LEASE = 2_500;
const ANSWER_DELAY = 150;

let cluster: ThrowawayPostgres;
beforeAll(async () => {
  cluster = await startThrowawayPostgres();
}, 60_000);
afterAll(async () => {
  await cluster?.close();
});

interface Exchange {
  webhookId: string;
  at: number;
  answeredAt: number | null;
}

async function startReceiver() {
  const exchanges: Exchange[] = [];
  const server = http.createServer((req, res) => {
    const exchange: Exchange = { webhookId: String(req.headers['webhook-id']), at: performance.now(), answeredAt: null };
    exchanges.push(exchange);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok', () => (exchange.answeredAt = performance.now()));
      }, ANSWER_DELAY),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', 511, r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

describe('PostgreSQL stopped for longer than the lease, mid-load', () => {
  test('every exchange answered before or during the outage is recorded once the database is back: nothing answered is sent twice', async () => {
    const receiver = await startReceiver();
    const logged: string[] = [];
    const store = postgresStore({ connectionString: cluster.url, maxConnections: 8 });
    const hooks = createWebhooks({
      store,
      keys: [await testKey()],
      issuer: 'http://127.0.0.1/',
      allowPrivateNetworks: true,
      logger: { warn: () => {}, error: (message) => void logged.push(message) },
      delivery: { concurrency: 32, perWebhookConcurrency: 16, batchSize: 32, timeoutMs: TIMEOUT, leaseMs: LEASE, pollIntervalMs: 200 },
    });
    const admin = new pg.Client({ connectionString: cluster.url });
    admin.on('error', () => {});
    try {
      for (const name of ['a', 'b', 'c'])
        await hooks.webhooks.create({ name, endpoint: `${receiver.url}/${name}`, eventTypes: ['user.created'] });
      const EVENTS = 200;
      const ids: string[] = [];
      for (let i = 0; i < EVENTS; i++)
        ids.push(...(await hooks.emit({ type: 'user.created', source: 'admin', data: userData() })).deliveryIds);
      await hooks.start();

      await until('a quarter of the deliveries sent', () => receiver.exchanges.length >= ids.length / 4, 30_000, 2);
      const stopAt = performance.now();
      await cluster.stop();
      const stopped = performance.now();
      // Down for longer than the lease: the old code gave up recording when the lease ran out.
      await new Promise((r) => setTimeout(r, LEASE + 1_500));
      await cluster.start();
      const back = performance.now();
      // In flight: sent, and not answered before the stop (so not recorded before it either).
      const inFlight = receiver.exchanges.filter((e) => e.at < back && (e.answeredAt === null || e.answeredAt >= stopAt));
      const answeredDuringOutage = inFlight.filter((e) => e.answeredAt !== null && e.answeredAt < back);

      await admin.connect();
      const unfinished = async () =>
        Number((await admin.query("select count(*)::int as n from iw_deliveries where status <> 'delivered'")).rows[0].n);
      await until('every delivery delivered', async () => (await unfinished()) === 0, 40_000, 100);
      const finished = performance.now();

      const counts = new Map<string, number>();
      for (const e of receiver.exchanges) counts.set(e.webhookId, (counts.get(e.webhookId) ?? 0) + 1);
      expect(new Set(counts.keys())).toEqual(new Set(ids)); // nothing lost
      const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
      // Which exchanges of a duplicate had been answered (to the engine) before the database came back.
      const firstAnswered = (id: string) =>
        receiver.exchanges.find((e) => e.webhookId === id && e.answeredAt !== null && e.answeredAt < back);
      const answeredTwice = duplicates.filter((id) => firstAnswered(id) !== undefined);
      console.info(
        `[outage] PostgreSQL stopped (fast) ${((back - stopAt) / 1000).toFixed(1)} s (stop took ${(stopped - stopAt).toFixed(0)} ms), lease ${LEASE / 1000} s; ` +
          `${inFlight.length} exchanges in flight, ${answeredDuringOutage.length} of them answered while the database was away; ` +
          `${duplicates.length} duplicates of ${ids.length} deliveries (${answeredTwice.length} of them answered before the database was back); ` +
          `all delivered ${((finished - back) / 1000).toFixed(1)} s after; ${logged.length} errors logged`,
      );
      // Every exchange answered while the database was away was recorded once it was back.
      expect(answeredDuringOutage.length).toBeGreaterThan(0);
      expect(answeredTwice).toEqual([]);
      expect(duplicates.length).toBeLessThanOrEqual(Math.floor(inFlight.length / 100));
    } finally {
      await hooks.close();
      await admin.end().catch(() => {});
      await receiver.close();
    }
  }, 90_000);
});
