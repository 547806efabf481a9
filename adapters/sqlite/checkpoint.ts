import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { holdQueue, type SqliteDatabase } from './driver.js';

const require = createRequire(import.meta.url);

/**
 * The WAL's size the thread keeps the file to when the load does not need more: a quiet round
 * that finds fewer frames than this written since the last restart truncates the file (see
 * WORKER_SOURCE). Also `journal_size_limit` when checkpoints run on the main thread (no thread).
 */
const WAL_SIZE_LIMIT = 16 * 1024 * 1024;
/**
 * `journal_size_limit` of the store's own connection while the thread runs: only a backstop. The
 * first commit after a WAL restart truncates the file to it on the main thread, a stall of 15-24
 * ms at 50 MB (bench/studies/wal-stall.mjs), so the thread sizes the file itself and this never fires
 * unless the thread cannot (another process at the file keeping its quiet rounds PASSIVE).
 */
const WAL_BACKSTOP_LIMIT = 256 * 1024 * 1024;
/** Bytes of one WAL frame: a page (SQLite's default 4096) and its 24-byte header. */
const FRAME_BYTES = 4096 + 24;

/** WAL frames (pages) above which a round asks for a quiet moment (SQLite's own checkpoint mark). */
const RESTART_FRAMES = 1000;
/**
 * New frames a round may leave for the quiet round; more, and the thread runs another round first
 * (at most `CATCH_UP_ROUNDS`). After a bulk load the first round copies tens of thousands of
 * frames, and the frames written meanwhile would otherwise stop the store's queue for a long quiet
 * round.
 */
const QUIET_FRAMES = 256;
const CATCH_UP_ROUNDS = 5;
/** Longest the main thread holds its queue for the thread's second round. */
const QUIET_MAX_MS = 1000;

/** Stops the checkpoints; resolves once no thread of ours is left. */
export interface Checkpoints {
  stop(): Promise<void>;
}

/**
 * The worker's whole program, as text: a file next to this one would have to be found both in
 * dist/ (JavaScript) and under vitest (TypeScript that plain Node cannot load), and `eval` needs
 * neither. It opens its own connection to the same file (the driver resolved by the main thread,
 * the way adapters/driver.ts loads it) and runs a PASSIVE checkpoint every interval: PASSIVE
 * never waits for readers or writers, so it never holds up the main connection.
 *
 * The WAL restarts from its beginning only when a write begins with every frame copied. Under a
 * steady load the main connection commits while any round copies, so that never happens and the
 * WAL would grow without bound. So a round that leaves a long WAL runs more rounds while many
 * frames arrive during each (catching up, holding no one), then asks the main thread for a
 * quiet moment ('quiet?'): the main thread holds its statement queue (the store's calls wait,
 * the event loop does not), and a last round copies the few frames written during the one
 * before ('quiet' … 'done'); the next commit then restarts the WAL.
 *
 * The file's size: a WAL that restarts is written again from its start, over the old frames.
 * Truncating it in the quiet round stops the queue several times longer at the sizes the peers
 * bench writes each second at fan-out 10 than the same round that only makes the next commit
 * restart (RESTART), and the file is then grown again within the second.
 * So the quiet round truncates only when the frames written since the last restart were fewer
 * than `walSizeLimit` (the load no longer needs a larger file), and a round that needs no quiet
 * moment asks for one anyway when the file is larger than that: once the load drops, the file
 * is cut back within a round or two.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
db.pragma('wal_autocheckpoint = 0');
db.pragma('journal_size_limit = ' + workerData.walSizeLimit);
let timer;
let asked = false;
// Frames left in the WAL after a round (a busy round, another checkpointer at work: 0, try later).
const round = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    return r.busy === 0 ? r.log : 0;
  } catch {
    return 0; // busy or locked: the next round tries again; the WAL only grows meanwhile
  }
};
const walBytes = () => {
  try {
    return fs.statSync(workerData.filename + '-wal').size;
  } catch {
    return 0;
  }
};
// The quiet round: nothing of this process writes meanwhile, so this thread copies the last
// frames, and the next commit restarts the WAL from its start. When the frames written since the
// last restart (\`log\`) were fewer than the size limit, it truncates the file too (TRUNCATE):
// the main connection never does (its journal_size_limit is only a backstop), as that would stall
// the event loop (bench/studies/wal-stall.mjs measures it). Under a load that fills more than that
// between rounds it only restarts (RESTART): the file is written over from its start rather than
// cut and grown again, and the stopped queue waits a fraction as long. Both wait for other
// processes' readers (and TRUNCATE writers), and our queue is held meanwhile, so they are tried
// with no busy timeout; if another process is at the file, a PASSIVE round runs instead.
const quietRound = (log) => {
  try {
    db.pragma('busy_timeout = 0');
    const mode = log * workerData.frameBytes >= workerData.walSizeLimit ? 'RESTART' : 'TRUNCATE';
    const [r] = db.pragma('wal_checkpoint(' + mode + ')');
    if (r.busy === 0) return;
  } catch {
    // busy or locked: fall through to the round that waits for no one
  } finally {
    db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  }
  round();
};
const tick = () => {
  // Catch up first, holding no one: each round copies what was written during the one before
  // (the WAL only grows until it restarts, so the growth is the new frames). The quiet round then
  // has only a round's worth of frames to copy and sync, however long the first round took.
  let log = round();
  let before = 0;
  for (let i = 0; i < workerData.catchUpRounds && log > workerData.restartFrames && log - before > workerData.quietFrames; i++) {
    before = log;
    log = round();
  }
  // Past the restart mark; or, the load having dropped, a file larger than it now needs.
  if (log > workerData.restartFrames || walBytes() > workerData.walSizeLimit) {
    asked = log;
    parentPort.postMessage('quiet?');
  } else timer = setTimeout(tick, workerData.everyMs);
};
tick();
parentPort.on('message', (message) => {
  if (message === 'quiet' && asked !== false) {
    const log = asked;
    asked = false;
    quietRound(log);
    parentPort.postMessage('done');
    timer = setTimeout(tick, workerData.everyMs);
  } else if (message === 'stop') {
    clearTimeout(timer);
    db.close();
    parentPort.close();
  }
});
`;

/** Live checkpoint threads of this process (for the test that close() leaves none behind). */
export const runningCheckpointThreads = { count: 0 };

/**
 * WAL checkpoints for a database file the store opened itself, every `everyMs`, off the event loop:
 * a checkpoint copies pages into the database file and syncs it, tens of milliseconds under load
 * that would otherwise stall every timer, request and commit of the host. The thread starts at the
 * first interval (a store closed sooner never spawns one). Should it fail to start or die, the
 * checkpoints run on the main thread from a timer, as before, and `onError` is told once (the
 * store's option: a host routes it to its own logger).
 */
export function startCheckpoints(
  db: SqliteDatabase,
  filename: string,
  everyMs: number,
  busyTimeoutMs: number,
  onError: (message: string, error: unknown) => void,
): Checkpoints {
  db.pragma('wal_autocheckpoint = 0');
  // The thread keeps the WAL's size (see WORKER_SOURCE); this connection truncates only past the
  // backstop. Without any limit the WAL keeps its largest size ever (seen: 50 MB beside a 6 MB
  // database after 90 simulated days).
  db.pragma(`journal_size_limit = ${WAL_BACKSTOP_LIMIT}`);
  const workerData = {
    driver: '',
    filename: resolve(filename),
    everyMs,
    restartFrames: RESTART_FRAMES,
    quietFrames: QUIET_FRAMES,
    catchUpRounds: CATCH_UP_ROUNDS,
    busyTimeoutMs,
    walSizeLimit: WAL_SIZE_LIMIT,
    frameBytes: FRAME_BYTES,
  };
  let stopped = false;
  let worker: Worker | null = null;
  let exited: Promise<void> = Promise.resolve();
  let fallback: NodeJS.Timeout | null = null;

  const fallBack = (error: unknown) => {
    if (stopped || fallback) return;
    worker = null;
    // No thread to size the WAL: the next restart on this connection does (SQLite's own way).
    if (db.open) db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    fallback = mainThreadCheckpoints(db, everyMs);
    try {
      onError('sqliteStore: the WAL checkpoint thread failed; checkpoints now run on the main thread', error);
    } catch {
      // A host's logger that throws must not take the process down from a worker's exit event.
    }
  };

  const spawn = () => {
    if (stopped) return;
    try {
      workerData.driver = require.resolve('better-sqlite3');
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData });
      worker = w;
      runningCheckpointThreads.count++;
      let failure: unknown = null;
      let done: (() => void) | null = null;
      w.on('error', (error) => (failure = error));
      w.on('message', async (message) => {
        if (message === 'done') (done as (() => void) | null)?.();
        if (message !== 'quiet?') return;
        // While the store's calls wait on the held queue, the thread's answer is what they wait
        // for: keep the process alive for it (an unref'd thread let a process whose only work
        // was a pending store call exit mid-call, with the call never settled).
        w.ref();
        const release = await holdQueue(db);
        try {
          if (stopped || worker !== w) return;
          await new Promise<void>((resolveDone) => {
            done = resolveDone;
            setTimeout(resolveDone, QUIET_MAX_MS).unref();
            w.postMessage('quiet');
          });
        } finally {
          done = null;
          release();
          w.unref();
        }
      });
      exited = new Promise((resolveExit) =>
        w.on('exit', (code) => {
          runningCheckpointThreads.count--;
          (done as (() => void) | null)?.();
          resolveExit();
          if (!stopped) fallBack(failure ?? new Error(`exited with code ${code}`));
        }),
      );
      w.unref();
    } catch (error) {
      fallBack(error);
    }
  };
  const start = setTimeout(spawn, everyMs);
  start.unref();

  return {
    async stop() {
      if (stopped) return exited;
      stopped = true;
      clearTimeout(start);
      if (fallback) clearInterval(fallback);
      // The thread finishes a checkpoint under way (it is synchronous there), closes its
      // connection and ends; the main connection closes after it. Ref'd meanwhile, so a host that
      // ends with `await close()` does not exit before its files are closed cleanly.
      worker?.ref();
      worker?.postMessage('stop');
      return exited;
    },
  };
}

/**
 * The fallback: PASSIVE checkpoints from a timer on the main thread. A round that finds our own
 * transaction open (between two awaited statements) looks again in a moment.
 */
function mainThreadCheckpoints(db: SqliteDatabase, everyMs: number): NodeJS.Timeout {
  const checkpoint = (triesLeft: number) => {
    if (!db.open) return;
    // Under steady load a tick can keep landing inside one transaction: try again shortly rather
    // than wait a whole interval.
    if (db.inTransaction) {
      if (triesLeft > 0) setTimeout(() => checkpoint(triesLeft - 1), 2).unref();
      return;
    }
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or locked: the next round tries again; the WAL only grows meanwhile.
    }
  };
  const timer = setInterval(() => checkpoint(20), everyMs);
  timer.unref();
  return timer;
}
