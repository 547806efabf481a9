// The targets of issue 7, each judged on the median of its runs. A target whose figure is
// missing (a skipped or failed scenario) reports "n/a", never a pass.

const m = (results, id, kind, metric) => results[id]?.[kind]?.metrics?.[metric]?.median ?? null;

/** Figures derived from two scenarios of the same run (ratios to the ceiling, to the baseline, to solo). */
export function derive(results) {
  const ceiling = m(results, 'ceiling', 'any', 'signaturesPerSec');
  const ratio = (x, y) => (x === null || y === null || y === 0 ? null : x / y);
  const d = { ceiling };
  for (const kind of ['sqlite', 'postgres']) {
    d[`fanout1.${kind}.ratio`] = ratio(m(results, 'fanout1', kind, 'deliveriesPerSec'), ceiling);
    d[`fanout10.${kind}.ratio`] = ratio(m(results, 'fanout10', kind, 'deliveriesPerSec'), ceiling);
  }
  d['baseline.ratio'] = ratio(m(results, 'fanout1', 'postgres', 'deliveriesPerSec'), m(results, 'baseline', 'postgres', 'jobsPerSec'));
  d['baseline.ceilingRatio'] = ratio(m(results, 'baseline', 'postgres', 'jobsPerSec'), ceiling);
  return d;
}

const at = (id, kind, metric) => (r) => m(r, id, kind, metric);
const derived = (key) => (_r, d) => d[key];

/** [label, get(results, derived), comparison, threshold, unit] */
export const TARGETS = [
  ['fan-out 1, SQLite, × ceiling', derived('fanout1.sqlite.ratio'), '>=', 0.8, '×'],
  ['fan-out 1, PostgreSQL, × ceiling', derived('fanout1.postgres.ratio'), '>=', 0.7, '×'],
  ['fan-out 10, SQLite, × ceiling', derived('fanout10.sqlite.ratio'), '>=', 3, '×'],
  ['fan-out 10, PostgreSQL, × ceiling', derived('fanout10.postgres.ratio'), '>=', 3, '×'],
  ['fan-out 1, PostgreSQL through PgBouncer, × direct', at('pgbouncer', 'postgres', 'ratio'), '>=', 0.9, '×'],
  ['emit p99, SQLite, 10 subscribers', at('emit', 'sqlite', 'p99_10'), '<=', 1, 'ms'],
  ['emit p99, SQLite, 10 subscribers, in host transaction', at('emit', 'sqlite', 'p99_10_tx'), '<=', 1, 'ms'],
  ['emit p99, PostgreSQL, 10 subscribers', at('emit', 'postgres', 'p99_10'), '<=', 3, 'ms'],
  ['emit p99, PostgreSQL, 10 subscribers, in host transaction', at('emit', 'postgres', 'p99_10_tx'), '<=', 3, 'ms'],
  ['pickup p50, SQLite, in-process', at('pickup', 'sqlite', 'p50'), '<=', 5, 'ms'],
  ['pickup p50, PostgreSQL, in-process', at('pickup', 'postgres', 'p50'), '<=', 5, 'ms'],
  ['pickup p50, PostgreSQL, across processes', at('pickup-cross', 'postgres', 'p50'), '<=', 20, 'ms'],
  ['backlog idle tick p99, SQLite', at('backlog', 'sqlite', 'idleTickP99'), '<=', 1, 'ms'],
  ['backlog idle tick p99, PostgreSQL', at('backlog', 'postgres', 'idleTickP99'), '<=', 1, 'ms'],
  ['backlog due-batch claim p99, SQLite', at('backlog', 'sqlite', 'claimP99'), '<=', 5, 'ms'],
  ['backlog due-batch claim p99, PostgreSQL', at('backlog', 'postgres', 'claimP99'), '<=', 5, 'ms'],
  ['backlog RSS growth, SQLite', at('backlog', 'sqlite', 'rssGrowthMB'), '<=', 50, 'MB'],
  ['backlog RSS growth, PostgreSQL', at('backlog', 'postgres', 'rssGrowthMB'), '<=', 50, 'MB'],
  ['backlog idle CPU, SQLite', at('backlog', 'sqlite', 'idleCpuPct'), '<', 1, '%'],
  ['backlog idle CPU, PostgreSQL', at('backlog', 'postgres', 'idleCpuPct'), '<', 1, '%'],
  ['isolation, SQLite, healthy × solo', at('isolation', 'sqlite', 'healthyRatio'), '>=', 0.9, '×'],
  ['isolation, PostgreSQL, healthy × solo', at('isolation', 'postgres', 'healthyRatio'), '>=', 0.9, '×'],
  // Endpoint options (issue 36): a webhook at 20/s, arrivals over any 10 s window; its neighbours beside its backlog.
  ['rate limit, SQLite, max over 10 s', at('ratelimit', 'sqlite', 'throttledMaxPerSec'), '<=', 22, '/s'],
  ['rate limit, PostgreSQL (3 processes), max over 10 s', at('ratelimit', 'postgres', 'throttledMaxPerSec'), '<=', 22, '/s'],
  ['rate limit, SQLite, other environment × solo', at('ratelimit', 'sqlite', 'otherEnvRatio'), '>=', 0.9, '×'],
  ['rate limit, SQLite, same environment × solo', at('ratelimit', 'sqlite', 'sameEnvRatio'), '>=', 0.9, '×'],
  ['rate limit, PostgreSQL, other environment × solo', at('ratelimit', 'postgres', 'otherEnvRatio'), '>=', 0.9, '×'],
  ['rate limit, PostgreSQL, same environment × solo', at('ratelimit', 'postgres', 'sameEnvRatio'), '>=', 0.9, '×'],
  ['baseline, PostgreSQL, × pg-boss pipeline', derived('baseline.ratio'), '>=', 1.5, '×'],
];

export function judge(results) {
  const d = derive(results);
  return TARGETS.map(([label, get, op, threshold, unit]) => {
    const value = get(results, d);
    const pass = value === null ? null : op === '>=' ? value >= threshold : op === '<=' ? value <= threshold : value < threshold;
    return { label, value, op, threshold, unit, verdict: pass === null ? 'n/a' : pass ? 'pass' : 'miss' };
  });
}
