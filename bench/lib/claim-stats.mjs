// Where a store's claims spend their time, for diagnosis (BENCH_CLAIM_STATS=1 in the rate-limit
// scenario): per process, claims (Store.claimDue) and their rounds, the claim statements alone
// (the dialect's), the rest of each round (reading what a claim took, the pace of paced webhooks),
// the records (Store.recordAttempts) and give-backs (Store.release), each as a count and total
// milliseconds, and the wake-ups heard.

/** Wraps `store` (a KyselyStore of the built package) in place; returns a function that reads the tallies. */
export function countClaims(store) {
  const t = {
    claims: 0,
    claimMs: 0,
    rounds: 0,
    roundMs: 0,
    statements: 0,
    statementMs: 0,
    rows: 0,
    paced: 0,
    records: 0,
    recordMs: 0,
    releases: 0,
    releaseMs: 0,
    wakes: 0,
  };
  const timed = (fn, count, ms, after) =>
    async function (...args) {
      const t0 = performance.now();
      const out = await fn.apply(this, args);
      t[count]++;
      t[ms] += performance.now() - t0;
      after?.(out);
      return out;
    };
  t.byRows = {};
  const claimDue = timed(store.claimDue, 'claims', 'claimMs', (out) => {
    t.rows += out.length;
  });
  store.claimDue = function (args) {
    const key = `${args.excludeWebhookIds.length}w${args.excludeEnvironments.length}e`;
    return claimDue.call(this, args).then((out) => {
      const k = `${key}:${out.length === 0 ? 0 : out.length < args.limit ? 'short' : 'full'}`;
      t.byRows[k] = (t.byRows[k] ?? 0) + 1;
      return out;
    });
  };
  store.claimOnce = timed(store.claimOnce, 'rounds', 'roundMs', (out) => {
    t.paced += out.paced ?? 0;
  });
  store.dialect.claim = timed(store.dialect.claim, 'statements', 'statementMs');
  store.recordAttempts = timed(store.recordAttempts, 'records', 'recordMs');
  store.release = timed(store.release, 'releases', 'releaseMs', () => {});
  const subscribe = store.subscribe?.bind(store);
  if (subscribe)
    store.subscribe = (onWake, ...rest) =>
      subscribe(
        () => {
          t.wakes++;
          onWake();
        },
        ...rest,
      );
  return () => ({ ...t, paceAndReadMs: t.roundMs - t.statementMs });
}

/**
 * CPU milliseconds (user + system, Linux /proc) so far of these processes, and of every
 * PostgreSQL backend whose command line names `database`: a run's split of the machine's CPU
 * between the engines and the database, whatever else the machine runs.
 */
export async function cpuSplit(pids, database) {
  const { readdirSync, readFileSync } = await import('node:fs');
  const tick = 10; // ms per clock tick (USER_HZ 100)
  const cpu = (pid) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * tick;
    } catch {
      return 0;
    }
  };
  let postgres = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {}
    if (database && cmd.startsWith('postgres:') && cmd.includes(` ${database} `)) postgres += cpu(pid);
  }
  return { engines: pids.reduce((n, pid) => n + cpu(pid), 0), postgres };
}
