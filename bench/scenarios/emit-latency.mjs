// emit() latency: what the host's request pays to record an event, with 1 and with 10 subscribed
// webhooks, alone (emit opens and commits its own transaction) and inside a host transaction
// (the time of the emit() call only: the host's BEGIN/COMMIT are its own). The scheduler is not
// started, so nothing but emit() runs: this is the write path on its own.
import { addWebhooks, EVENT_DATA, EVENT_TYPE, makeEngine } from '../lib/engine.mjs';
import { latency } from '../lib/stats.mjs';
import { withFreshStore } from '../lib/stores.mjs';

export default async function emitLatency(config) {
  const { emits, warmup, runs, receiver } = config;
  const out = {};
  const push = (name, x) => (out[name] ??= []).push(x);
  for (let run = 0; run < runs; run++) {
    await withFreshStore(config, `emit_${run}`, async ({ store }) => {
      const hooks = await makeEngine({ store });
      try {
        for (const subscribers of [1, 10]) {
          const environment = `env${subscribers}`;
          await addWebhooks(hooks, { count: subscribers, urls: receiver.urls, environment });
          const event = { type: EVENT_TYPE, source: 'admin', data: EVENT_DATA, environment };
          const alone = () => hooks.emit(event);
          const inTransaction = () =>
            store.kysely.transaction().execute(async (trx) => {
              const t0 = performance.now();
              await hooks.emit(event, { transaction: trx });
              return performance.now() - t0;
            });
          for (const [mode, once] of [
            ['', alone],
            ['_tx', inTransaction],
          ]) {
            for (let i = 0; i < warmup; i++) await once();
            const samples = [];
            for (let i = 0; i < emits; i++) {
              const t0 = performance.now();
              const inner = await once();
              samples.push(mode ? inner : performance.now() - t0);
            }
            const l = latency(samples);
            push(`p50_${subscribers}${mode}`, l.p50);
            push(`p99_${subscribers}${mode}`, l.p99);
          }
        }
      } finally {
        await hooks.close();
      }
    });
  }
  return { metrics: out };
}
