import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import { describe, expect, test, vi } from 'vitest';
import { type SqliteTransaction, sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, WebhooksError } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { testKey } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';
import { attempt, event, id, LEASE, T0, webhook } from './conformance.js';
import { signupEvent, user, useSharedHost, within } from './sqlite-shared-host.js';

const open = useSharedHost();
const cleanups = useCleanups();

/** A migrated store on a handle the test holds too, with one webhook of env_a. */
async function sharedStore(options: { journal?: 'delete' | 'wal'; busyTimeoutMs?: number } = {}) {
  const dir = tempDir('iw-shared-store-');
  const database = new Database(dir.file('app.db'));
  if (options.journal !== 'delete') database.pragma('journal_mode = WAL');
  const warnings: string[] = [];
  const store = sqliteStore({ database, busyTimeoutMs: options.busyTimeoutMs, onError: (m) => void warnings.push(m) });
  cleanups.push(async () => (await store.close(), database.close(), dir.cleanup()));
  await store.migrate(0);
  const hook = webhook('env_a');
  await store.createWebhook(hook, { maxWebhooks: null });
  return { database, store, hook, warnings };
}

describe('an emit that cannot be served on a shared handle fails at once, typed', () => {
  test("emit without { transaction } inside the host's open transaction: ERR_TRANSACTION_REQUIRED, never a hang", async () => {
    const host = await open();
    const app = new Kysely<{ users: { id: string; email: string } }>({ dialect: new SqliteDialect({ database: host.database }) });
    // The mistake, in each way a host holds a transaction open across an await.
    const inKysely = app.transaction().execute(async (trx) => {
      await trx.insertInto('users').values(user(1)).execute();
      return host.hooks.emit(signupEvent(1));
    });
    const error = await within(
      2000,
      "emit inside the host's Kysely transaction",
      inKysely.catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(WebhooksError);
    expect(error).toMatchObject({ code: 'ERR_TRANSACTION_REQUIRED', field: 'transaction' });
    expect((error as Error).message).toMatch(/pass it as \{ transaction \}/);

    host.database.exec('begin immediate');
    const manual = host.hooks.emit(signupEvent(2));
    const second = await within(
      2000,
      'emit between BEGIN and COMMIT',
      manual.catch((e: unknown) => e),
    );
    host.database.exec('rollback');
    expect(second).toMatchObject({ code: 'ERR_TRANSACTION_REQUIRED' });

    // Nothing was written: the Kysely transaction rolled back with its user, the emits wrote nothing.
    expect(host.database.prepare('select count(*) as n from users').get()).toEqual({ n: 0 });
    expect((await host.hooks.deliveries.list({ eventType: 'user.created' })).deliveries).toEqual([]);
    // And the same emits, passed the transaction, are served.
    await app.transaction().execute(async (trx) => {
      await trx.insertInto('users').values(user(1)).execute();
      await host.hooks.emit(signupEvent(1), { transaction: trx });
    });
    expect((await host.hooks.deliveries.list({ eventType: 'user.created' })).deliveries).toHaveLength(1);
  });

  test('{ transaction: database } outside any transaction is refused: the rows would commit on their own', async () => {
    const host = await open();
    host.database.transaction(() => {
      host.database.prepare('insert into users (id, email) values (?, ?)').run(user(3).id, user(3).email);
    })();
    // E.g. an emit made after a synchronous transaction had already returned.
    const emitted = host.hooks.emit(signupEvent(3), { transaction: host.database });
    await expect(within(2000, 'emit on a handle with no transaction', emitted)).rejects.toMatchObject({ code: 'ERR_TRANSACTION_REQUIRED' });
  });

  test("an emit made before the host's transaction began waits for it, and does not join it", async () => {
    const host = await open();
    const app = new Kysely<{ users: { id: string; email: string } }>({ dialect: new SqliteDialect({ database: host.database }) });
    // The emit's turn comes after a statement of ours already in the queue; the host begins meanwhile.
    const before = host.hooks.emit(signupEvent(4));
    const rolledBack = app
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('users').values(user(5)).execute();
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('the host changes its mind');
      })
      .catch((e: Error) => e.message);
    const emitted = await within(2000, 'the emit made before the transaction', before);
    expect(await rolledBack).toBe('the host changes its mind');
    // Its event survived the host's rollback: it was never inside the host's transaction.
    expect(emitted.deliveryIds).toHaveLength(1);
    expect(await host.hooks.deliveries.get(emitted.deliveryIds[0]!)).toMatchObject({ eventId: emitted.id });
  });

  test("from outside the host's open transaction, { transaction: hostKysely } queues behind it instead of being refused", async () => {
    const host = await open();
    const app = new Kysely<{ users: { id: string; email: string } }>({ dialect: new SqliteDialect({ database: host.database }) });
    let opened!: () => void;
    const isOpen = new Promise<void>((r) => (opened = r));
    const other = app
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('users').values(user(10)).execute();
        opened();
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('the other request rolls back');
      })
      .catch((e: Error) => e.message);
    await isOpen;
    // Another request's emit, made while that transaction is open on the one connection:
    // refused without a transaction (SQLite cannot tell it from one inside) …
    await expect(within(2000, 'a bare emit', host.hooks.emit(signupEvent(11)))).rejects.toMatchObject({ code: 'ERR_TRANSACTION_REQUIRED' });
    // … served through the host's Kysely, in a transaction of its own once the other one ends.
    const emitted = await within(2000, 'an emit through the Kysely instance', host.hooks.emit(signupEvent(12), { transaction: app }));
    expect(await other).toBe('the other request rolls back');
    expect(await host.hooks.deliveries.get(emitted.deliveryIds[0]!)).toMatchObject({ eventId: emitted.id });
  });

  test('the same mistake inside store.kysely.transaction() fails after busyTimeoutMs, typed; an emit queued behind one is served', async () => {
    const dir = tempDir('iw-own-kysely-');
    const store = sqliteStore({ filename: dir.file('own.db'), busyTimeoutMs: 200, checkpointIntervalMs: 0 });
    cleanups.push(async () => (await store.close(), dir.cleanup()));
    await store.migrate(0);
    await store.createWebhook(webhook('env_a'), { maxWebhooks: null });
    const inside = store.kysely.transaction().execute(() => store.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') }));
    const error = await within(
      3000,
      'an emit without transaction inside store.kysely.transaction()',
      inside.catch((e: unknown) => e),
    );
    expect(error).toMatchObject({ code: 'ERR_TRANSACTION_REQUIRED' });
    expect((error as Error).message).toMatch(/store\.kysely.*pass it as \{ transaction: trx \}/);
    // Not inside, only behind: it waits its turn and is written.
    const holding = store.kysely.transaction().execute(async (trx) => {
      await trx.selectFrom('iw_webhooks').selectAll().execute();
      await new Promise((r) => setTimeout(r, 20));
    });
    const behind = store.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
    await holding;
    expect(await within(3000, 'an emit queued behind a transaction', behind)).toHaveLength(1);
  });

  test("a statement of ours waits for the host's transaction on a timer, and gives up after busyTimeoutMs with SQLITE_BUSY (transient)", async () => {
    const { database, store } = await sharedStore({ busyTimeoutMs: 100 });
    database.exec('begin immediate');
    try {
      const waited = store.listWebhooks('env_a').catch((e: unknown) => e);
      const error = await within(2000, "a read under the host's transaction", waited);
      expect(error).toMatchObject({ code: 'SQLITE_BUSY' });
      expect(store.isTransient(error)).toBe(true);
    } finally {
      database.exec('rollback');
    }
    expect(await store.listWebhooks('env_a')).toHaveLength(1);
  });
});

describe("no transaction of ours is ever open while the host's code runs", () => {
  test("the host's BEGIN started in the same tick as our multi-statement transactions never meets one", async () => {
    const { database, store } = await sharedStore();
    const app = new Kysely<any>({ dialect: new SqliteDialect({ database }) });
    database.exec('create table users (id text primary key, email text not null)');
    const deliveries = await store.insertEvent(event('env_a'), { newDeliveryId: () => id('msg') });
    // 40 rounds, each starting in one tick: our transactions (a webhook created under its cap, a
    // recorded failure) and the host's own Kysely transaction. Kysely's transactions of ours used to be
    // open across awaits, and the host's BEGIN then failed inside them.
    const failures: string[] = [];
    for (let i = 0; i < 40; i++) {
      const ours = [
        store.createWebhook(webhook('env_a'), { maxWebhooks: 1000 }),
        store.claimDue({ now: T0 + i * LEASE * 2, limit: 1, workerId: 'w', leaseMs: LEASE }).then((claimed) =>
          store.recordAttempts(
            claimed.map((c) => ({
              attempt: attempt(c.delivery.id, c.webhook.id, 'env_a', false, T0 + i * LEASE * 2),
              workerId: 'w',
              now: T0 + i * LEASE * 2,
              nextAttemptAt: T0 + i * LEASE * 2 + 1,
              disableAfterMs: 1e12,
            })),
          ),
        ),
      ];
      // The host begins 5i steps (microtasks) later: over the rounds, at every point of ours.
      const theirs = (async () => {
        for (let step = 0; step < i * 5; step++) await null;
        await app.transaction().execute(async (trx) => {
          await trx.insertInto('users').values(user(i)).execute();
          await trx.selectFrom('users').selectAll().execute();
        });
      })();
      for (const r of await Promise.allSettled([...ours, theirs])) if (r.status === 'rejected') failures.push(String(r.reason));
    }
    expect(failures).toEqual([]);
    expect(database.prepare('select count(*) as n from users').get()).toEqual({ n: 40 });
    expect((await store.getDelivery('env_a', deliveries[0]!.id))?.attemptCount).toBe(40);
  });
});

describe("the host's fake timers", () => {
  test('faking timers after the store loaded does not stop its transactions (it keeps the real ones)', async () => {
    const { store, hook } = await sharedStore();
    const realTimeout = globalThis.setTimeout;
    vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'setInterval', 'Date', 'performance'] });
    try {
      // Disabling is a transaction (the webhook, then its pending deliveries held).
      const disabled = store.disableWebhook('env_a', hook.id, 'by hand', T0 + 1);
      const timedOut = new Promise((r) => realTimeout(() => r('still waiting after 2000 ms'), 2000));
      expect(await Promise.race([disabled.then((w) => w?.status), timedOut])).toBe('disabled');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the host's pragmas are the host's", () => {
  test('journal_mode=delete and synchronous=FULL stay as they were through migrate, emits and deliveries; one warning', async () => {
    const host = await open({ journal: 'delete' });
    host.database.pragma('synchronous = FULL');
    host.database.pragma('busy_timeout = 1234');
    const settings = () => ({
      journal: host.database.pragma('journal_mode', { simple: true }),
      synchronous: host.database.pragma('synchronous', { simple: true }),
      busy: host.database.pragma('busy_timeout', { simple: true }),
    });
    await host.load(80);
    await host.receiver.waitFor(80, 30_000);
    await host.hooks.drain();
    expect(settings()).toEqual({ journal: 'delete', synchronous: 2, busy: 1234 });
    // Told once, with what it costs and how to change it; a second store on the handle adds nothing.
    expect(host.warnings).toHaveLength(1);
    expect(host.warnings[0]).toMatch(/journal_mode=delete, not WAL/);
    expect(host.warnings[0]).toContain("database.pragma('journal_mode = WAL')");
    const again = sqliteStore({ database: host.database, onError: (m) => void host.warnings.push(m) });
    await again.close();
    expect(host.warnings).toHaveLength(1);
    expect(settings()).toEqual({ journal: 'delete', synchronous: 2, busy: 1234 });
  });

  test('a WAL handle is not warned about; busyTimeoutMs given is applied; a file the store opens keeps WAL/NORMAL', async () => {
    const { database, warnings } = await sharedStore({ busyTimeoutMs: 250 });
    expect(warnings).toEqual([]);
    expect(database.pragma('busy_timeout', { simple: true })).toBe(250);
    const dir = tempDir('iw-own-');
    const own = sqliteStore({ filename: dir.file('own.db'), checkpointIntervalMs: 0 });
    cleanups.push(async () => (await own.close(), dir.cleanup()));
    const journal = await own.kysely.executeQuery<{ journal_mode: string }>(CompiledQuery.raw('pragma journal_mode'));
    const synchronous = await own.kysely.executeQuery<{ synchronous: number }>(CompiledQuery.raw('pragma synchronous'));
    expect([journal.rows[0]?.journal_mode, synchronous.rows[0]?.synchronous]).toEqual(['wal', 1]);
  });
});

describe('`transaction` is typed', () => {
  test('the SQLite store takes a Kysely transaction or the better-sqlite3 handle, and nothing else', async () => {
    const host = await open();
    const insert = host.database.prepare('insert into users (id, email) values (?, ?)');
    let emitted!: Promise<unknown>;
    host.database.transaction(() => {
      insert.run(user(6).id, user(6).email);
      emitted = host.hooks.emit(signupEvent(6), { transaction: host.database });
    })();
    await emitted;
    // @ts-expect-error: a number is no transaction
    await expect(host.hooks.emit(signupEvent(7), { transaction: 42 })).rejects.toThrow(TypeError);
    // @ts-expect-error: nor is a plain object
    await expect(host.hooks.emit(signupEvent(7), { transaction: {} })).rejects.toThrow(TypeError);
    expect((await host.hooks.deliveries.list({ eventType: 'user.created' })).deliveries).toHaveLength(1);
  });

  test('createWebhooks infers it from the store: nothing to annotate', async () => {
    const { database, store } = await sharedStore();
    const hooks = createWebhooks({ store, keys: [await testKey()], issuer: 'https://auth.example.com' });
    cleanups.push(() => hooks.close());
    const sameAs: (tx: SqliteTransaction | undefined) => void = () => {};
    // The parameter's type is exactly the store's: each is assignable to the other.
    type Param = NonNullable<Parameters<typeof hooks.emit>[1]>['transaction'];
    sameAs(undefined as Param);
    const back: Param = undefined as SqliteTransaction | undefined;
    expect(back).toBeUndefined();
    // @ts-expect-error: a string is no transaction
    const refused = hooks.emit(signupEvent(9), { transaction: 'tx' });
    await expect(refused).rejects.toThrow(TypeError);
    expect(database.inTransaction).toBe(false);
  });

  test("a host's synchronous transaction that throws after the emit takes the event back with its user", async () => {
    const host = await open();
    const insert = host.database.prepare('insert into users (id, email) values (?, ?)');
    let emitted!: Promise<unknown>;
    expect(() =>
      host.database.transaction(() => {
        insert.run(user(8).id, user(8).email);
        emitted = host.hooks.emit(signupEvent(8), { transaction: host.database });
        throw new Error('the account row is refused');
      })(),
    ).toThrow('the account row is refused');
    await emitted; // the statements ran and succeeded inside; the host's ROLLBACK took them back
    expect(host.database.prepare('select count(*) as n from users').get()).toEqual({ n: 0 });
    expect((await host.hooks.deliveries.list({ eventType: 'user.created' })).deliveries).toEqual([]);
    expect(host.database.prepare('select count(*) as n from iw_events').get()).toEqual({ n: 0 });
  });
});
