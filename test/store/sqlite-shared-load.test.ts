import { Kysely, SqliteDialect } from 'kysely';
import { describe, test } from 'vitest';
import type { EmittedEvent } from '../../src/index.js';
import { signUpUnderLoad, signupEvent, user, useSharedHost } from './sqlite-shared-host.js';

/**
 * Issue 35, point 3: a host that hands `sqliteStore({ database })` its own better-sqlite3 handle
 * and runs its own transactions on it, while the engine works through a backlog. 40 sign-ups at
 * once, each writing its user and emitting `user.created` in the same transaction, must all
 * succeed and each be delivered once, in each of the three ways a host writes a transaction on
 * the handle. (It used to be 24/40: "cannot start a transaction within a transaction".)
 */
const SIGNUPS = 40;
const BACKLOG = 1000;
/** The sign-ups start once this many deliveries of the backlog have arrived: the engine is busy. */
const STARTED = 200;

const open = useSharedHost();

type Host = Awaited<ReturnType<typeof open>>;

const underLoad = (host: Host, signUp: (i: number) => Promise<EmittedEvent>) =>
  signUpUnderLoad(host, signUp, { backlog: BACKLOG, started: STARTED, signups: SIGNUPS });

describe(`${SIGNUPS} sign-ups on the shared handle while ${BACKLOG} deliveries are in flight`, () => {
  test("better-sqlite3's own database.transaction(), emitting with { transaction: database }", async () => {
    const host = await open();
    const insert = host.database.prepare('insert into users (id, email) values (?, ?)');
    const backlogLeft = await underLoad(host, async (i) => {
      // As a request handler would: the sign-up arrives a moment later than the others.
      await new Promise((r) => setTimeout(r, i % 5));
      let emitted!: Promise<EmittedEvent>;
      host.database.transaction(() => {
        insert.run(user(i).id, user(i).email);
        emitted = host.hooks.emit(signupEvent(i), { transaction: host.database });
      })();
      return emitted;
    });
    console.log(
      `database.transaction(): ${SIGNUPS}/${SIGNUPS}, ${backlogLeft} of the backlog still to deliver when the last sign-up returned`,
    );
  });

  test('its own BEGIN IMMEDIATE … COMMIT around awaited work, emitting with { transaction: database }', async () => {
    const host = await open();
    const { database } = host;
    // One connection: the host's own requests take turns for it, as a real host's pool of one would.
    let turn = Promise.resolve();
    const backlogLeft = await underLoad(host, (i) => {
      const mine = turn.then(async () => {
        database.exec('begin immediate');
        try {
          database.prepare('insert into users (id, email) values (?, ?)').run(user(i).id, user(i).email);
          await new Promise((r) => setTimeout(r, 1)); // awaited work inside the transaction (a hash, a lookup)
          const emitted = await host.hooks.emit(signupEvent(i), { transaction: database });
          database.exec('commit');
          return emitted;
        } catch (error) {
          if (database.inTransaction) database.exec('rollback');
          throw error;
        }
      });
      turn = mine.then(
        () => {},
        () => {},
      );
      return mine;
    });
    console.log(
      `BEGIN IMMEDIATE … COMMIT: ${SIGNUPS}/${SIGNUPS}, ${backlogLeft} of the backlog still to deliver when the last sign-up returned`,
    );
  });

  test("the host's own Kysely on the handle (as better-auth has it), emitting with { transaction: trx }", async () => {
    const host = await open();
    const app = new Kysely<{ users: { id: string; email: string } }>({ dialect: new SqliteDialect({ database: host.database }) });
    const backlogLeft = await underLoad(host, (i) =>
      app.transaction().execute(async (trx) => {
        await trx.insertInto('users').values(user(i)).execute();
        await new Promise((r) => setTimeout(r, 1));
        return host.hooks.emit(signupEvent(i), { transaction: trx });
      }),
    );
    console.log(`host's Kysely: ${SIGNUPS}/${SIGNUPS}, ${backlogLeft} of the backlog still to deliver when the last sign-up returned`);
  });
});
