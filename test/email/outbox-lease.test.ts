import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { writeNotice } from '../../adapters/kysely/notices.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { ManualClock, type WebhookDisabledInfo } from '../../src/index.js';
import { NoticeOutbox } from '../../src/notices/outbox.js';
import { Telemetry } from '../../src/telemetry/telemetry.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/http.js';
import { disabledInfo } from './info.js';

/**
 * The notice lease against the outbox's worst case, on a real SQLite file and the ManualClock:
 * the notifier "takes" engine time by advancing the clock, and a second connection holding the
 * file's write lock makes recording the result fail as a busy database does (SQLITE_BUSY, which
 * the store calls transient). Recording is retried only while the lease has room, so a live
 * process never works past its lease; what it could not record is sent again, same noticeId.
 */
const cleanups = useCleanups();
const T0 = Date.parse('2026-01-04T03:12:05.000Z');
const MINUTE = 60_000;
const LEASE = 5 * MINUTE;

async function setup(sendTakesMs: number) {
  const dir = tempDir('iw-outbox-lease-');
  cleanups.push(() => dir.cleanup());
  const filename = dir.file('webhooks.db');
  const clock = new ManualClock(T0);
  const store = sqliteStore({ filename, busyTimeoutMs: 20 });
  cleanups.push(() => store.close());
  await store.migrate(T0);
  await store.kysely.transaction().execute((trx) => writeNotice(trx, disabledInfo().webhook, T0));

  // Another connection to the file: `lock()` takes the write lock, as another process's long write would.
  const other = new Database(filename);
  cleanups.push(() => other.close());
  const lock = () => other.exec('begin immediate');
  const unlock = () => other.exec('commit');

  const sends: WebhookDisabledInfo[] = [];
  const records: boolean[] = [];
  const finish = store.finishNotice.bind(store);
  // Counts the outbox's record tries (each goes to the real store).
  store.finishNotice = async (...args) => {
    try {
      const done = await finish(...args);
      records.push(true);
      return done;
    } catch (error) {
      records.push(false);
      throw error;
    }
  };
  const logged: string[] = [];
  const outbox = (workerId: string) =>
    new NoticeOutbox({
      store,
      clock,
      notifier: {
        webhookDisabled: async (info) => {
          sends.push(info);
          if (sends.length === 1) {
            await clock.advance(sendTakesMs); // the send takes this long
            lock(); // and the database is busy when it ends
          }
        },
      },
      logger: { warn: () => {}, error: (message) => logged.push(message) },
      telemetry: new Telemetry(undefined, { store, clock }),
      workerId,
      pollIntervalMs: MINUTE,
    });
  return { store, clock, lock, unlock, sends, records, logged, outbox };
}

test('a send that used up its lease is recorded with one try, not retried past the lease: the next claimer sends it again, same noticeId', async () => {
  const t = await setup(LEASE - 10_000); // 4 min 50 s: inside the watchdog, 10 s of lease left
  await t.outbox('w1').runIfDue();
  // One try, refused by the busy file, and no retry: the lease has no room left for one.
  expect(t.records).toEqual([false]);
  expect(t.logged).toEqual(['could not record a notice; its lease will expire and it will be sent again']);
  t.unlock();
  const [held] = await t.store.listNotices({ limit: 10 });
  expect(held).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: T0 + LEASE });

  // Nobody else gets it while the lease lives; after it, the next claimer sends it with the same id.
  await t.clock.set(T0 + LEASE - 1);
  await t.outbox('w2').runIfDue();
  expect(t.sends).toHaveLength(1);
  await t.clock.set(T0 + LEASE);
  await t.outbox('w2').runIfDue();
  expect(t.sends.map((s) => s.noticeId)).toEqual([held!.id, held!.id]);
  expect(await t.store.listNotices({ limit: 10 })).toMatchObject([{ id: held!.id, status: 'sent', attempts: 1 }]);
});

test('a send with lease to spare is recorded through a busy database by retrying, and is not sent again', async () => {
  const t = await setup(MINUTE);
  const run = t.outbox('w1').runIfDue();
  // Retried while the file is busy (the lease has 3 min 45 s of room, the budget is 45 s) ...
  await until('two refused record tries', () => t.records.filter((r) => !r).length >= 2, 30_000);
  t.unlock();
  await run;
  // ... and recorded once the lock is gone.
  expect(t.records.at(-1)).toBe(true);
  expect(t.logged).toEqual([]);
  const [sent] = await t.store.listNotices({ limit: 10 });
  expect(sent).toMatchObject({ status: 'sent', attempts: 1 });
  await t.clock.set(T0 + 2 * LEASE);
  await t.outbox('w2').runIfDue();
  expect(t.sends).toHaveLength(1);
});
