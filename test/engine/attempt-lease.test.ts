import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, systemClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';

/**
 * No attempt outlives its lease. A slow OAuth2 token server and an endpoint that refuses every
 * token: token, request, a 401, a new token and the request again take longer than the lease.
 * Two workers share the database. The attempt ends inside its lease (a timeout), is recorded with
 * its back-off, and the other worker does not take the delivery meanwhile: one attempt in flight,
 * and no second one before the back-off. (Real time: the assertions are counts, not durations.)
 */
const cleanups = useCleanups();
const STEP_MS = 700;

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('an OAuth2 attempt slower than its lease ends inside it; the other worker waits for the back-off', async () => {
  const seen = { token: 0, endpoint: 0, inFlight: 0, mostInFlight: 0 };
  const slow = (handle: (res: http.ServerResponse) => void) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    seen.inFlight++;
    seen.mostInFlight = Math.max(seen.mostInFlight, seen.inFlight);
    setTimeout(() => {
      seen.inFlight--;
      handle(res);
    }, STEP_MS);
  };
  const tokenUrl = `${await listen(
    http.createServer(
      slow((res) => {
        seen.token++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: `tok_${seen.token}`, expires_in: 3600 }));
      }),
    ),
  )}/token`;
  const endpoint = await listen(
    http.createServer(
      slow((res) => {
        seen.endpoint++;
        res.writeHead(401);
        res.end('no');
      }),
    ),
  );
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  const secretsKey = randomBytes(32).toString('base64');
  const worker = async (name: string) => {
    const hooks = createWebhooks({
      store: sqliteStore({ filename: dir.file('lease.db') }),
      keys: [await testKey()],
      issuer: 'https://auth.example.com',
      clock: systemClock,
      workerId: name,
      secretsKey,
      allowPrivateNetworks: true,
      // Token (0.7 s) + request (0.7 s) + token again + request again: 2.8 s against a 2.5 s lease.
      delivery: { timeoutMs: 1000, leaseMs: 2500, pollIntervalMs: 100 },
      backoff: { schedule: [60_000], jitter: 0 },
      logger: { warn: () => {}, error: () => {} },
    });
    cleanups.push(() => hooks.close());
    return hooks;
  };
  const a = await worker('a');
  const b = await worker('b');
  const webhook = await a.webhooks.create({
    name: 'oauth',
    endpoint,
    eventTypes: ['user.created'],
    auth: { type: 'oauth2_client_credentials', tokenUrl, clientId: 'c', clientSecret: 'cs-Sup3r-secret' },
  });
  await a.emit({ type: 'user.created', source: 'api', data: userData() });
  await a.start();
  await b.start();
  // Long enough for a lease to run out twice over, and for the other worker to poll many times.
  await new Promise((r) => setTimeout(r, 6000));
  const [delivery] = (await a.deliveries.list({ webhookId: webhook.id })).deliveries;
  const attempts = await a.deliveries.attempts(delivery!.id);
  expect(attempts).toHaveLength(1);
  expect(attempts[0]!.errorKind).toBe('timeout');
  // Cut inside its lease (2.5 s): at the token wait or at the request, whichever the clock reached.
  expect(attempts[0]!.durationMs).toBeLessThan(2500);
  // One attempt: one request to the endpoint, never two requests in flight at once anywhere.
  expect(seen.endpoint).toBe(1);
  expect(seen.mostInFlight).toBe(1);
  // Its back-off holds: the next attempt an hour's minute away, not at the lease's end.
  expect(delivery!.nextAttemptAt! - attempts[0]!.startedAt).toBeGreaterThanOrEqual(59_000);
}, 30_000);
