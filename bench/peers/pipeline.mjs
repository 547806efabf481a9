// The hand-written durable pipeline's loop, the same for SQLite and PostgreSQL (each supplies
// its claim and its group write): claim a batch of due rows up to the free in-flight slots, sign
// ONE token per event of the claim, POST each delivery, and group-commit the outcomes (one
// transaction for all the attempts that finished while the previous write ran, or in the same
// turn of the event loop). It stops when a claim finds nothing and nothing is in flight or
// unwritten: the bench preloads every delivery due now.

/**
 * @param {{
 *   claim: (limit: number) => Promise<Array<{ id: string, endpoint: string, event: object }>> | Array<object>,
 *   write: (outcomes: object[]) => Promise<void> | void,
 *   sign: (event: object, now: number) => Promise<string>,
 *   send: (endpoint: string, deliveryId: string, token: string) => Promise<object>,
 *   inFlight: number,
 * }} parts
 * @returns {Promise<{ claims: number, groups: number }>}
 */
export function runPipeline({ claim, write, sign, send, inFlight }) {
  return new Promise((resolve, reject) => {
    let running = 0;
    let claiming = false;
    let pumpQueued = false;
    let stopped = false;
    const stats = { claims: 0, groups: 0 };
    const recorder = groupCommit(write, stats, fail);

    function fail(error) {
      if (stopped) return;
      stopped = true;
      reject(error);
    }

    // Completions in the same turn share one claim.
    const schedulePump = () => {
      if (pumpQueued || stopped) return;
      pumpQueued = true;
      setImmediate(() => {
        pumpQueued = false;
        pump().catch(fail);
      });
    };

    async function pump() {
      if (claiming || stopped) return;
      const free = inFlight - running;
      if (free <= 0) return;
      claiming = true;
      let rows;
      try {
        rows = await claim(free);
      } finally {
        claiming = false;
      }
      stats.claims++;
      if (rows.length === 0) {
        if (running === 0) {
          await recorder.idle();
          stopped = true;
          resolve(stats);
        }
        return;
      }
      // One signature per event per claim: every delivery of the event in this claim shares it.
      const now = Date.now();
      const tokens = new Map();
      for (const row of rows) {
        let token = tokens.get(row.event.id);
        if (!token) tokens.set(row.event.id, (token = sign(row.event, now)));
        running++;
        token
          .then((t) => send(row.endpoint, row.id, t))
          .then((outcome) => {
            running--;
            recorder.add({ id: row.id, ...outcome });
            schedulePump();
          }, fail);
      }
      if (running < inFlight) schedulePump();
    }

    schedulePump();
  });
}

/** Keeps one write in flight; outcomes that land meanwhile (or in the same turn) join the next. */
function groupCommit(write, stats, fail) {
  let pending = [];
  let writing = null;
  let scheduled = false;
  const flush = async () => {
    scheduled = false;
    if (writing || pending.length === 0) return;
    const group = pending;
    pending = [];
    stats.groups++;
    writing = Promise.resolve()
      .then(() => write(group))
      .finally(() => {
        writing = null;
        if (pending.length) void flush();
      });
    writing.catch(fail);
  };
  return {
    add(outcome) {
      pending.push(outcome);
      if (!scheduled && !writing) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    async idle() {
      while (writing || pending.length) {
        if (!writing) await flush();
        await writing?.catch(() => {});
      }
    },
  };
}
