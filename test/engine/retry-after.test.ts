import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import type { Store } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * After a Retry-After is received, no new attempt of that webhook starts before it ends: only
 * those already in flight then answer too. A proven webhook (8 slots) with a deep backlog, parked
 * deliveries included, begins to answer 429 with an hour's Retry-After.
 */
const cleanups = useCleanups();
const ANSWERED = 40;
const BOUND = 8;

let pg: TestPostgres;
beforeAll(async () => {
  pg = await useTestPostgres('retry_after');
});
afterAll(async () => {
  await pg?.close();
});

describe.each([
  [
    'SQLite',
    async (): Promise<Store> => {
      const dir = tempDir();
      cleanups.push(() => dir.cleanup());
      return sqliteStore({ filename: dir.file('ra.db') });
    },
  ],
  [
    'PostgreSQL',
    async (): Promise<Store> => {
      const schema = await createSchema(pg.url, 'ra');
      cleanups.push(() => schema.drop());
      return postgresStore({ connectionString: schema.url });
    },
  ],
] as const)('Retry-After (%s)', (_name, makeStore) => {
  test('no attempt of the webhook starts after its Retry-After is received, but those already in flight', async () => {
    const receiver = await startReceiver((_req, i) =>
      i < ANSWERED ? { status: 200, delayMs: 5 } : { status: 429, delayMs: 20, headers: { 'retry-after': '3600' } },
    );
    cleanups.push(() => receiver.close());
    const engine = await makeEngine({
      store: await makeStore(),
      delivery: { timeoutMs: 2000, pollIntervalMs: 1000, perWebhookConcurrency: BOUND },
    });
    cleanups.push(() => engine.close());
    const { hooks, clock } = engine;
    await hooks.webhooks.create({ name: 'ra', endpoint: receiver.url, eventTypes: ['user.created'] });
    for (let i = 0; i < 300; i++) await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id: `kp_${i}` }) });
    await hooks.start();
    await hooks.drain();
    // Ten minutes of the hour: nothing more may go out.
    for (let s = 0; s < 600; s++) {
      await clock.advance(1000);
      await hooks.drain();
    }
    const after = receiver.requests.length - ANSWERED;
    // Those in flight when the first 429 came: at most the webhook's bound.
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThanOrEqual(BOUND);
  }, 120_000);
});
