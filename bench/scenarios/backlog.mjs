// Backlog: a million deliveries pending in the future (retries waiting out their back-off) must
// cost nothing while they wait. Measured through the store API, as the scheduler calls it, each
// phase after a warm-up (WARM_UP_MS of idle ticks, WARM_UP_CLAIMS claims, untimed):
//   - idle tick: one pass that finds nothing due (claimDue returning nothing, then nextDueAt to
//     arm the timer, unless the empty claim already said when the next delivery is due, as
//     PostgreSQL's does: then the scheduler asks nothing more), p50/p99 over `ticks` ticks per run;
//     nextDueAt p99 is timed on its own either way;
//   - the floor under those: `select 1` through the same store's connection, one after each
//     idle tick, p50/p99 (roundTripP50/P99). No statement can answer faster, so an idle tick's
//     p99 is read against it: on this shared 2-core machine one round trip to PostgreSQL now
//     and then takes a millisecond or more (the scheduler of the OS, the server's own
//     processes), whatever the statement;
//   - due-batch claim: claimDue of `batch` due deliveries from among the million, p50/p99 over
//     `claims` claims per run. Each batch is then recorded as delivered (untimed), as the engine
//     records what it claimed: the lease stays on the row until then (both stores leave the due
//     time in place), so without it every claim would read past all the earlier ones' rows, a
//     pile the engine never has (it holds at most what it has in flight);
//   - idle engine processes on that store beside as many on an empty store, all at once over the
//     same `idleWindowMs` (default options: each polls once a second): RSS and CPU.
// The million rows are written in one transaction with the secondary indexes dropped and then
// rebuilt from the catalog's own definitions (lib/preload.mjs), as a bulk load would; every
// index the migrations define is in place before anything is measured.
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { runChild } from '../lib/child.mjs';
import { addWebhooks, makeEngine } from '../lib/engine.mjs';
import { delivered } from '../lib/outcome.mjs';
import { analyze, preload } from '../lib/preload.mjs';
import { latency } from '../lib/stats.mjs';
import { countByStatus, kindOf, withFreshStore } from '../lib/stores.mjs';

const IDLE = fileURLToPath(new URL('./backlog-idle.mjs', import.meta.url));
const HOUR = 3_600_000;
const WEBHOOKS = 10;
const SELECT_ONE = sql`select 1`;
const LEASE_MS = 60_000;
// Each timed phase starts after a warm-up, as an engine that has been running is warm: in a new
// process the first ~0.7 s of round trips to PostgreSQL have a p99 of 1-3 ms where a warm one's
// is 0.2-0.3 ms, with no table loaded at all (V8 compiling the driver's and the store's paths on
// threads of their own, on a machine of 2 cores; bench/README.md, "PostgreSQL: HOT claims").
const WARM_UP_MS = 2_000;
const WARM_UP_CLAIMS = 100;

export default async function backlog(config) {
  const { backlog: size, ticks, claims, batch, runs, receiver } = config;
  const out = {
    idleTickP50: [],
    idleTickP99: [],
    nextDueAtP99: [],
    roundTripP50: [],
    roundTripP99: [],
    claimP50: [],
    claimP99: [],
    rssEmptyMB: [],
    rssBacklogMB: [],
    rssGrowthMB: [],
    idleCpuPct: [],
    insertSeconds: [],
  };
  const phases = {};
  const phase = async (name, fn) => {
    const t = performance.now();
    try {
      return await fn();
    } finally {
      phases[name] = Math.round(performance.now() - t) / 1000;
    }
  };

  // The empty store, for the RSS and CPU comparison: the same webhooks, no deliveries.
  await withFreshStore(config, 'backlog_empty', async ({ store: emptyStore, location: emptyLocation }) => {
    const emptyHooks = await makeEngine({ store: emptyStore });
    await addWebhooks(emptyHooks, { count: WEBHOOKS, urls: receiver.urls });
    await emptyHooks.close();

    await withFreshStore(config, 'backlog', async ({ store, location }) => {
      const hooks = await makeEngine({ store }); // never started: the store is driven directly
      try {
        const webhooks = await addWebhooks(hooks, { count: WEBHOOKS, urls: receiver.urls });
        const groups = [{ environment: 'default', webhookIds: webhooks.map((w) => w.id) }];
        const now = Date.now();
        await phase('insert', async () => {
          const t0 = performance.now();
          // Future retries: due from one hour on, spread over the next ~28 hours.
          await preload(store, {
            groups,
            events: size / WEBHOOKS,
            firstDueAt: now + HOUR,
            spacingMs: 1_000,
            createdAt: now,
            deferIndexes: true,
          });
          if (kindOf(store) === 'postgres') await analyze(store);
          out.insertSeconds.push((performance.now() - t0) / 1000);
        });
        // The heap of iw_deliveries holding the million (PostgreSQL: its pages keep room for
        // HOT claims, migration 12's fill factor), in MB.
        if (kindOf(store) === 'postgres') {
          const { rows } = await sql`select pg_relation_size('iw_deliveries') as bytes`.execute(store.kysely);
          out.deliveriesHeapMB = [Number(rows[0].bytes) / 2 ** 20];
        }
        const pending = (await countByStatus(store)).pending;
        if (pending !== size) throw new Error(`backlog holds ${pending} pending deliveries, expected ${size}`);

        const claimArgs = (limit) => ({ now: Date.now(), limit, workerId: 'bench', leaseMs: LEASE_MS });
        await phase('ticks', async () => {
          // Warm-up, untimed (WARM_UP_MS).
          for (const end = performance.now() + WARM_UP_MS; performance.now() < end; ) {
            const got = await store.claimDue(claimArgs(batch));
            if (got.nextDueAt === undefined) await store.nextDueAt();
            await SELECT_ONE.execute(store.kysely);
          }
          for (let run = 0; run < runs; run++) {
            const tick = [];
            const next = [];
            const floor = [];
            for (let i = 0; i < ticks; i++) {
              const a = performance.now();
              const got = await store.claimDue(claimArgs(batch));
              if (got.nextDueAt === undefined) await store.nextDueAt();
              tick.push(performance.now() - a);
              if (got.length) throw new Error('an idle tick claimed something');
              if (got.nextDueAt !== undefined && got.nextDueAt !== (await store.nextDueAt()))
                throw new Error(`the empty claim said ${got.nextDueAt}, nextDueAt says otherwise`);
              const b = performance.now();
              await store.nextDueAt();
              next.push(performance.now() - b);
              const c = performance.now();
              await SELECT_ONE.execute(store.kysely);
              floor.push(performance.now() - c);
            }
            out.idleTickP50.push(latency(tick).p50);
            out.idleTickP99.push(latency(tick).p99);
            out.nextDueAtP99.push(latency(next).p99);
            out.roundTripP50.push(latency(floor).p50);
            out.roundTripP99.push(latency(floor).p99);
          }
        });

        // Now some work is due among the million: claims take it in batches.
        await phase('claims', async () => {
          const total = (claims * runs + WARM_UP_CLAIMS) * batch;
          await preload(store, { groups, events: total / WEBHOOKS, firstDueAt: now - total });
          for (let i = 0; i < WARM_UP_CLAIMS; i++)
            await store.recordAttempts((await store.claimDue(claimArgs(batch))).map((c) => delivered(c)));
          for (let run = 0; run < runs; run++) {
            const took = [];
            for (let i = 0; i < claims; i++) {
              const a = performance.now();
              const got = await store.claimDue(claimArgs(batch));
              took.push(performance.now() - a);
              if (got.length !== batch) throw new Error(`claim ${i} took ${got.length} of ${batch}`);
              await store.recordAttempts(got.map((c) => delivered(c)));
            }
            out.claimP50.push(latency(took).p50);
            out.claimP99.push(latency(took).p99);
          }
        });
      } finally {
        await hooks.close();
      }

      // `runs` idle processes on each store, all at once over the same window: the same machine
      // for both stores (an idle process uses a fraction of a percent of a core: they do not get
      // in each other's way, and it takes one window instead of 2 × runs).
      await phase('idle', async () => {
        const [empty, full] = await Promise.all(
          [emptyLocation, location].map((at) => Promise.all(Array.from({ length: runs }, () => idleProcess(at, config)))),
        );
        for (let run = 0; run < runs; run++) {
          out.rssEmptyMB.push(empty[run].rssMB);
          out.rssBacklogMB.push(full[run].rssMB);
          out.rssGrowthMB.push(full[run].rssMB - empty[run].rssMB);
          out.idleCpuPct.push(full[run].cpuPct);
        }
      });
    });
  });
  return { metrics: out, notes: { phaseSeconds: phases } };
}

/** An idle engine process (default options) on the store at `location`: its RSS and CPU over the window. */
function idleProcess(location, { idleWindowMs, settleMs }) {
  return runChild(IDLE, ['backlog-idle'], { location, windowMs: idleWindowMs, settleMs }, { timeoutMs: idleWindowMs + settleMs + 60_000 });
}
