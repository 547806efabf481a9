// One host process of outage.mjs: an engine (from the checkout OUTAGE_ENGINE, its dist/) on the
// throwaway cluster, delivering until the parent says stop (or kills it). Every request carries
// `x-worker`. Store calls after the parent's `mark` (the stop) are noted with their wall time, so
// the parent can tell, for a delivery sent twice, whose claim took it and when the first
// sender's record landed.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { OUTAGE_ENGINE, OUTAGE_URL, WORKER_ID, OUTAGE_KEY, OUTAGE_DELIVERY } = process.env;
process.on('disconnect', () => process.exit(0));
const load = (p) => import(pathToFileURL(join(OUTAGE_ENGINE, p)).href);
const { createWebhooks, httpTransport } = await load('dist/src/index.js');
const { postgresStore } = await load('dist/adapters/postgres/index.js');

let errors = 0;
const messages = new Map(); // message -> count
const note = (message, error) => {
  errors++;
  const m = `${message}: ${String(error?.message ?? error?.error?.message ?? error ?? '').slice(0, 120)}`;
  messages.set(m, (messages.get(m) ?? 0) + 1);
};
const delivery = JSON.parse(OUTAGE_DELIVERY ?? '{}');
const store = postgresStore({ connectionString: OUTAGE_URL, maxConnections: 6, onError: note });

// Store calls seen after the mark: claims (what they took) and records (what they wrote, and when).
let marked = false;
const claims = []; // { at, ids }
const records = []; // { at, ok, ids, error? }
const claimDue = store.claimDue.bind(store);
const tries = []; // every claim try after the mark: [wall time, taken or -1 for a failure]
store.claimDue = async (args) => {
  let out;
  try {
    out = await claimDue(args);
  } catch (error) {
    if (marked) tries.push([Date.now(), -1]);
    throw error;
  }
  if (marked) tries.push([Date.now(), out.length]);
  if (marked && out.length > 0) claims.push({ at: Date.now(), ids: out.map((c) => c.delivery.id) });
  return out;
};
const recordAttempts = store.recordAttempts.bind(store);
store.recordAttempts = async (batch) => {
  try {
    const out = await recordAttempts(batch);
    if (marked) records.push({ at: Date.now(), ok: true, ids: batch.map((b) => b.attempt.deliveryId) });
    return out;
  } catch (error) {
    if (marked) records.push({ at: Date.now(), ok: false, n: batch.length, error: String(error?.message ?? error).slice(0, 100) });
    throw error;
  }
};

const inner = httpTransport({ connectionsPerOrigin: 64 });
const hooks = createWebhooks({
  store,
  keys: [JSON.parse(OUTAGE_KEY)],
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

process.on('message', async (message) => {
  if (message?.type === 'mark') marked = true;
  if (message?.type === 'report') process.send({ type: 'report', errors, messages: [...messages], claims, records, tries });
  if (message?.type === 'stop') {
    await Promise.race([hooks.close(), new Promise((r) => setTimeout(r, 5_000))]);
    process.send({ type: 'stopped' }, () => process.disconnect());
  }
});
