// Baseline: the fan-out-1 workload built the way a Node user would without this library — a
// pg-boss@10 queue on the same PostgreSQL, one job per delivery, a worker that signs each job's
// payload with jose (RS256, the same claims) and POSTs it with fetch to the same receivers.
//
// How the worker is configured, and why: pg-boss 10's work() sleeps out its polling interval
// (at least 0.5 s) after every batch, even a full one, so it tops out at workers × batchSize × 2
// jobs/s. A user after throughput writes the loop pg-boss documents for manual control instead:
// fetch({ batchSize }), run the batch concurrently, complete(ids) (fail(ids) for the failures),
// fetch again at once while there is work. We run `loops` such loops × `batchSize` jobs: at most
// 64 requests in flight, as the engine's default concurrency. That is the stronger baseline.
//
// Measured as the throughput scenario is: one sustained run of `jobs` (20,000 in the full
// profile) cut into `windows` windows of equal deliveries by the times the receiver answered
// them; jobsPerSec and workerCpuPct are one value per window, wholeRunPerSec the whole run.

import { importJWK, SignJWT } from 'jose';
import PgBoss from 'pg-boss';
import { EVENT_DATA, EVENT_TYPE, ISSUER, signingKey } from '../lib/engine.mjs';
import { createDatabase } from '../lib/postgres.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { cpuSampler, cutWindows, monoMs, sleep } from '../lib/stats.mjs';

export default async function baseline(config) {
  const { jobs, windows, webhooks, loops, batchSize, runs, receiver, pgPrefix } = config;
  if (config.kind !== 'postgres') throw new Error('the pg-boss baseline runs on PostgreSQL only');
  const control = receiverControl(receiver.urls);
  const jwk = await signingKey();
  const key = await importJWK(jwk, 'RS256');
  const out = { jobsPerSec: [], workerCpuPct: [], wholeRunPerSec: [], jobs: [], seconds: [] };
  const notes = { windows: [] };

  {
    const url = await createDatabase(`${pgPrefix}_pgboss`); // dropped by run.mjs afterwards
    const boss = new PgBoss({ connectionString: url, max: 10 });
    boss.on('error', () => {}); // maintenance hiccups while the database is dropped at the end
    await boss.start();
    try {
      for (let run = 0; run < runs; run++) {
        const queue = `webhooks_${run}`;
        await boss.createQueue(queue);
        // One job per delivery, as an app would enqueue them from its event handler.
        const now = Date.now();
        const batch = [];
        for (let i = 0; i < jobs; i++) {
          batch.push({
            name: queue,
            data: {
              endpoint: `${receiver.urls[i % webhooks]}/ok/${i % webhooks}`,
              event: {
                id: `event_${now.toString(16)}${String(i).padStart(20, '0')}`,
                type: EVENT_TYPE,
                source: 'admin',
                data: EVENT_DATA,
                eventTimestamp: now,
              },
            },
          });
        }
        for (let i = 0; i < batch.length; i += 1000) await boss.insert(batch.slice(i, i + 1000));
        await control.reset();

        const deliver = async (job) => {
          const { endpoint, event } = job.data;
          const t = Date.now();
          const token = await new SignJWT({
            type: event.type,
            event_id: event.id,
            event_timestamp: new Date(event.eventTimestamp).toISOString(),
            timestamp: new Date(t).toISOString(),
            source: event.source,
            data: event.data,
            iss: ISSUER,
            iat: Math.floor(t / 1000),
          })
            .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'JWT' })
            .sign(key);
          const res = await fetch(endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/jwt', 'webhook-id': job.id },
            body: token,
            signal: AbortSignal.timeout(15_000),
          });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        };

        let done = 0;
        const deadline = Date.now() + 120_000;
        const sampler = cpuSampler();
        const m0 = monoMs();
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: loops }, async () => {
            while (done < jobs && Date.now() < deadline) {
              const got = await boss.fetch(queue, { batchSize });
              if (!got || got.length === 0) {
                await sleep(50); // others hold the last jobs; look again shortly
                continue;
              }
              const settled = await Promise.allSettled(got.map(deliver));
              const ok = got.filter((_, i) => settled[i].status === 'fulfilled').map((j) => j.id);
              const failed = got.filter((_, i) => settled[i].status === 'rejected').map((j) => j.id);
              if (ok.length) await boss.complete(queue, ok);
              if (failed.length) await boss.fail(queue, failed);
              done += ok.length;
            }
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        const samples = sampler.stop();
        if (done < jobs) throw new Error(`run ${run}: ${done} of ${jobs} jobs completed within 120 s`);
        const arrivals = (await control.arrivals()).sort((a, b) => a - b);
        if (arrivals.length !== done) throw new Error(`run ${run}: the receiver answered ${arrivals.length} jobs, ${done} completed`);
        for (const w of cutWindows(m0, arrivals, windows, samples)) {
          out.jobsPerSec.push(w.perSec);
          out.workerCpuPct.push((w.cpuMs / 1000 / w.seconds) * 100);
          notes.windows.push({ run, jobs: w.deliveries, seconds: Math.round(w.seconds * 1000) / 1000 });
        }
        out.wholeRunPerSec.push(done / seconds);
        out.jobs.push(done);
        out.seconds.push(seconds);
        await boss.deleteQueue(queue).catch(() => {});
      }
    } finally {
      await boss.stop({ graceful: false, wait: true, timeout: 5_000 }).catch(() => {});
    }
  }
  return { metrics: out, notes };
}
