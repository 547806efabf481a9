import { statSync, unlinkSync } from 'node:fs';
import { describe, expect, test, vi } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { runningCheckpointThreads } from '../../adapters/sqlite/checkpoint.js';
import { tempDir } from '../helpers/http.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { webhook } from './conformance.js';

const cleanups = useCleanups();

/** Blocks this thread (no timer, no callback of ours can run) until `check` holds or 20 s pass. */
function blockUntil(check: () => boolean): boolean {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const end = performance.now() + 20_000;
  while (!check()) {
    if (performance.now() > end) return false;
    Atomics.wait(cell, 0, 0, 10);
  }
  return true;
}

async function writeSome(store: ReturnType<typeof sqliteStore>, n: number) {
  for (let i = 0; i < n; i++) {
    await store.createWebhook(webhook('default', { id: `webhook_${i}`, name: 'x'.repeat(200), endpoint: 'https://example.com/' }), {
      maxWebhooks: null,
    });
  }
}

describe('WAL checkpoints on a thread of their own', () => {
  test('pages reach the database file while the event loop is blocked, and close() ends the thread', async () => {
    const { file, cleanup } = tempDir();
    cleanups.push(cleanup);
    const threadsBefore = runningCheckpointThreads.count;
    const store = sqliteStore({ filename: file('own.db'), checkpointIntervalMs: 20 });
    cleanups.push(() => store.close());
    await store.migrate(0);
    await until('the checkpoint thread', () => runningCheckpointThreads.count === threadsBefore + 1);

    // Automatic checkpoints are off on the store's connection: only the thread moves pages
    // from the WAL into the file, and this thread is stuck in Atomics.wait meanwhile.
    const before = statSync(file('own.db')).size;
    await writeSome(store, 200);
    expect(blockUntil(() => statSync(file('own.db')).size > before)).toBe(true);

    await store.close();
    expect(runningCheckpointThreads.count).toBe(threadsBefore);
    // The thread closed its connection and the store closed the last one: SQLite removed the WAL.
    expect(() => statSync(file('own.db-wal'))).toThrow();
  });

  test('a store closed before its first interval never starts a thread', async () => {
    const { file, cleanup } = tempDir();
    cleanups.push(cleanup);
    const threadsBefore = runningCheckpointThreads.count;
    const store = sqliteStore({ filename: file('brief.db'), checkpointIntervalMs: 60_000 });
    await store.migrate(0);
    await store.close();
    expect(runningCheckpointThreads.count).toBe(threadsBefore);
  });

  test('a thread that cannot start falls back to checkpoints on the main thread, with one log line', async () => {
    const { file, cleanup } = tempDir();
    cleanups.push(cleanup);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    cleanups.push(() => warn.mockRestore());
    const store = sqliteStore({ filename: file('gone.db'), checkpointIntervalMs: 20 });
    cleanups.push(() => store.close());
    await store.migrate(0);
    // The open handle keeps working; the thread's own connection (the file must exist) cannot open.
    unlinkSync(file('gone.db'));
    await until('the fallback', () => warn.mock.calls.length > 0);
    expect(String(warn.mock.calls[0]![0])).toMatch(/checkpoint thread failed.*main thread/);
    await writeSome(store, 50);
    expect(await store.listWebhooks('default')).toHaveLength(50);
    await new Promise((r) => setTimeout(r, 100)); // a few fallback rounds run without a crash
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
