import { readFileSync, statSync, unlinkSync } from 'node:fs';
import { describe, expect, test, vi } from 'vitest';
import { runningCheckpointThreads } from '../../adapters/sqlite/checkpoint.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/http.js';
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

  test('a WAL past the restart mark is truncated by the thread, in a quiet moment, not by the next commit', async () => {
    // The first commit after a WAL restart truncates the file to journal_size_limit on the
    // connection that makes it, the main thread: 17-19 ms stalls at 50 MB. The thread's quiet
    // round truncates it itself (wal_checkpoint(TRUNCATE)); the main connection would only ever
    // cut it down to 16 MB, and only when it next commits.
    const { file, cleanup } = tempDir();
    cleanups.push(cleanup);
    const store = sqliteStore({ filename: file('quiet.db'), checkpointIntervalMs: 1500 });
    cleanups.push(() => store.close());
    await store.migrate(0);
    await writeSome(store, 600); // before the thread's first round
    const frames = () => Math.max(0, (statSync(file('quiet.db-wal')).size - 32) / (4096 + 24));
    expect(frames()).toBeGreaterThan(1000); // past the mark: the round will ask for a quiet moment
    await until('the WAL truncated to nothing', () => statSync(file('quiet.db-wal')).size === 0, 15_000, 10);
    // Nothing lost, and the next commits write a new WAL from its start.
    expect(await store.listWebhooks('default')).toHaveLength(600);
    await store.createWebhook(webhook('default', { id: 'webhook_after', endpoint: 'https://example.com/' }), { maxWebhooks: null });
    expect(statSync(file('quiet.db-wal')).size).toBeGreaterThan(0);
    expect(await store.getWebhook('default', 'webhook_after')).toMatchObject({ id: 'webhook_after' });
  });

  test('a WAL busier than the size limit is restarted in the quiet moment, not truncated; once the load drops, the thread truncates it', async () => {
    // Truncating a WAL that the load fills again within the second held the store's queue 18-25
    // ms a second at fan-out 10; restarting it (the next commit writes it again from its start)
    // 2-8 ms. The file is cut back once a round finds little written since the restart.
    const { file, cleanup } = tempDir();
    cleanups.push(cleanup);
    const store = sqliteStore({ filename: file('busy.db'), checkpointIntervalMs: 1000 });
    cleanups.push(() => store.close());
    await store.migrate(0);
    await writeSome(store, 2600); // before the thread's first round: past 16 MB of frames
    const wal = file('busy.db-wal');
    const limit = 16 * 1024 * 1024;
    expect(statSync(wal).size).toBeGreaterThan(limit);
    // The WAL header's checkpoint sequence (bytes 12-15) moves on at every restart.
    const sequence = () => (statSync(wal).size >= 32 ? readFileSync(wal).readUInt32BE(12) : -1);
    const first = sequence();
    let n = 0;
    const sizes: number[] = [];
    // Keep writing, a commit a few milliseconds apart (the restart happens at a commit), until
    // the sequence moves: the file is then still at its size, written again from its start.
    await until(
      'the WAL restarted',
      async () => {
        await store.createWebhook(webhook('default', { id: `webhook_more_${n++}`, endpoint: 'https://example.com/' }), {
          maxWebhooks: null,
        });
        const now = sequence();
        if (now !== first) sizes.push(statSync(wal).size);
        return now !== first;
      },
      15_000,
      5,
    );
    expect(sizes[0]).toBeGreaterThan(limit); // restarted, not truncated (not by the thread, not by that commit)
    // No more load: the next round finds the file larger than the load needs, and truncates it.
    await until('the WAL truncated', () => statSync(wal).size === 0, 15_000, 10);
    expect(await store.listWebhooks('default')).toHaveLength(2600 + n);
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
