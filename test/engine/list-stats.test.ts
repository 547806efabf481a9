import { expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import type { EmitInput } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';

/**
 * The list's stats (`hooks.webhooks.stats`) read the window once per call (src/activity.ts): the
 * settled hours from their packs, the live ones from the counters, nothing kept between calls. On
 * a ManualClock and a real SQLite file, the counts stay those of the overview (read from the
 * counters every time) while hours settle, leave the window, and calls overlap.
 */
const HOUR = 3_600_000;
const cleanups = useCleanups();

test('the list reads its window once a call, and its counts stay those of the counters as hours settle and leave the window', async () => {
  let healthy = true;
  const receiver = await startReceiver(() => (healthy ? 200 : 500));
  cleanups.push(() => receiver.close());
  const dir = tempDir('iw-list-stats-');
  cleanups.push(() => dir.cleanup());
  const store = sqliteStore({ filename: dir.file('webhooks.db') });
  const reads: Array<{ since: number; until: number; settled: number }> = [];
  const readCounts = store.readCounts.bind(store);
  store.readCounts = (environment, args) => {
    reads.push({ ...args });
    return readCounts(environment, args);
  };
  const engine = await makeEngine({ store, backoff: { schedule: [48 * HOUR], jitter: 0 } });
  cleanups.push(() => engine.close());
  const { hooks, clock } = engine;
  await hooks.start();
  const environment = 'env-a';
  const create = (name: string) =>
    hooks.webhooks.create({ name, endpoint: `${receiver.url}/${name}`, eventTypes: ['user.created'], environment });
  const a = await create('a');
  const emit = async (n: number) => {
    for (let i = 0; i < n; i++) await hooks.emit({ type: 'user.created', source: 'api', data: userData(), environment } as EmitInput);
    await hooks.drain();
  };
  /** The list's line of each webhook, checked against the overview's 24 hours of the same webhook. */
  const stats = async () => {
    const list = await hooks.webhooks.stats({ environment });
    for (const line of list) {
      const overview = await hooks.webhooks.overview(line.webhookId, { environment, range: '24h' });
      expect({ succeeded: line.succeeded, failed: line.failed, points: line.series }).toEqual({
        succeeded: overview.succeeded,
        failed: overview.failed,
        points: overview.points,
      });
    }
    return list;
  };
  const hourOfNow = () => clock.now() - (clock.now() % HOUR);
  /** The one read a call makes: the day, its hours settled up to the hour before this one. */
  const day = () => [{ since: hourOfNow() - 23 * HOUR, until: hourOfNow() + HOUR, settled: hourOfNow() - HOUR }];

  await emit(2);
  reads.length = 0;
  let [line] = await stats();
  expect(line).toMatchObject({ webhookId: a.id, attempts: 2, succeeded: 2, failed: 0, successRate: 1 });
  expect(reads).toEqual(day());

  // Half an hour on, one more: seen at once.
  await clock.advance(HOUR / 2);
  await emit(1);
  reads.length = 0;
  [line] = await stats();
  expect(line).toMatchObject({ attempts: 3, succeeded: 3 });
  expect(reads).toEqual(day());

  // Two hours on, a failure, and a second webhook.
  await clock.advance(2 * HOUR);
  healthy = false;
  await emit(1);
  const b = await create('b');
  reads.length = 0;
  const lines = await stats();
  expect(lines.map((l) => [l.webhookId, l.succeeded, l.failed])).toEqual([
    [a.id, 3, 1],
    [b.id, 0, 0],
  ]);
  expect(lines[0]!.series.at(-1)).toMatchObject({ succeeded: 0, failed: 1 });
  expect(lines[0]!.series.at(-3)).toMatchObject({ succeeded: 3, failed: 0 });
  expect(reads).toEqual(day());

  // Calls at once after more hours settled: the same counts.
  await clock.advance(3 * HOUR);
  const [first, second] = await Promise.all([stats(), stats()]);
  expect(first).toEqual(second);
  expect(first.map((l) => [l.succeeded, l.failed])).toEqual([
    [3, 1],
    [0, 0],
  ]);

  // A day on, every hour has left the window.
  await clock.advance(24 * HOUR);
  expect((await stats()).map((l) => [l.attempts, l.successRate])).toEqual([
    [0, null],
    [0, null],
  ]);
}, 30_000);

test("the packing chore packs an hour once it settles; a first call reads the pack and gives the counters' counts", async () => {
  const receiver = await startReceiver(() => 200);
  cleanups.push(() => receiver.close());
  const dir = tempDir('iw-list-packs-');
  cleanups.push(() => dir.cleanup());
  const store = sqliteStore({ filename: dir.file('webhooks.db') });
  const settledArgs: number[] = [];
  const readCounts = store.readCounts.bind(store);
  store.readCounts = (environment, args) => {
    settledArgs.push(args.settled);
    return readCounts(environment, args);
  };
  const engine = await makeEngine({ store });
  cleanups.push(() => engine.close());
  const { hooks, clock } = engine;
  await hooks.start();
  const environment = 'env-a';
  const a = await hooks.webhooks.create({ name: 'a', endpoint: `${receiver.url}/a`, eventTypes: ['user.created'], environment });
  for (let i = 0; i < 3; i++) await hooks.emit({ type: 'user.created', source: 'api', data: userData(), environment } as EmitInput);
  await hooks.drain();
  const hour = clock.now() - (clock.now() % HOUR);
  const packs = async () =>
    (await store.kysely.selectFrom('iw_hour_packs').selectAll().execute()).map((r) => [r.environment, Number(r.hour), r.counts]);

  // Not settled yet: nothing packed. Two hours on (past the chore's first pause), packed.
  await clock.advance(HOUR);
  expect(await packs()).toEqual([]);
  await clock.advance(HOUR);
  hooks.wake();
  await hooks.drain();
  expect(await packs()).toEqual([[environment, hour, `${a.id};3:0`]]);

  // This engine's first list call: through the pack, the overview's counts (read from the counters).
  const [line] = await hooks.webhooks.stats({ environment });
  const overview = await hooks.webhooks.overview(a.id, { environment, range: '24h' });
  expect(settledArgs).toEqual([clock.now() - (clock.now() % HOUR) - HOUR]);
  expect({ succeeded: line!.succeeded, failed: line!.failed, points: line!.series }).toEqual({
    succeeded: 3,
    failed: 0,
    points: overview.points,
  });
}, 30_000);
