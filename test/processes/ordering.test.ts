import { describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks } from '../../src/index.js';
import { userData } from '../helpers/fixtures.js';
import { spawnWorker, until, useFleet } from '../helpers/fleet.js';
import { startReceiver } from '../helpers/http.js';
import { orderViolations } from '../helpers/ordering.js';
import { createSchema } from '../helpers/postgres.js';

/**
 * Ordered delivery per subject across real host processes on one PostgreSQL (docs/ordering.md):
 * three worker processes deliver, two emitters on pools of their own alternate the emits, the
 * receiver fails one attempt in three; every user's events still arrive in emit order, none
 * attempted before the one before it succeeded, and the work is shared by the processes.
 */
const setup = useFleet('ordering');
const cleanups = setup.cleanups;
const SUBJECTS = 40;
const PER_SUBJECT = 5;

describe('ordered delivery per subject, several host processes on one PostgreSQL', () => {
  test('three delivering processes, emits from two connections, random failures: every user in emit order', async () => {
    const schema = await createSchema(setup.server.url, 'po');
    cleanups.push(() => schema.drop());
    let seed = 40;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const statuses: number[] = [];
    const receiver = await startReceiver(() => {
      const status = random() < 1 / 3 ? 500 : 200;
      statuses.push(status);
      return status;
    });
    cleanups.push(() => receiver.close());
    const options = { backoff: { schedule: Array.from({ length: 30 }, () => 40), jitter: 0.5 }, delivery: { pollIntervalMs: 200 } };
    const workers = await Promise.all([0, 1, 2].map((i) => spawnWorker(setup.dist, schema.url, `w${i}`, setup.key, options)));
    cleanups.push(() => Promise.all(workers.map((w) => w.kill())));
    const emitters = [0, 1].map(() =>
      createWebhooks({
        store: postgresStore({ connectionString: schema.url, maxConnections: 4 }),
        keys: [setup.key],
        issuer: 'http://127.0.0.1/',
        allowPrivateNetworks: true,
      }),
    );
    cleanups.push(() => Promise.all(emitters.map((e) => e.close())));
    await emitters[0]!.webhooks.create({
      name: 'crm',
      endpoint: receiver.url,
      eventTypes: ['user.created', 'user.updated'],
      ordering: 'per-subject',
    });
    const emitted = new Map<string, string[]>();
    for (let k = 0; k < PER_SUBJECT; k++)
      for (let u = 0; u < SUBJECTS; u++) {
        const subject = `kp_p${u}`;
        const e = await emitters[(u + k) % 2]!.emit({
          type: k ? 'user.updated' : 'user.created',
          source: 'api',
          data: userData({ id: subject }),
        });
        emitted.set(subject, [...(emitted.get(subject) ?? []), e.id]);
      }
    const successes = () => statuses.filter((s) => s === 200).length;
    await until('every event delivered', () => successes() >= SUBJECTS * PER_SUBJECT, 120_000, 50);
    expect(orderViolations(receiver.requests, statuses, emitted)).toEqual([]);
    expect(statuses.filter((s) => s !== 200).length).toBeGreaterThan(20);
    // The work was shared: more than one process delivered.
    expect(new Set(receiver.requests.map((r) => r.headers['x-worker'])).size).toBeGreaterThan(1);
    for (const w of workers) await w.stop();
  }, 180_000);
});
