// Pickup latency: from the start of emit() to the first byte of the delivery at the receiver
// (the receiver stamps the request head with CLOCK_MONOTONIC, which all processes of the machine
// share). Emits are paced `intervalMs` apart: this is the latency of a quiet system, not of a
// backlog. mode 'in-process': the emitting engine delivers. mode 'cross-process': a second
// process runs the scheduler and hears of the emit through the store (PostgreSQL LISTEN/NOTIFY).

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EVENT_DATA, EVENT_TYPE, makeEngine } from '../lib/engine.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { latency, monoMs, sleep } from '../lib/stats.mjs';
import { withFreshStore } from '../lib/stores.mjs';

const WORKER = fileURLToPath(new URL('./pickup-worker.mjs', import.meta.url));
const WARMUP = 5;

export default async function pickupLatency(config) {
  const { mode, emits, intervalMs, runs, receiver } = config;
  const control = receiverControl(receiver.urls);
  const out = { p50: [], p99: [] };
  for (let run = 0; run < runs; run++) {
    await withFreshStore(config, `pickup_${run}`, async ({ store, location }) => {
      const hooks = await makeEngine({ store });
      let worker = null;
      try {
        await hooks.webhooks.create({ name: 'pickup', endpoint: `${receiver.urls[0]}/stamp/0`, eventTypes: [EVENT_TYPE] });
        if (mode === 'in-process') await hooks.start();
        else {
          await hooks.emit({ type: EVENT_TYPE, source: 'admin', data: EVENT_DATA }); // migrated, connections warm
          worker = startWorker(location);
          await worker.ready;
        }
        await control.stamps(); // forget earlier arrivals
        const sent = new Map();
        for (let i = 0; i < emits + WARMUP; i++) {
          const t0 = monoMs();
          const { deliveryIds } = await hooks.emit({ type: EVENT_TYPE, source: 'admin', data: EVENT_DATA });
          if (i >= WARMUP) sent.set(deliveryIds[0], t0);
          await sleep(intervalMs);
        }
        const arrived = {};
        for (let waited = 0; waited < 10_000 && Object.keys(arrived).length < sent.size + WARMUP; waited += 50) {
          Object.assign(arrived, await control.stamps());
          await sleep(50);
        }
        const samples = [...sent].filter(([id]) => id in arrived).map(([id, t0]) => arrived[id] - t0);
        if (samples.length < sent.size) throw new Error(`run ${run}: ${samples.length} of ${sent.size} deliveries arrived within 10 s`);
        const l = latency(samples);
        out.p50.push(l.p50);
        out.p99.push(l.p99);
      } finally {
        await worker?.stop();
        await hooks.close();
      }
    });
  }
  return { metrics: out };
}

/** The other process: an engine on the same database that only runs the scheduler. */
function startWorker(location) {
  const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((r) => child.once('exit', r));
  const kill = setTimeout(() => child.kill('SIGKILL'), 120_000); // bounded whatever happens
  const ready = new Promise((resolve, reject) => {
    child.once('message', (m) => (m?.ready ? resolve() : reject(new Error(m?.error ?? 'worker failed'))));
    void exited.then(() => reject(new Error('pickup worker exited before it was ready')));
  });
  child.send({ location });
  return {
    ready,
    async stop() {
      if (child.exitCode === null) child.send('stop');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
      clearTimeout(kill);
    },
  };
}
