// Throughput: deliveries/s sustained through the whole pipeline (claim, sign, POST, record) over a
// backlog of `deliveries` due deliveries, fan-out 1 (each event to one webhook, spread over
// `webhooks` webhooks in as many environments: many tenants) or fan-out N (each event to N
// webhooks of one environment). Also counts the RSA signatures made (distinct tokens seen by the
// receiver): fan-out must share one token across the deliveries of an event.
//
// One sustained run of `deliveries` (20,000 in the full profile) per store, cut into `windows`
// consecutive windows of equal deliveries by the times the receiver answered them (CLOCK_MONOTONIC,
// shared with this process): deliveriesPerSec, engineCpuPct and engineCpuMsPerDelivery are one
// value per window, so their median and min/max are over the windows of the run. The first window
// starts at the wake-up (it carries the start-up); wholeRunPerSec is the whole run, from the
// wake-up until the last delivery is recorded.
import { addWebhooks, EVENT_DATA, EVENT_TYPE, makeEngine } from '../lib/engine.mjs';
import { preload } from '../lib/preload.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { cpuSampler, cutWindows, monoMs } from '../lib/stats.mjs';
import { countByStatus, withFreshStore } from '../lib/stores.mjs';

export default async function throughput(config) {
  const { fanout, deliveries, windows, runs, receiver, delivery, webhooks = 10, label = 'tp' } = config;
  const control = receiverControl(receiver.urls);
  const out = {
    deliveriesPerSec: [],
    engineCpuPct: [],
    engineCpuMsPerDelivery: [],
    wholeRunPerSec: [],
    signaturesPerDelivery: [],
    deliveries: [],
    seconds: [],
  };
  const errors = [];
  const notes = { windows: [] };
  for (let run = 0; run < runs; run++) {
    await withFreshStore(config, `${label}${fanout}_${run}`, async ({ store }) => {
      const hooks = await makeEngine({ store, delivery, errors });
      try {
        await hooks.start();
        const groups = [];
        if (fanout === 1) {
          for (let i = 0; i < webhooks; i++) {
            const [w] = await addWebhooks(hooks, { count: 1, urls: receiver.urls, environment: `env${i}`, offset: i });
            groups.push({ environment: `env${i}`, webhookIds: [w.id] });
          }
        } else {
          const ws = await addWebhooks(hooks, { count: fanout, urls: receiver.urls, environment: 'default' });
          groups.push({ environment: 'default', webhookIds: ws.map((w) => w.id) });
        }
        // Warm-up through the real path: connections open, key imported, statements prepared.
        for (const g of groups) await hooks.emit({ type: EVENT_TYPE, source: 'admin', data: EVENT_DATA, environment: g.environment });
        await hooks.drain();
        const warm = (await countByStatus(store)).delivered ?? 0;

        const events = Math.ceil(deliveries / fanout);
        const loaded = await preload(store, { groups, events, firstDueAt: Date.now() - events });
        await control.reset();
        const sampler = cpuSampler();
        const cpu0 = process.cpuUsage();
        const m0 = monoMs();
        const t0 = performance.now();
        hooks.wake();
        await hooks.drain();
        const seconds = (performance.now() - t0) / 1000;
        const cpu = process.cpuUsage(cpu0);
        const samples = sampler.stop();
        const delivered = ((await countByStatus(store)).delivered ?? 0) - warm;
        if (delivered !== loaded.deliveries)
          throw new Error(`run ${run}: ${delivered} of ${loaded.deliveries} delivered (${errors.slice(0, 3).join('; ')})`);
        const seen = await control.stats();
        const arrivals = (await control.arrivals()).sort((a, b) => a - b);
        if (arrivals.length !== delivered)
          throw new Error(`run ${run}: the receiver answered ${arrivals.length} deliveries, the store recorded ${delivered}`);
        for (const w of cutWindows(m0, arrivals, windows, samples)) {
          out.deliveriesPerSec.push(w.perSec);
          // CPU (all threads of the engine process, signing included) moves less with the
          // machine's other load than a rate does.
          out.engineCpuPct.push((w.cpuMs / 1000 / w.seconds) * 100);
          out.engineCpuMsPerDelivery.push(w.cpuMs / w.deliveries);
          notes.windows.push({ run, deliveries: w.deliveries, seconds: Math.round(w.seconds * 1000) / 1000 });
        }
        out.wholeRunPerSec.push(delivered / seconds);
        out.signaturesPerDelivery.push(seen.distinctTokens / Math.max(1, seen.ok));
        out.deliveries.push(delivered);
        out.seconds.push(seconds);
        notes.wholeRunCpuMsPerDelivery = (cpu.user + cpu.system) / 1000 / delivered;
      } finally {
        await hooks.close();
      }
    });
  }
  return { metrics: out, errors, notes };
}
