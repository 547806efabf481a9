// One host process of the delivery-operations tests (operations.test.ts): an engine on the shared
// PostgreSQL that delivers, and runs a recover or a series of resends when the parent asks, at a
// wall-clock moment the parent chooses (so two processes start at once). Plain .mjs over the
// compiled dist, like helpers/host-worker.mjs; every request carries `x-worker`.
import { pathToFileURL } from 'node:url';

const { IW_DIST, DATABASE_URL, WORKER_ID, IW_KEY, IW_OPTIONS } = process.env;
const load = (path) => import(pathToFileURL(`${IW_DIST}/${path}`).href);
const { createWebhooks, httpTransport } = await load('src/index.js');
const { postgresStore } = await load('adapters/postgres/index.js');

const options = JSON.parse(IW_OPTIONS ?? '{}');
// Never outlive a broken test run.
setTimeout(() => process.exit(3), options.maxLifetimeMs ?? 60_000).unref();
process.on('disconnect', () => process.exit(0));

const inner = httpTransport({ connectionsPerOrigin: 16 });
const hooks = createWebhooks({
  store: postgresStore({ connectionString: DATABASE_URL, maxConnections: 6, onError: () => {} }),
  keys: [JSON.parse(IW_KEY)],
  issuer: 'http://127.0.0.1/',
  allowPrivateNetworks: true,
  workerId: WORKER_ID,
  delivery: options.delivery,
  backoff: options.backoff,
  transport: {
    send: (req) => inner.send({ ...req, headers: { ...req.headers, 'x-worker': WORKER_ID } }),
    close: () => inner.close(),
  },
  logger: { warn: () => {}, error: (message, meta) => console.error(`[${WORKER_ID}] ${message}`, meta?.error?.message ?? '') },
});

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

const run = {
  async recover({ webhookId, since, at }) {
    await sleep(at - Date.now());
    const startedAt = Date.now();
    const { recovered } = await hooks.webhooks.recover(webhookId, { since: new Date(since) });
    return { recovered, startedAt, endedAt: Date.now() };
  },
  /** Resends `ids` in order, one every `gapMs` from `at`; answers what each resend returned. */
  async resend({ ids, at, gapMs }) {
    const out = [];
    for (const [i, id] of ids.entries()) {
      await sleep(at + i * gapMs - Date.now());
      const asked = Date.now();
      const d = await hooks.deliveries.resend(id);
      // Left to an attempt in flight: still due at its lease's expiry, not now (records carry no lease).
      const inFlight = d.status === 'pending' && d.nextAttemptAt !== null && d.nextAttemptAt > asked;
      out.push({ id, status: d.status, attemptCount: d.attemptCount, inFlight, at: Date.now() });
    }
    return out;
  },
};

await hooks.start();
process.send({ type: 'ready' });
process.on('message', async (message) => {
  if (message?.type === 'stop') {
    await hooks.close();
    process.send({ type: 'stopped' }, () => process.disconnect());
    return;
  }
  const fn = run[message?.type];
  if (!fn) return;
  try {
    process.send({ type: 'result', seq: message.seq, value: await fn(message) });
  } catch (error) {
    process.send({
      type: 'result',
      seq: message.seq,
      error: `${error?.code ?? ''} ${error?.message ?? error} (cause: ${error?.cause?.code ?? ''} ${error?.cause?.message ?? ''})`,
    });
  }
});
