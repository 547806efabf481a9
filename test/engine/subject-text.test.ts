import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import type { Store } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * A subject with a NUL or a lone surrogate (text PostgreSQL cannot store) never fails an emit: it
 * is kept in its JSON-escaped spelling, the same for every event naming it, so ordering per
 * subject still holds. The event's data is delivered as emitted.
 */
const cleanups = useCleanups();
let pg: TestPostgres;
beforeAll(async () => {
  pg = await useTestPostgres('subject_text');
});
afterAll(async () => {
  await pg?.close();
});

describe.each([
  ['SQLite', async (): Promise<Store | undefined> => undefined],
  [
    'PostgreSQL',
    async (): Promise<Store | undefined> => {
      const schema = await createSchema(pg.url, 'subj');
      cleanups.push(() => schema.drop());
      return postgresStore({ connectionString: schema.url });
    },
  ],
] as const)('subjects that are not storable text (%s)', (_name, makeStore) => {
  test('emit with no webhook, then to an ordered webhook: stored, delivered in order', async () => {
    const store = await makeStore();
    const engine = await makeEngine(store ? { store } : {});
    cleanups.push(() => engine.close());
    const { hooks } = engine;
    const id = 'kp_\u0000nul';
    await expect(hooks.emit({ type: 'user.created', source: 'api', data: userData({ id }) })).resolves.toMatchObject({ deliveryIds: [] });
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    await hooks.webhooks.create({
      name: 'ordered',
      endpoint: receiver.url,
      eventTypes: ['user.created', 'user.updated'],
      ordering: 'per-subject',
    });
    const first = await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id }) });
    const second = await hooks.emit({ type: 'user.updated', source: 'api', data: userData({ id: 'kp_\ud800lone' }) });
    expect(first.deliveryIds).toHaveLength(1);
    expect(second.deliveryIds).toHaveLength(1);
    await hooks.start();
    await hooks.drain();
    expect(receiver.requests).toHaveLength(2);
    const { payload } = await engine.verify(receiver.requests[0]!.body);
    expect(payload.data.user.id).toBe(id);
  });
});
