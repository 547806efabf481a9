import { unlinkSync } from 'node:fs';
import { describe, expect, test, vi } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/http.js';

/**
 * The stores' background warnings (trouble no call of the host sees) go to their `onError`, so a
 * host can route them to its own logger, as it does the engine's `logger`: postgresStore's since
 * it had one (test/store), sqliteStore's here.
 */

const cleanups = useCleanups();

describe("sqliteStore's onError", () => {
  test('the checkpoint thread that cannot start is reported to onError, not the console; the store keeps working', async () => {
    const { file, cleanup } = tempDir();
    cleanups.push(cleanup);
    const warn = vi.spyOn(console, 'warn');
    cleanups.push(() => warn.mockRestore());
    const reported: Array<[string, unknown]> = [];
    const store = sqliteStore({
      filename: file('gone.db'),
      checkpointIntervalMs: 20,
      onError: (message, error) => void reported.push([message, error]),
    });
    cleanups.push(() => store.close());
    await store.migrate(0);
    // The store's open handle keeps working; the thread's own connection (the file must exist) cannot open.
    unlinkSync(file('gone.db'));
    await until('the report', () => reported.length > 0);
    const [[message, error]] = reported as [[string, unknown]];
    expect(message).toBe('sqliteStore: the WAL checkpoint thread failed; checkpoints now run on the main thread');
    // What the thread threw, as it crossed over from the worker: SQLite's own code.
    expect(error).toMatchObject({ code: 'SQLITE_CANTOPEN' });
    expect(warn).not.toHaveBeenCalled();
    // Checkpoints now run on the main thread: the store still answers, and nothing more is reported.
    expect(await store.listWebhooks('default')).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(reported).toHaveLength(1);
  });

  test('onError that throws does not take the process down; the fallback still runs', async () => {
    const { file, cleanup } = tempDir();
    cleanups.push(cleanup);
    let calls = 0;
    const store = sqliteStore({
      filename: file('gone.db'),
      checkpointIntervalMs: 20,
      onError: () => {
        calls++;
        throw new Error('the logger is broken');
      },
    });
    cleanups.push(() => store.close());
    await store.migrate(0);
    unlinkSync(file('gone.db'));
    await until('the report', () => calls > 0);
    expect(await store.listWebhooks('default')).toEqual([]);
  });

  test('onError must be a function', () => {
    expect(() => sqliteStore({ filename: ':memory:', onError: 'console' as never })).toThrow(/sqliteStore: onError must be a function/);
  });
});
