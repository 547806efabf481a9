// Peer: BullMQ on the local Redis + jose + undici, the way a Node user would build webhooks on a
// job queue: one job per delivery (enqueued with the event it carries), a Worker with the
// engine's in-flight bound as its concurrency, each job signed on its own (a queue has no notion
// of "the deliveries of one event") and POSTed through an undici keep-alive Agent; a failure
// throws, so BullMQ retries it (5 attempts, exponential back-off from 5 s).
//
// Durability: whatever the Redis server is configured for, read at run time (CONFIG GET) and
// reported beside the figure. On this machine: no AOF, no RDB snapshots, so a crash of Redis
// loses every queued job.
//
// Config: { deliveries, concurrency, receiver, redis: { host, port } }.
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { EVENT_DATA, EVENT_TYPE } from '../lib/payload.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { checkOnce, figures, makeSender, makeSigner, timedWindow } from './common.mjs';

/** What Redis's own configuration says about losing jobs. */
export async function redisDurability(redis) {
  const client = new IORedis({ ...redis, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const [, aof] = await client.config('GET', 'appendonly');
    const [, save] = await client.config('GET', 'save');
    const persistent = aof === 'yes' || (save ?? '').trim() !== '';
    return {
      persistent,
      text: persistent
        ? `Redis with persistence (appendonly ${aof}, save "${save}")`
        : `Redis without persistence (appendonly ${aof}, no RDB on this machine): a crash loses queued jobs`,
    };
  } finally {
    client.disconnect();
  }
}

export default async function bullmq(config) {
  const { deliveries, concurrency, receiver, redis, deadlineMs = 120_000 } = config;
  const connection = { ...redis, maxRetriesPerRequest: null };
  const endpoint = `${receiver.urls[0]}/ok/0`;
  const name = `iw_peers_${process.pid}_${Date.now().toString(36)}`;
  const queue = new Queue(name, { connection });
  const sender = makeSender({ connections: concurrency });
  const sign = await makeSigner();
  let worker;
  try {
    const durability = await redisDurability(redis);
    const enqueue = async (count) => {
      const now = Date.now();
      const base = `event_${now.toString(16)}_`;
      for (let i = 0; i < count; i += 1000) {
        const jobs = [];
        for (let j = i; j < Math.min(count, i + 1000); j++) {
          jobs.push({
            name: 'deliver',
            data: { endpoint, event: { id: `${base}${j}`, type: EVENT_TYPE, source: 'admin', data: EVENT_DATA, eventTimestamp: now } },
            opts: { attempts: 5, backoff: { type: 'exponential', delay: 5_000 } },
          });
        }
        await queue.addBulk(jobs);
      }
    };

    let target = 0;
    let completed = 0;
    let onDone = () => {};
    worker = new Worker(
      name,
      async (job) => {
        const token = await sign(job.data.event, Date.now());
        const outcome = await sender.send(job.data.endpoint, `msg_${job.id}`, token);
        if (!outcome.success) throw new Error(outcome.error ?? `HTTP ${outcome.statusCode}`);
      },
      { connection, concurrency, autorun: false },
    );
    worker.on('completed', () => {
      completed++;
      if (completed >= target) onDone();
    });
    worker.on('error', () => {});
    const drainAll = (count) =>
      new Promise((resolve, reject) => {
        target += count;
        onDone = resolve;
        setTimeout(() => reject(new Error(`${completed} of ${target} jobs completed within ${deadlineMs / 1000} s`)), deadlineMs).unref();
      });

    // Warm-up: connections open, scripts loaded, JIT warm.
    await enqueue(64);
    const warmed = drainAll(64);
    worker.run().catch(() => {});
    await warmed;
    await worker.pause();

    await enqueue(deliveries);
    await receiverControl(receiver.urls).reset();
    const { seconds, cpu } = await timedWindow('bullmq', async () => {
      const done = drainAll(deliveries);
      worker.resume();
      await done;
    });

    const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
    const recorded = counts.completed - 64;
    if (counts.failed || counts.waiting || counts.active || counts.delayed)
      throw new Error(`CORRECTNESS CHECK FAILED: jobs left over ${JSON.stringify(counts)}`);
    const check = await checkOnce(receiver.urls, { expected: deliveries, recorded });
    return { ...figures({ deliveries, seconds, cpu, check }), durability: durability.text, persistent: durability.persistent };
  } finally {
    await worker?.close(true).catch(() => {});
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close().catch(() => {});
    await sender.close();
  }
}
