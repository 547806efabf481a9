import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { ManualClock, type Store, type WebhookOrdering } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { decoded, orderViolations as violations } from '../helpers/ordering.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * Ordered delivery per subject (issue 40, docs/ordering.md), end to end: real engines, a real
 * receiver on 127.0.0.1, real SQLite files and a real PostgreSQL, time on a ManualClock. The
 * receiver is down for a while, then up with random failures; with `per-subject` every user's
 * events arrive in the order they were emitted, and none is attempted before the one before it
 * succeeded; with `none` (the same run) they do not, which shows the check can fail.
 */
const cleanups = useCleanups();
const SUBJECTS = 40;
const PER_SUBJECT = 5;
const MINUTE = 60_000;

let pg: TestPostgres;
beforeAll(async () => {
  pg = await useTestPostgres('ordering');
}, 60_000);
afterAll(async () => {
  await pg?.close();
});

/** A small seeded generator (mulberry32): the failures injected are the same at every run. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type MakeStore = () => Promise<Store>;
const STORES: ReadonlyArray<readonly [string, MakeStore]> = [
  ['SQLite', async () => sqliteStore({ filename: tempDir().file('ordering.db') })],
  [
    'PostgreSQL',
    async () => {
      const schema = await createSchema(pg.url, 'ord');
      cleanups.push(() => schema.drop());
      return postgresStore({ connectionString: schema.url, maxConnections: 8 });
    },
  ],
];

/**
 * 40 users × 5 events to one webhook whose receiver is down for the first 10 minutes (503), then
 * up and failing one attempt in four at random (500). Engines share the clock; emits go round
 * robin over them (on PostgreSQL several engines are several processes' worth of stores).
 */
async function run(ordering: WebhookOrdering, stores: Store[]) {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
  const upAt = clock.now() + 10 * MINUTE;
  const random = seeded(40);
  const statuses: number[] = [];
  const receiver = await startReceiver(() => {
    const status = clock.now() < upAt ? 503 : random() < 0.25 ? 500 : 200;
    statuses.push(status);
    return status;
  });
  cleanups.push(() => receiver.close());
  const engines = [];
  for (const store of stores) {
    const engine = await makeEngine({ store, clock });
    cleanups.push(() => engine.close());
    engines.push(engine);
  }
  const hooks = engines[0]!.hooks;
  for (const e of engines) await e.hooks.start();
  await hooks.webhooks.create({ name: 'crm', endpoint: receiver.url, eventTypes: ['user.created', 'user.updated'], ordering });
  const emitted = new Map<string, string[]>();
  for (let k = 0; k < PER_SUBJECT; k++) {
    for (let u = 0; u < SUBJECTS; u++) {
      const subject = `kp_user_${u}`;
      const by = engines[(u + k) % engines.length]!.hooks;
      const e = await by.emit({ type: k === 0 ? 'user.created' : 'user.updated', source: 'api', data: userData({ id: subject }) });
      emitted.set(subject, [...(emitted.get(subject) ?? []), e.id]);
    }
  }
  const total = SUBJECTS * PER_SUBJECT;
  const delivered = () => new Set(receiver.requests.filter((_, i) => statuses[i] === 200).map((r) => decoded(r).eventId)).size;
  for (let round = 0; round < 400 && delivered() < total; round++) {
    await clock.advance(5 * MINUTE);
    for (const e of engines) await e.hooks.drain();
  }
  return { delivered: delivered(), total, violations: violations(receiver.requests, statuses, emitted), receiver, statuses };
}

describe.each(STORES)('%s', (_name, makeStore) => {
  test('receiver down, then up with random failures: per-subject keeps every user in emit order; none does not', async () => {
    const ordered = await run('per-subject', [await makeStore()]);
    expect(ordered.delivered).toBe(ordered.total);
    expect(ordered.violations).toEqual([]);
    // Many attempts failed on the way (the check had something to check).
    expect(ordered.statuses.filter((s) => s !== 200).length).toBeGreaterThan(SUBJECTS);

    const unordered = await run('none', [await makeStore()]);
    expect(unordered.delivered).toBe(unordered.total);
    expect(unordered.violations.length).toBeGreaterThan(0);
  }, 240_000);

  test('one delivery its endpoint keeps refusing blocks only its own subject, until its back-off runs out', async () => {
    const store = await makeStore();
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00.000Z'));
    const engine = await makeEngine({ store, clock, backoff: { schedule: [5_000, MINUTE, 5 * MINUTE, 30 * MINUTE] } });
    cleanups.push(() => engine.close());
    let stuckId = '';
    const receiver = await startReceiver((req) => (decoded(req).eventId === stuckId ? 500 : 200));
    cleanups.push(() => receiver.close());
    const { hooks } = engine;
    await hooks.start();
    await hooks.webhooks.create({
      name: 'crm',
      endpoint: receiver.url,
      eventTypes: ['user.created', 'user.updated'],
      ordering: 'per-subject',
    });
    const emitted: Record<string, string[]> = {};
    for (let k = 0; k < 4; k++)
      for (const subject of ['kp_stuck', 'kp_a', 'kp_b']) {
        const e = await hooks.emit({ type: k === 0 ? 'user.created' : 'user.updated', source: 'api', data: userData({ id: subject }) });
        (emitted[subject] ??= []).push(e.id);
        if (subject === 'kp_stuck' && k === 1) stuckId = e.id;
      }
    await hooks.drain();
    await clock.advance(20 * MINUTE);
    await hooks.drain();
    const seen = () => receiver.requests.map((r) => decoded(r).eventId);
    // The other users: all their events, in order. The stuck user: its first, then its second
    // tried again and again, and nothing after it.
    for (const subject of ['kp_a', 'kp_b']) expect(seen().filter((id) => emitted[subject]!.includes(id))).toEqual(emitted[subject]);
    const stuck = seen().filter((id) => emitted.kp_stuck!.includes(id));
    expect(stuck[0]).toBe(emitted.kp_stuck![0]);
    expect(new Set(stuck.slice(1))).toEqual(new Set([stuckId]));
    expect(stuck.length).toBeGreaterThanOrEqual(4);
    // Its back-off runs out (the last attempt ~36 minutes in): it fails, and the user's later events go, in order.
    await clock.advance(30 * MINUTE);
    await hooks.drain();
    const after = seen().filter((id) => emitted.kp_stuck!.includes(id) && id !== stuckId);
    expect(after).toEqual([emitted.kp_stuck![0], emitted.kp_stuck![2], emitted.kp_stuck![3]]);
    const failed = await hooks.deliveries.list({ eventId: stuckId });
    expect(failed.deliveries[0]?.status).toBe('failed');
  }, 60_000);
});

describe('PostgreSQL, three engines on one database', () => {
  test('emits spread over the engines, claims by all of them: every user still in emit order', async () => {
    const schema = await createSchema(pg.url, 'ord3');
    cleanups.push(() => schema.drop());
    const stores = [0, 1, 2].map(() => postgresStore({ connectionString: schema.url, maxConnections: 4 }));
    const result = await run('per-subject', stores);
    expect(result.delivered).toBe(result.total);
    expect(result.violations).toEqual([]);
  }, 240_000);
});
