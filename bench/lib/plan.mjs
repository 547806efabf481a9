// What `npm run bench` runs: every scenario, its sizes (full and --quick), and the stores it
// runs on. Sizes are chosen so the full run stays under 5 minutes on 2 cores (about 4 on a quiet
// machine) and --quick under 30 s; the README explains each scenario and its method.
//
// `runs` is how many times a scenario repeats its measurement (each figure: the median, with
// min/max). The throughput scenarios and the baseline are the exception: ONE sustained run of
// 20,000 deliveries per store, cut into `windows` consecutive windows of equal deliveries (each
// figure: the median of the windows, with min/max) — three separate runs of 20,000 each would
// not fit in 5 minutes.

const ENGINE_DEFAULTS = undefined; // scenarios use createWebhooks' defaults unless they say otherwise

export function buildPlan({ quick }) {
  const q = (full, small) => (quick ? small : full);
  const runs = q(3, 1); // --quick is a smoke test: one run of each
  return [
    {
      id: 'ceiling',
      title: 'ceiling: RS256 signatures/s on all cores',
      module: 'ceiling.mjs',
      kinds: [null],
      config: { seconds: q(1, 0.3), runs, concurrency: 16 },
    },
    {
      id: 'fanout1',
      title: 'throughput, fan-out 1 (10 tenants, one webhook each)',
      module: 'throughput.mjs',
      kinds: ['sqlite', 'postgres'],
      config: { fanout: 1, webhooks: 10, deliveries: q(20_000, 400), windows: q(5, 2), runs: 1, delivery: ENGINE_DEFAULTS },
    },
    {
      id: 'fanout10',
      title: 'throughput, fan-out 10 (10 webhooks per event)',
      module: 'throughput.mjs',
      kinds: ['sqlite', 'postgres'],
      config: { fanout: 10, deliveries: q(20_000, 600), windows: q(5, 2), runs: 1, delivery: ENGINE_DEFAULTS },
    },
    {
      id: 'pgbouncer',
      title: 'throughput, fan-out 1, through PgBouncer (transaction mode) beside direct',
      module: 'pgbouncer.mjs',
      kinds: ['postgres'],
      requires: 'pgbouncer',
      config: { fanout: 1, webhooks: 10, deliveries: q(8_000, 400), windows: q(4, 2), runs: 1, legs: q(2, 1), delivery: ENGINE_DEFAULTS },
    },
    {
      id: 'emit',
      title: 'emit() latency, 1 and 10 subscribers, alone and in a host transaction',
      module: 'emit-latency.mjs',
      kinds: ['sqlite', 'postgres'],
      config: { emits: q(400, 100), warmup: q(100, 10), runs },
    },
    {
      id: 'pickup',
      title: 'pickup latency: emit -> first byte at the receiver, same process',
      module: 'pickup-latency.mjs',
      kinds: ['sqlite', 'postgres'],
      config: { mode: 'in-process', emits: q(200, 20), intervalMs: 15, runs },
    },
    {
      id: 'pickup-cross',
      title: 'pickup latency: emit in one process, delivered by another',
      module: 'pickup-latency.mjs',
      kinds: ['postgres'],
      config: { mode: 'cross-process', emits: q(200, 20), intervalMs: 15, runs },
    },
    {
      id: 'backlog',
      title: 'backlog: 1,000,000 deliveries pending in the future',
      module: 'backlog.mjs',
      kinds: ['sqlite', 'postgres'],
      config: {
        backlog: q(1_000_000, 10_000),
        ticks: q(300, 30),
        claims: q(200, 10),
        batch: 64,
        idleWindowMs: q(3_000, 500),
        settleMs: q(1_000, 300),
        runs,
      },
    },
    {
      id: 'isolation',
      title: 'isolation: a healthy endpoint beside one that always times out',
      module: 'isolation.mjs',
      kinds: ['sqlite', 'postgres'],
      config: { events: q(2_500, 200), timeoutMs: q(1_000, 300), runs },
    },
    {
      id: 'ratelimit',
      title: 'rate limit: one webhook at 20/s with a backlog, beside neighbours of another and of the same environment',
      module: 'ratelimit.mjs',
      kinds: ['sqlite', 'postgres'],
      // Neighbours of 10,000 each: their window (~10-20 s) lies inside the throttled backlog's
      // 100 s; at 2,000 it was 2-4 s, and one run's ratio moved by a fifth with the machine's load.
      config: { perSecond: 20, backlog: q(2_000, 100), neighbourEvents: q(10_000, 100), processes: 3, runs: 1 },
    },
    {
      id: 'baseline',
      title: 'baseline: pg-boss + jose + fetch, fan-out 1',
      module: 'baseline-pgboss.mjs',
      kinds: ['postgres'],
      config: { jobs: q(20_000, 400), windows: q(5, 2), webhooks: 10, loops: 4, batchSize: 16, runs: 1 },
    },
  ];
}
