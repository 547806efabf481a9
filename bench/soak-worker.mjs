// One host process of the soak (bench/soak.mjs): an engine on the soak's PostgreSQL, delivering
// until the parent says stop (or kills it). Every request carries `x-worker` so the ledger knows
// who sent it. Once a minute (SOAK_STATS_MS) it reports its RSS and the event loop's lateness
// over that minute (monitorEventLoopDelay, 10 ms resolution: the histogram's values include the
// 10 ms tick, which is taken off).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createWebhooks, httpTransport } from 'identity-webhooks';
import { postgresStore } from 'identity-webhooks/postgres';

const { SOAK_URL, SOAK_DIRECT_URL, WORKER_ID, SOAK_KEY, SOAK_DELIVERY, SOAK_STATS_MS, SOAK_CONTROL } = process.env;
process.on('disconnect', () => process.exit(0));

const RESOLUTION_MS = 10;
const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
loop.enable();
const lateMs = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
const report = () => {
  const { rss, heapUsed } = process.memoryUsage();
  const figures = { rssMB: rss / 2 ** 20, heapMB: heapUsed / 2 ** 20, loopP99Ms: lateMs(loop.percentile(99)), loopMaxMs: lateMs(loop.max) };
  loop.reset();
  return figures;
};

// The control: the same histogram in a process that does nothing else, so the workers' lateness
// can be read against what the machine's other load alone costs a Node process.
if (SOAK_CONTROL === '1') {
  setInterval(() => process.send({ type: 'stats', ...report(), errors: 0 }), Number(SOAK_STATS_MS ?? 60_000));
  process.send({ type: 'ready' });
  await new Promise(() => {});
}

let errors = 0;
const firstErrors = [];
const note = (message, error) => {
  errors++;
  if (firstErrors.length < 5) firstErrors.push(`${message}: ${error?.message ?? error?.error?.message ?? JSON.stringify(error ?? '')}`);
};
const delivery = JSON.parse(SOAK_DELIVERY ?? '{}');
const inner = httpTransport({ connectionsPerOrigin: delivery.concurrency ?? 16 });
const hooks = createWebhooks({
  store: postgresStore({
    connectionString: SOAK_URL,
    ...(SOAK_DIRECT_URL ? { directConnectionString: SOAK_DIRECT_URL } : {}),
    maxConnections: 6,
    onError: note,
  }),
  keys: [JSON.parse(SOAK_KEY)],
  issuer: 'http://127.0.0.1/',
  allowPrivateNetworks: true,
  workerId: WORKER_ID,
  delivery,
  transport: {
    send: (req) => inner.send({ ...req, headers: { ...req.headers, 'x-worker': WORKER_ID } }),
    close: () => inner.close(),
  },
  logger: { warn: () => {}, error: (message, meta) => note(message, meta?.error) },
});

await hooks.start();
process.send({ type: 'ready' });

const stats = setInterval(() => process.send({ type: 'stats', ...report(), errors }), Number(SOAK_STATS_MS ?? 60_000));

process.on('message', async (message) => {
  if (message?.type !== 'stop') return;
  clearInterval(stats);
  await hooks.close();
  process.send({ type: 'stopped', errors, firstErrors }, () => process.disconnect());
});
