import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import { SqliteEngineDialect } from '../../adapters/sqlite/driver.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import type { Transport } from '../../src/index.js';
import { RECLAIM_GRACE_MS } from '../../src/scheduler/reclaim-hold.js';
import type { ClaimArgs } from '../../src/store.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { webhook } from '../store/conformance.js';

const cleanups = useCleanups();

describe('durability on one SQLite file', () => {
  test('a restarted process resumes every pending delivery with its webhook-id', async () => {
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 200 : 500));
    const env = await makeEngine();
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
    );
    await env.hooks.start();
    await env.hooks.webhooks.create({ name: 'w', endpoint: `${receiver.url}/w`, eventTypes: ['user.created', 'user.deleted'] });
    const events = [];
    for (let i = 0; i < 5; i++) events.push(await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() }));
    await env.hooks.drain();
    expect(receiver.requests).toHaveLength(5);

    // "Crash": a new engine on the same file; the old one is closed without any handover.
    healthy = true;
    const again = await env.restart();
    await again.start();
    await env.clock.advance(10_000);
    await again.drain();
    const ids = events.map((e) => e.deliveryIds[0]);
    const delivered = receiver.requests.slice(5).map((r) => r.headers['webhook-id']);
    expect(new Set(delivered)).toEqual(new Set(ids));
    for (const id of ids) expect(await again.deliveries.get(id!)).toMatchObject({ status: 'delivered', attemptCount: 2 });
  });

  test('a delivery leased by a process that died is attempted again after the lease, within a poll interval, same webhook-id', async () => {
    const receiver = await startReceiver();
    // Nothing names a lease's end as a due time: the poll finds the delivery once it has run out.
    const env = await makeEngine({ delivery: { timeoutMs: 1000, leaseMs: 60_000, pollIntervalMs: 5_000 } });
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
    );
    await env.hooks.webhooks.create({ name: 'w', endpoint: `${receiver.url}/w`, eventTypes: ['user.created'] });
    const ev = await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    // Another process claims it and dies before recording anything.
    const ghost = sqliteStore({ filename: env.filename });
    const claimed = await ghost.claimDue({ now: env.clock.now(), limit: 10, workerId: 'ghost', leaseMs: 60_000 });
    await ghost.close();
    expect(claimed.map((c) => c.delivery.id)).toEqual(ev.deliveryIds);

    await env.hooks.start();
    await env.hooks.drain();
    expect(receiver.requests).toHaveLength(0); // still leased
    await env.clock.advance(59_000); // eleven polls, each passing over the leased row
    expect(receiver.requests).toHaveLength(0);
    await env.clock.advance(2_000); // the poll at 60 s, as the lease ends
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers['webhook-id']).toBe(ev.deliveryIds[0]);
  });

  test('after a claim could not reach the store, a lease that ran out meanwhile stays with its owner for RECLAIM_GRACE_MS', async () => {
    const receiver = await startReceiver();
    const dir = tempDir();
    const filename = dir.file('webhooks.db');
    // The engine's claims fail while `down` (its outcomes and next-due reads do not matter here).
    let down = false;
    const inner = sqliteStore({ filename });
    const store = new Proxy(inner, {
      get(target, key, proxy) {
        const value = Reflect.get(target, key, proxy);
        if (key !== 'claimDue') return typeof value === 'function' ? value.bind(target) : value;
        return (args: ClaimArgs) => (down ? Promise.reject(new Error('the database is unreachable')) : target.claimDue(args));
      },
    });
    const POLL = 5_000;
    const env = await makeEngine({ filename, store, delivery: { timeoutMs: 1000, leaseMs: 60_000, pollIntervalMs: POLL } });
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
      () => dir.cleanup(),
    );
    await env.hooks.webhooks.create({ name: 'w', endpoint: `${receiver.url}/w`, eventTypes: ['user.created'] });
    const ev = await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    // Another process claims it (its lease runs out at 60 s) and keeps its outcome through the outage.
    const ghost = sqliteStore({ filename });
    await ghost.claimDue({ now: env.clock.now(), limit: 10, workerId: 'ghost', leaseMs: 60_000 });
    await ghost.close();
    await env.hooks.start();
    await env.hooks.drain();
    await env.clock.advance(55_000); // polls reach the store, the last at 55 s
    down = true;
    await env.clock.advance(POLL); // 60 s: the claim fails; the lease runs out
    down = false;
    await env.clock.advance(POLL); // 65 s: back; the lease ran out after 55 s, its owner's record goes first
    await env.clock.advance(RECLAIM_GRACE_MS - POLL); // 70 s
    expect(receiver.requests).toHaveLength(0);
    await env.clock.advance(POLL); // 75 s: the grace is over
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual(ev.deliveryIds);
  });

  test('emit returns at once: the HTTP request happens after it, asynchronously', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    const transport: Transport = {
      async send() {
        started++;
        await gate;
        return { status: 200, excerpt: '' };
      },
    };
    const env = await makeEngine({ transport });
    cleanups.push(() => env.close());
    await env.hooks.start();
    await env.hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
    const ev = await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    expect(await env.hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ attemptCount: 0 });
    for (let i = 0; i < 400 && started === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(started).toBe(1);
    expect(await env.hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'pending', attemptCount: 0 });
    release();
    await env.hooks.drain();
    expect(await env.hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'delivered' });
  });
});

describe('transactional emit (host Kysely transaction on the same SQLite file)', () => {
  async function hostDb(filename: string) {
    const raw = new Database(filename);
    raw.pragma('busy_timeout = 5000');
    const db = new Kysely<any>({ dialect: new SqliteEngineDialect(raw, true) });
    await db.schema
      .createTable('users')
      .ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .execute();
    cleanups.push(() => db.destroy());
    return db;
  }

  test('rollback leaves no event and no delivery; commit delivers', async () => {
    const receiver = await startReceiver();
    const env = await makeEngine();
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
    );
    await env.hooks.start();
    await env.hooks.webhooks.create({ name: 'w', endpoint: `${receiver.url}/w`, eventTypes: ['user.created'] });
    const db = await hostDb(env.filename);

    let rolledBack: string | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('users').values({ id: 'kp_1' }).execute();
        rolledBack = (await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData({ id: 'kp_1' }) }, { transaction: trx }))
          .id;
        throw new Error('host changed its mind');
      }),
    ).rejects.toThrow('host changed its mind');
    await expect(env.hooks.events.get(rolledBack!)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect((await env.hooks.deliveries.list()).deliveries).toHaveLength(0);
    expect((await sql`select count(*) as n from users`.execute(db)).rows[0]).toEqual({ n: 0 });

    const committed = await db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values({ id: 'kp_2' }).execute();
      return env.hooks.emit({ type: 'user.created', source: 'admin', data: userData({ id: 'kp_2' }) }, { transaction: trx });
    });
    env.hooks.wake(); // after commit, instead of waiting for the poll
    await env.hooks.drain();
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers['webhook-id']).toBe(committed.deliveryIds[0]);
  });

  test('the store exposes its own Kysely for hosts without one', async () => {
    const env = await makeEngine();
    cleanups.push(() => env.close());
    await env.hooks.start();
    await env.hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
    const store = sqliteStore({ filename: env.filename });
    cleanups.push(() => store.close());
    await expect(
      store.kysely.transaction().execute(async (trx) => {
        await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() }, { transaction: trx });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect((await env.hooks.deliveries.list()).deliveries).toHaveLength(0);
  });

  test("the host's async transaction on its own connection, open across awaits while the loop runs: the loop waits on timers, never in SQLite's busy handler", async () => {
    // A minute of busy timeout: a wait in SQLite's busy handler would sleep on this thread, where
    // the host's COMMIT has to run, for all of it (the test's 30 s would run out first).
    const dir = tempDir();
    cleanups.push(() => dir.cleanup());
    const filename = dir.file('own.db');
    const receiver = await startReceiver();
    const env = await makeEngine({ filename, store: sqliteStore({ filename, busyTimeoutMs: 60_000 }) });
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
    );
    await env.hooks.start();
    await env.hooks.webhooks.create({ name: 'w', endpoint: `${receiver.url}/w`, eventTypes: ['user.created'] });
    const db = await hostDb(filename);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const emitted = await db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values({ id: 'kp_1' }).execute();
      const event = await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData({ id: 'kp_1' }) }, { transaction: trx });
      // The loop wakes and claims (a write) while this transaction holds the file's write lock.
      env.hooks.wake();
      await new Promise((r) => setTimeout(r, 200));
      return event;
    });
    delay.disable();
    console.info(`[durability] event loop delay while the host's transaction was open: max ${(delay.max / 1e6).toFixed(0)} ms`);
    expect(delay.max / 1e6).toBeLessThan(10_000);
    env.hooks.wake();
    await env.hooks.drain();
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual(emitted.deliveryIds);
  });

  test("a transaction of the store's waits on a timer while another connection holds the lock, and gives up after busyTimeoutMs with SQLITE_BUSY", async () => {
    const dir = tempDir();
    cleanups.push(() => dir.cleanup());
    const filename = dir.file('begin.db');
    const store = sqliteStore({ filename, busyTimeoutMs: 300 });
    cleanups.push(() => store.close());
    await store.migrate(Date.now());
    const db = await hostDb(filename);
    const ours = store.kysely as unknown as Kysely<any>;
    const insert = (id: string) => ours.transaction().execute((trx) => trx.insertInto('users').values({ id }).execute());
    // The host's transaction holds the write lock across awaits until released.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const host = db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values({ id: 'kp_host' }).execute();
      locked();
      await released;
    });
    await lockTaken;
    // Longer than busyTimeoutMs: refused, transient, and the host's code ran meanwhile.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    await expect(insert('kp_refused')).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(2);
    // Released while ours waits: ours goes through once the host commits.
    const waiting = insert('kp_after');
    setTimeout(release, 50);
    await host;
    await waiting;
    expect((await sql<{ id: string }>`select id from users order by id`.execute(db)).rows.map((r) => r.id)).toEqual([
      'kp_after',
      'kp_host',
    ]);
  });

  test('a transaction that is not a Kysely transaction is refused with a TypeError', async () => {
    const env = await makeEngine();
    cleanups.push(() => env.close());
    await expect(env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() }, { transaction: {} })).rejects.toThrow(
      TypeError,
    );
  });
});

describe('two stores on one better-sqlite3 handle', () => {
  test('their transactions queue instead of beginning inside each other', async () => {
    const { file, cleanup } = tempDir();
    const db = new Database(file('shared.db'));
    const a = sqliteStore({ database: db });
    const b = sqliteStore({ database: db });
    cleanups.push(async () => (await a.close(), await b.close(), db.close(), cleanup()));
    await a.migrate(0);
    await b.migrate(0);
    const hook = (id: string) => webhook('default', { id, name: id, endpoint: 'https://example.com/' });
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).createWebhook(hook(`webhook_${i}`), { maxWebhooks: 100 })));
    expect(await a.listWebhooks('default')).toHaveLength(40);
    expect(db.inTransaction).toBe(false);
  });
});

describe('WAL checkpoints off the request path', () => {
  test('a store that opened its own file checkpoints from a timer, not inside commits; a host handle is left alone', async () => {
    const { statSync } = await import('node:fs');
    const { file, cleanup } = tempDir();
    const own = sqliteStore({ filename: file('own.db'), checkpointIntervalMs: 20 });
    const hostDb = new Database(file('host.db'));
    const lent = sqliteStore({ database: hostDb });
    cleanups.push(async () => (await own.close(), await lent.close(), hostDb.close(), cleanup()));
    expect(hostDb.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    const ownAuto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(own.kysely);
    expect(ownAuto.rows[0]!.wal_autocheckpoint).toBe(0);

    await own.migrate(0);
    // With automatic checkpoints off, pages reach the main file only through our timer.
    const before = statSync(file('own.db')).size;
    for (let i = 0; i < 200; i++) {
      await own.createWebhook(webhook('default', { id: `webhook_${i}`, name: 'x'.repeat(200), endpoint: 'https://example.com/' }), {
        maxWebhooks: null,
      });
    }
    for (let i = 0; i < 100 && statSync(file('own.db')).size <= before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(statSync(file('own.db')).size).toBeGreaterThan(before);
  });
});
