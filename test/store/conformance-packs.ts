import { beforeEach, describe, expect, test } from 'vitest';
import { activityOf, settledBefore } from '../../src/activity.js';
import { ManualClock } from '../../src/clock.js';
import { HourPacking, PACK_PAUSE_MS } from '../../src/hour-packs.js';
import { HOUR_MS, hourOf, windowOf } from '../../src/stats.js';
import type { Store } from '../../src/store.js';
import { T0, webhook } from './conformance.js';
import { countsOf, type HourEntry, pointsOf, recordInHours, recordsOf } from './conformance-activity.js';

/**
 * The settled hours' packs on every adapter (docs/decisions/040-list-stats.md):
 * the list's read through the packs gives exactly the counters' own records, an hour not packed
 * yet is read from the counters, processes packing one hour leave one pack, and retention purges
 * them with the counters.
 */
export function describePacksContract(ready: () => Promise<Store>, sibling: () => Promise<Store>): void {
  describe("stats: the settled hours' packs", () => {
    let s: Store;
    beforeEach(async () => {
      s = await ready();
    });

    const ENV = 'env_a';
    const now = T0 + 20 * 60_000;
    const hour = hourOf(now);
    const settled = settledBefore(now);
    const w = windowOf('24h', now);
    /** The list's read, through the packs, as records; and the counters' own rows (the unpacked read). */
    const tablesRead = (store: Store, environment = ENV) => store.readCounts(environment, { since: w.since, until: w.until, settled });
    const packedRead = async (store: Store, environment = ENV) => recordsOf(await tablesRead(store, environment));
    const plainRead = (store: Store, environment = ENV) => store.readHours(environment, { since: w.since, until: w.until });

    const record = (entries: HourEntry[]) => recordInHours(s, hour, entries);
    const many = (webhookId: string, hoursAgo: number, n: number, success = true, environment = ENV) =>
      Array.from({ length: n }, () => ({ webhookId, hoursAgo, success, environment }));

    /** Three webhooks of ENV and one of another environment, with attempts across the window, settled and live. */
    const activity = async () => {
      const [a, b, c, other] = [webhook(ENV), webhook(ENV), webhook(ENV), webhook('env_b')];
      for (const x of [a, b, c, other]) await s.createWebhook(x, { maxWebhooks: null });
      await record([
        ...many(a.id, 30, 1), // before the window
        ...many(a.id, 23, 2), // its first point
        ...many(a.id, 12, 12),
        ...many(a.id, 12, 3, false),
        ...many(a.id, 5, 3, false),
        ...many(a.id, 1, 1), // live: the hour before this one
        ...many(a.id, 0, 2),
        ...many(b.id, 22, 1, false),
        ...many(b.id, 12, 4),
        ...many(b.id, 2, 1), // the last settled hour
        ...many(c.id, 0, 1), // live only
        ...many(other.id, 12, 2, true, 'env_b'),
      ]);
      return { a, b, c, other };
    };
    const packWindow = (store: Store) => store.packHours({ since: w.since, until: settled });

    test("the list's read through the packs gives exactly the counters' records; a pack is read, not the counters", async () => {
      const { a } = await activity();
      expect(await s.lastPackedHour()).toBeNull();
      // Packs of 5 hours with attempts in ENV (23, 22, 12, 5, 2 hours ago) and one in env_b.
      expect(await packWindow(s)).toBe(6);
      expect(await s.lastPackedHour()).toBe(hour - 2 * HOUR_MS);
      const plain = countsOf(await plainRead(s));
      expect(plain.length).toBeGreaterThan(5);
      expect(await packedRead(s)).toEqual(plain);
      // Hours whose packs (or live counters) list the same webhooks come as one table, so the
      // list's fill looks each webhook up once per table: a alone 23 and 5 hours ago and in the
      // live hour before this one; b alone 22 and 2 hours ago; a and b 12 hours ago; a and c now.
      const tables = (await tablesRead(s)).map((t) => [
        t.webhookIds.length,
        t.hours.map((h) => (hour - h) / HOUR_MS).sort((x, y) => x - y),
      ]);
      expect(tables.sort((x, y) => String(x).localeCompare(String(y)))).toEqual([
        [1, [1, 5, 23]],
        [1, [2, 22]],
        [2, [0]],
        [2, [12]],
      ]);
      expect(await packedRead(s, 'env_b')).toEqual(countsOf(await plainRead(s, 'env_b')));
      // A range that does not start on the hour, and one whose settled hours end before it does.
      for (const range of [
        { since: w.since + 1_800_000, until: w.until },
        { since: w.since, until: w.since + 3 * HOUR_MS },
      ])
        expect(recordsOf(await s.readCounts(ENV, { ...range, settled }))).toEqual(countsOf(await s.readHours(ENV, range)));
      // The list's points made from the packed read equal the counters' points.
      expect(Object.fromEntries(activityOf(await tablesRead(s), w))).toEqual(pointsOf(await plainRead(s), w));

      // A late write to a packed hour reaches the counters, not the pack: the read took the pack.
      await record(many(a.id, 12, 1));
      const after = countsOf(await plainRead(s)).find((r) => r.webhookId === a.id && r.hour === hour - 12 * HOUR_MS)!;
      const read = (await packedRead(s)).find((r) => r.webhookId === a.id && r.hour === hour - 12 * HOUR_MS)!;
      expect(after.succeeded).toBe(13);
      expect(read.succeeded).toBe(12);
      // Packing again writes nothing: the pack stays as it was.
      expect(await packWindow(s)).toBe(0);
    });

    test('packs of consecutive hours that list the same webhooks: one table, each hour its own counts', async () => {
      const [a, b] = [webhook(ENV), webhook(ENV)];
      for (const x of [a, b]) await s.createWebhook(x, { maxWebhooks: null });
      await record([
        ...many(a.id, 20, 1),
        ...many(b.id, 20, 2, false),
        ...many(a.id, 19, 3),
        ...many(b.id, 19, 1),
        ...many(a.id, 18, 1, false),
        ...many(b.id, 18, 4),
        ...many(b.id, 17, 5), // b alone between them
        ...many(a.id, 16, 6),
        ...many(b.id, 16, 1, false),
      ]);
      expect(await packWindow(s)).toBe(5);
      const tables = await tablesRead(s);
      expect(tables.map((t) => [t.webhookIds.length, t.hours.map((h) => (hour - h) / HOUR_MS)])).toEqual([
        [2, [20, 19, 18, 16]],
        [1, [17]],
      ]);
      expect(recordsOf(tables)).toEqual(countsOf(await plainRead(s)));
    });

    test('a settled hour not packed yet is read from the counters, the packed ones from their packs', async () => {
      const { b } = await activity();
      // Only the hours up to 12 hours ago are packed; 5 and 2 hours ago are not (yet).
      expect(await s.packHours({ since: w.since, until: hour - 11 * HOUR_MS })).toBe(4);
      expect(await packedRead(s)).toEqual(countsOf(await plainRead(s)));
      // An hour without a pack between packed ones (no attempts when its neighbours were packed, a late one since).
      await record(many(b.id, 18, 1, false));
      const read = await packedRead(s);
      expect(read).toEqual(countsOf(await plainRead(s)));
      expect(read.filter((r) => r.hour === hour - 18 * HOUR_MS)).toEqual([
        { webhookId: b.id, hour: hour - 18 * HOUR_MS, succeeded: 0, failed: 1 },
      ]);
      // The rest, packed later.
      expect(await s.packHours({ since: hour - 11 * HOUR_MS, until: settled })).toBe(2);
      expect(await s.lastPackedHour()).toBe(hour - 2 * HOUR_MS);
      expect(await packedRead(s)).toEqual(countsOf(await plainRead(s)));
    });

    test('two processes packing the same hours at once leave one pack each; the chore packs what settled since', async () => {
      await activity();
      const other = await sibling();
      const written = await Promise.all([packWindow(s), packWindow(other), packWindow(s)]);
      expect(written.reduce((x, y) => x + y, 0)).toBe(6);
      expect(await packedRead(other)).toEqual(countsOf(await plainRead(s)));

      // The chore of two engines on the same database, an hour later: the hour before this one has
      // settled since; each packs it (once between them) and stops there.
      const clock = new ManualClock(now + HOUR_MS);
      const chores = [new HourPacking({ store: s, clock }), new HourPacking({ store: other, clock })];
      // The first run comes a pause after the first call (the engine's start).
      expect(await Promise.all(chores.map((c) => c.runIfDue()))).toEqual([false, false]);
      expect(await s.lastPackedHour()).toBe(hour - 2 * HOUR_MS);
      await clock.advance(PACK_PAUSE_MS);
      expect(await Promise.all(chores.map((c) => c.runIfDue()))).toEqual([false, false]);
      expect(await s.lastPackedHour()).toBe(hour - HOUR_MS);
      const later = windowOf('24h', clock.now());
      const at = { since: later.since, until: later.until, settled: settledBefore(clock.now()) };
      expect(recordsOf(await other.readCounts(ENV, at))).toEqual(
        countsOf(await s.readHours(ENV, { since: later.since, until: later.until })),
      );
      // Nothing settled since: no store call.
      const calls: string[] = [];
      const spy = new Proxy(s, {
        get: (t, k) => (typeof k === 'string' && k.includes('ack') ? (calls.push(k), Reflect.get(t, k).bind(t)) : Reflect.get(t, k)),
      });
      const fresh = new HourPacking({ store: spy, clock });
      await fresh.runIfDue();
      expect(calls).toEqual([]);
      await clock.advance(PACK_PAUSE_MS);
      await fresh.runIfDue();
      await fresh.runIfDue();
      expect(calls).toEqual(['lastPackedHour']);
    });

    test('retention purges the packs of the hours it purges the counters of', async () => {
      await activity();
      expect(await packWindow(s)).toBe(6);
      // The cutoff is 10 hours ago: packs of 23, 22, 12 hours ago go (two of them at 12 hours: ENV and env_b).
      const cutoff = hour - 10 * HOUR_MS;
      const round = await s.purge({ cutoff, now, limit: 1000 });
      expect(round).toMatchObject({ packs: 4 });
      expect(round!.hours).toBeGreaterThan(0);
      expect(await s.purge({ cutoff, now, limit: 1000 })).toMatchObject({ packs: 0, hours: 0 });
      expect(await s.lastPackedHour()).toBe(hour - 2 * HOUR_MS);
      expect(await packedRead(s)).toEqual(countsOf(await plainRead(s)));
      expect(await s.purge({ cutoff: hour + HOUR_MS, now, limit: 1 })).toMatchObject({ packs: 1 });
      expect(await s.purge({ cutoff: hour + HOUR_MS, now, limit: 1000 })).toMatchObject({ packs: 1 });
      expect(await s.lastPackedHour()).toBeNull();
    });
  });
}
