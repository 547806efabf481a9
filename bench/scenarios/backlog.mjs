// Backlog: a million deliveries pending in the future (retries waiting out their back-off) must
// cost nothing while they wait. Measured through the store API, as the scheduler calls it:
//   - idle tick: one pass that finds nothing due (claimDue returning nothing, then nextDueAt to
//     arm the timer), p50/p99;
//   - due-batch claim: claimDue of `batch` due deliveries from among the million, p50/p99;
//   - an idle engine process on that store against one on an empty store: RSS and CPU over
//     `idleWindowMs` (default options: it polls once a second).
import { fileURLToPath } from 'node:url';
import { runChild } from '../lib/child.mjs';
import { addWebhooks, makeEngine } from '../lib/engine.mjs';
import { analyze, preload } from '../lib/preload.mjs';
import { latency } from '../lib/stats.mjs';
import { countByStatus, withFreshStore } from '../lib/stores.mjs';

const IDLE = fileURLToPath(new URL('./backlog-idle.mjs', import.meta.url));
const HOUR = 3_600_000;
const WEBHOOKS = 10;
const LEASE_MS = 10 * 60_000; // claimed rows stay out of the way for the rest of the scenario

export default async function backlog(config) {
  const { backlog: size, ticks, claims, batch, idleWindowMs, settleMs, runs, receiver } = config;
  const out = { idleTickP50: [], idleTickP99: [], nextDueAtP99: [], claimP50: [], claimP99: [], rssEmptyMB: [], rssBacklogMB: [], rssGrowthMB: [], idleCpuPct: [], insertSeconds: [] };

  // The empty store's idle process, for the RSS and CPU comparison.
  const empty = await withFreshStore(config, 'backlog_empty', async ({ store, location }) => {
    const hooks = await makeEngine({ store });
    await addWebhooks(hooks, { count: WEBHOOKS, urls: receiver.urls });
    await hooks.close();
    return idleProcesses(location, { windowMs: idleWindowMs, settleMs }, runs);
  });

  await withFreshStore(config, 'backlog', async ({ store, location }) => {
    const hooks = await makeEngine({ store }); // never started: the store is driven directly
    try {
      const webhooks = await addWebhooks(hooks, { count: WEBHOOKS, urls: receiver.urls });
      const groups = [{ environment: 'default', webhookIds: webhooks.map((w) => w.id) }];
      const now = Date.now();
      const t0 = performance.now();
      // Future retries: due from one hour on, spread over the next ~28 hours.
      await preload(store, { groups, events: size / WEBHOOKS, firstDueAt: now + HOUR, spacingMs: 1_000, createdAt: now });
      if (store.dialect === 'postgres') await analyze(store);
      out.insertSeconds.push((performance.now() - t0) / 1000);
      const pending = (await countByStatus(store)).pending;
      if (pending !== size) throw new Error(`backlog holds ${pending} pending deliveries, expected ${size}`);

      const claimArgs = (limit) => ({ now: Date.now(), limit, workerId: 'bench', leaseMs: LEASE_MS });
      for (let run = 0; run < runs; run++) {
        const tick = [];
        const next = [];
        for (let i = 0; i < ticks; i++) {
          const a = performance.now();
          const got = await store.claimDue(claimArgs(batch));
          const b = performance.now();
          await store.nextDueAt();
          const c = performance.now();
          if (got.length) throw new Error('an idle tick claimed something');
          tick.push(c - a);
          next.push(c - b);
        }
        out.idleTickP50.push(latency(tick).p50);
        out.idleTickP99.push(latency(tick).p99);
        out.nextDueAtP99.push(latency(next).p99);
      }

      // Now some work is due among the million: claims take it in batches.
      await preload(store, { groups, events: (claims * batch * runs) / WEBHOOKS, firstDueAt: now - claims * batch * runs });
      for (let run = 0; run < runs; run++) {
        const took = [];
        for (let i = 0; i < claims; i++) {
          const a = performance.now();
          const got = await store.claimDue(claimArgs(batch));
          took.push(performance.now() - a);
          if (got.length !== batch) throw new Error(`claim ${i} took ${got.length} of ${batch}`);
        }
        out.claimP50.push(latency(took).p50);
        out.claimP99.push(latency(took).p99);
      }
    } finally {
      await hooks.close();
    }
    const full = await idleProcesses(location, { windowMs: idleWindowMs, settleMs }, runs);
    for (let i = 0; i < runs; i++) {
      out.rssEmptyMB.push(empty[i].rssMB);
      out.rssBacklogMB.push(full[i].rssMB);
      out.rssGrowthMB.push(full[i].rssMB - empty[i].rssMB);
      out.idleCpuPct.push(full[i].cpuPct);
    }
  });
  return { metrics: out };
}

/** `runs` idle engine processes on the store at `location`, one after the other. */
async function idleProcesses(location, { windowMs, settleMs }, runs) {
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await runChild(IDLE, ['backlog-idle'], { location, windowMs, settleMs }, { timeoutMs: windowMs + 60_000 }));
  return results;
}
