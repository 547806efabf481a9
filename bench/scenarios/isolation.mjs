// Isolation: a healthy endpoint served beside one that never answers (every attempt runs into
// the `timeoutMs` deadline). Both webhooks take every event; we time the healthy one's
// deliveries and compare with a solo run of the same workload without the dead endpoint.
// The dead endpoint is on its own origin (another account holder's server), as it would be.
import { httpTransport } from 'identity-webhooks';
import { EVENT_DATA, EVENT_TYPE, makeEngine } from '../lib/engine.mjs';
import { preload } from '../lib/preload.mjs';
import { sleep } from '../lib/stats.mjs';
import { withFreshStore } from '../lib/stores.mjs';

export default async function isolation(config) {
  const { events, timeoutMs, runs, receiver } = config;
  const out = { healthyRatio: [], healthyPerSec: [], soloPerSec: [] };
  for (let run = 0; run < runs; run++) {
    const solo = await healthyRate(config, `iso_solo_${run}`, { withDeadEndpoint: false, events, timeoutMs, receiver });
    const mixed = await healthyRate(config, `iso_mixed_${run}`, { withDeadEndpoint: true, events, timeoutMs, receiver });
    out.soloPerSec.push(solo);
    out.healthyPerSec.push(mixed);
    out.healthyRatio.push(mixed / solo);
  }
  return { metrics: out };
}

async function healthyRate(config, label, { withDeadEndpoint, events, timeoutMs, receiver }) {
  return withFreshStore(config, label, async ({ store }) => {
    const healthyUrl = `${receiver.urls[0]}/ok/healthy`;
    // Counts the healthy endpoint's 200s as they come back, so the clock stops when the last one
    // lands rather than when the dead endpoint's last attempt times out.
    const inner = httpTransport();
    let served = 0;
    let target = Infinity;
    let finished;
    const done = new Promise((r) => (finished = r));
    const transport = {
      async send(req) {
        const res = await inner.send(req);
        if (req.url === healthyUrl && res.status === 200 && ++served >= target) finished(performance.now());
        return res;
      },
      close: () => inner.close(),
    };
    const hooks = await makeEngine({ store, transport, delivery: { timeoutMs } });
    try {
      await hooks.start();
      const ids = [(await hooks.webhooks.create({ name: 'healthy', endpoint: healthyUrl, eventTypes: [EVENT_TYPE] })).id];
      if (withDeadEndpoint)
        ids.push((await hooks.webhooks.create({ name: 'dead', endpoint: `${receiver.hangUrl}/hang`, eventTypes: [EVENT_TYPE] })).id);
      // Warm-up through the real path (connections open, key imported, statements prepared): until
      // the healthy endpoint has its delivery. The dead endpoint's stays in flight: it is dead.
      await hooks.emit({ type: EVENT_TYPE, source: 'admin', data: EVENT_DATA });
      for (let waited = 0; served < 1; waited += 5) {
        if (waited > 10_000) throw new Error(`${label}: the warm-up delivery did not arrive within 10 s`);
        await sleep(5);
      }
      target = served + events;
      await preload(store, { groups: [{ environment: 'default', webhookIds: ids }], events, firstDueAt: Date.now() - events });
      const t0 = performance.now();
      hooks.wake();
      const limit = new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`${label}: ${served - (target - events)} of ${events} healthy deliveries in 60 s`)),
          60_000,
        ).unref(),
      );
      const t1 = await Promise.race([done, limit]);
      return events / ((t1 - t0) / 1000);
    } finally {
      await hooks.close(); // waits for the dead endpoint's attempts in flight: at most timeoutMs
    }
  });
}
