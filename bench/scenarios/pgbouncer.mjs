// Throughput through PgBouncer in transaction mode beside the same run on a direct connection
// (decision 027): fan-out 1 over 10 tenants, as `fanout1`: `legs` pairs of sustained runs (direct,
// then pooled), in the same process against the same server. Through the pooler every statement
// (claims, emits, outcomes, migrations) goes to 127.0.0.1:<pgbouncer>; only the wake-up listener
// uses the direct URL. `ratio` is the median of the pooled windows over that of the direct ones. PgBouncer's own CPU
// (it competes for the same cores) is read from /proc. No pgbouncer binary: skipped, and said so.
import { readFileSync } from 'node:fs';
import { PGBOUNCER, startPgBouncer } from '../lib/pgbouncer.mjs';
import { ADMIN_URL } from '../lib/postgres.mjs';
import { median } from '../lib/stats.mjs';
import throughput from './throughput.mjs';

export default async function pgbouncer(config) {
  if (!PGBOUNCER) return { metrics: {}, errors: [], notes: { skipped: 'pgbouncer is not installed (apt-get install -y pgbouncer)' } };
  const bouncer = await startPgBouncer(ADMIN_URL);
  const { legs = 1 } = config;
  const out = { directPerSec: [], pgbouncerPerSec: [], directCpuMsPerDelivery: [], pgbouncerCpuMsPerDelivery: [] };
  const errors = [];
  const notes = { pgbouncer: bouncer.version, legs: [] };
  let bouncerCpuMs = 0;
  let pooledDeliveries = 0;
  try {
    // Each run on a fresh database; a drift of the machine's load shows as spread within each figure.
    for (let leg = 0; leg < legs; leg++) {
      const direct = await throughput({ ...config, label: `direct${leg}_` });
      const cpu0 = cpuMs(bouncer.pid);
      const pooled = await throughput({ ...config, label: `pooled${leg}_`, pooled: bouncer.pooled });
      bouncerCpuMs += cpuMs(bouncer.pid) - cpu0;
      pooledDeliveries += pooled.metrics.deliveries.reduce((a, b) => a + b, 0);
      out.directPerSec.push(...direct.metrics.deliveriesPerSec);
      out.pgbouncerPerSec.push(...pooled.metrics.deliveriesPerSec);
      out.directCpuMsPerDelivery.push(...direct.metrics.engineCpuMsPerDelivery);
      out.pgbouncerCpuMsPerDelivery.push(...pooled.metrics.engineCpuMsPerDelivery);
      errors.push(...direct.errors, ...pooled.errors);
      notes.legs.push({ direct: direct.notes, pooled: pooled.notes });
    }
  } finally {
    await bouncer.close();
  }
  return {
    metrics: {
      ...out,
      ratio: [median(out.pgbouncerPerSec) / median(out.directPerSec)],
      bouncerOwnCpuMsPerDelivery: [bouncerCpuMs / Math.max(1, pooledDeliveries)],
    },
    errors,
    notes,
  };
}

/** User + system CPU of a process, in ms (Linux /proc; 100 ticks a second). */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}
