// Peer: pg-boss 10 on the same PostgreSQL + jose + fetch, the approach of
// bench/scenarios/baseline-pgboss.mjs: one job per delivery, and the fetch / complete loop pg-boss
// offers for manual control (its work() sleeps its polling interval after every batch). Here
// `loops` × `batchSize` is the engine's per-endpoint bound (2 × 4 = 8 in flight), one endpoint.
// Each job is signed on its own. Durable: jobs are PostgreSQL rows.
//
// Config: { deliveries, loops, batchSize, receiver, pgPrefix }.
import PgBoss from 'pg-boss';
import { EVENT_DATA, EVENT_TYPE } from '../lib/payload.mjs';
import { createDatabase } from '../lib/postgres.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { sleep } from '../lib/stats.mjs';
import { checkOnce, figures, makeSigner, timedWindow } from './common.mjs';

export default async function pgboss(config) {
  const { deliveries, loops, batchSize, receiver, pgPrefix, deadlineMs = 120_000 } = config;
  const endpoint = `${receiver.urls[0]}/ok/0`;
  const url = await createDatabase(`${pgPrefix}_pgboss`); // dropped by peers.mjs afterwards
  const boss = new PgBoss({ connectionString: url, max: 10 });
  boss.on('error', () => {});
  await boss.start();
  const sign = await makeSigner();
  try {
    const deliver = async (job) => {
      const token = await sign(job.data.event, Date.now());
      const res = await fetch(job.data.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/jwt', 'webhook-id': `msg_${job.id}` },
        body: token,
        signal: AbortSignal.timeout(15_000),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    };
    const enqueue = async (queue, count) => {
      await boss.createQueue(queue);
      const now = Date.now();
      const base = `event_${now.toString(16)}_`;
      for (let i = 0; i < count; i += 1000) {
        const batch = [];
        for (let j = i; j < Math.min(count, i + 1000); j++)
          batch.push({
            name: queue,
            data: { endpoint, event: { id: `${base}${j}`, type: EVENT_TYPE, source: 'admin', data: EVENT_DATA, eventTimestamp: now } },
            retryLimit: 4,
            retryDelay: 5,
            retryBackoff: true,
          });
        await boss.insert(batch);
      }
    };
    const work = async (queue, count) => {
      let done = 0;
      const deadline = Date.now() + deadlineMs;
      await Promise.all(
        Array.from({ length: loops }, async () => {
          while (done < count && Date.now() < deadline) {
            const got = await boss.fetch(queue, { batchSize });
            if (!got || got.length === 0) {
              await sleep(20); // another loop holds the last jobs
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
      if (done < count) throw new Error(`${done} of ${count} jobs completed within ${deadlineMs / 1000} s`);
    };

    await enqueue('warm', 64);
    await work('warm', 64);

    const queue = 'webhooks';
    await enqueue(queue, deliveries);
    await receiverControl(receiver.urls).reset();
    const { seconds, cpu } = await timedWindow('pgboss', () => work(queue, deliveries));

    const db = boss.getDb();
    const { rows } = await db.executeSql(
      `select state, count(*)::int as n, count(distinct id)::int as d from (
         select id, state from pgboss.job where name = $1 union all select id, state from pgboss.archive where name = $1) j group by state`,
      [queue],
    );
    const by = Object.fromEntries(rows.map((r) => [r.state, r]));
    const other = rows.filter((r) => r.state !== 'completed');
    if (other.length) throw new Error(`CORRECTNESS CHECK FAILED: jobs not completed ${JSON.stringify(other)}`);
    const recorded = by.completed?.n ?? 0;
    const check = await checkOnce(receiver.urls, { expected: deliveries, recorded, distinct: by.completed?.d ?? 0 });
    return { ...figures({ deliveries, seconds, cpu, check }), durability: 'PostgreSQL, durable', inFlight: loops * batchSize };
  } finally {
    await boss.stop({ graceful: false, wait: true, timeout: 5_000 }).catch(() => {});
  }
}
