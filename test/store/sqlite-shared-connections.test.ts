import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import type { EmittedEvent } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/http.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';
import { type SharedHost, signUpUnderLoad, signupEvent, user, useSharedHost } from './sqlite-shared-host.js';

/**
 * Issue 35, point 3, the other wiring: the host keeps its own connection to the file and the
 * store opens one of its own (`{ filename }`, WAL, its checkpoint thread). Two connections in one
 * process: a transaction of either side open while the other's code runs would leave that other
 * side in SQLite's busy wait, blocking the one thread the first needs to commit. Ours never are
 * (each runs whole within a turn of the event loop); the host's here are better-sqlite3's
 * synchronous ones, with BEGIN IMMEDIATE, and better-sqlite3's default busy timeout (5 s).
 * It used to be 10/40 (SQLITE_BUSY_SNAPSHOT).
 */
const SIGNUPS = 40;
const BACKLOG = 3000;
const STARTED = 200;

const open = useSharedHost();
const cleanups = useCleanups();
const ownConnection = () => open({ store: (_database, file) => sqliteStore({ filename: file }) });

function underLoad(host: SharedHost, signUp: (i: number) => Promise<EmittedEvent>) {
  expect(host.database.pragma('busy_timeout', { simple: true })).toBe(5000); // better-sqlite3's default
  return signUpUnderLoad(host, signUp, { backlog: BACKLOG, started: STARTED, signups: SIGNUPS, stagger: 5 });
}

describe(`${SIGNUPS} sign-ups on the host's own connection while ${BACKLOG} deliveries are in flight on the store's`, () => {
  test('user and event in one transaction of the host connection: emit with { transaction: database } on it', async () => {
    const host = await ownConnection();
    const insert = host.database.prepare('insert into users (id, email) values (?, ?)');
    const backlogLeft = await underLoad(host, (i) => {
      let emitted!: Promise<EmittedEvent>;
      host.database
        .transaction(() => {
          insert.run(user(i).id, user(i).email);
          // The event's rows go through the host's connection, in its transaction.
          emitted = host.hooks.emit(signupEvent(i), { transaction: host.database });
        })
        .immediate();
      return emitted;
    });
    console.log(`two connections, one transaction: ${SIGNUPS}/${SIGNUPS}, ${backlogLeft} of the backlog still to deliver`);
  });

  test("user in the host's transaction, then emit through the store's connection", async () => {
    const host = await ownConnection();
    const insert = host.database.prepare('insert into users (id, email) values (?, ?)');
    const backlogLeft = await underLoad(host, (i) => {
      host.database.transaction(() => insert.run(user(i).id, user(i).email)).immediate();
      return host.hooks.emit(signupEvent(i));
    });
    console.log(`two connections, emit after commit: ${SIGNUPS}/${SIGNUPS}, ${backlogLeft} of the backlog still to deliver`);
  });
});

describe("no transaction of ours holds the file's write lock while the host's code runs", () => {
  test("the host's synchronous BEGIN IMMEDIATE on its own connection, at every point of ours, never waits", async () => {
    const dir = tempDir('iw-two-connections-');
    const store = sqliteStore({ filename: dir.file('app.db'), checkpointIntervalMs: 0 });
    cleanups.push(async () => (await store.close(), dir.cleanup()));
    await store.migrate(0);
    // The host's connection waits at most 200 ms for the lock: had it to wait for us at all, it
    // would wait for a COMMIT that its own busy wait keeps from running, and fail with SQLITE_BUSY.
    const database = new Database(dir.file('app.db'), { timeout: 200 });
    cleanups.push(() => database.close());
    database.exec('create table users (id text primary key, email text not null)');
    const insert = database.prepare('insert into users (id, email) values (?, ?)');
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    const [delivery] = await store.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
    const failures: string[] = [];
    for (let i = 0; i < 40; i++) {
      const now = T0 + i * LEASE * 2;
      const ours = [
        store.createWebhook(webhook('env_a'), { maxWebhooks: 1000 }),
        store.claimDue({ now, limit: 1, workerId: 'w', leaseMs: LEASE }).then((claimed) =>
          store.recordAttempts(
            claimed.map((c) => ({
              attempt: attempt(c.delivery.id, c.webhook.id, 'env_a', false, now),
              workerId: 'w',
              now,
              nextAttemptAt: now + 1,
              disableAfterMs: 1e12,
            })),
          ),
        ),
      ];
      // The host writes 5i steps (microtasks) later: over the rounds, at every point of ours.
      const theirs = (async () => {
        for (let step = 0; step < i * 5; step++) await null;
        database.transaction(() => insert.run(user(i).id, user(i).email)).immediate();
      })();
      for (const r of await Promise.allSettled([...ours, theirs])) if (r.status === 'rejected') failures.push(String(r.reason));
    }
    expect(failures).toEqual([]);
    expect(database.prepare('select count(*) as n from users').get()).toEqual({ n: 40 });
    expect((await store.getDelivery('env_a', delivery!.id))?.attemptCount).toBe(40);
  });
});
