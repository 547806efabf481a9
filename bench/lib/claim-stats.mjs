// Where a store's claims spend their time, for diagnosis (BENCH_CLAIM_STATS=1 in the rate-limit
// scenario): per process, claims (Store.claimDue) and their rounds, the claim statements alone
// (the dialect's), the rest of each round (reading what a claim took, the pace of paced webhooks),
// and the records (Store.recordAttempts), each as a count and total milliseconds.

/** Wraps `store` (a KyselyStore of the built package) in place; returns a function that reads the tallies. */
export function countClaims(store) {
  const t = { claims: 0, claimMs: 0, rounds: 0, roundMs: 0, statements: 0, statementMs: 0, rows: 0, paced: 0, records: 0, recordMs: 0 };
  const timed = (fn, count, ms, after) =>
    async function (...args) {
      const t0 = performance.now();
      const out = await fn.apply(this, args);
      t[count]++;
      t[ms] += performance.now() - t0;
      after?.(out);
      return out;
    };
  store.claimDue = timed(store.claimDue, 'claims', 'claimMs', (out) => {
    t.rows += out.length;
  });
  store.claimOnce = timed(store.claimOnce, 'rounds', 'roundMs', (out) => {
    t.paced += out.paced ?? 0;
  });
  store.dialect.claim = timed(store.dialect.claim, 'statements', 'statementMs');
  store.recordAttempts = timed(store.recordAttempts, 'records', 'recordMs');
  return () => ({ ...t, paceAndReadMs: t.roundMs - t.statementMs });
}
