import pg from 'pg';
import { expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks } from '../../src/index.js';
import { userData } from '../helpers/fixtures.js';
import { spawnWorker, until, useFleet, type Worker } from '../helpers/fleet.js';
import { createSchema } from '../helpers/postgres.js';
import { closedPort, startSmtpServer } from '../helpers/smtp.js';

/**
 * The notice outbox across real processes: two host processes on one PostgreSQL schema, each with
 * the package's SMTP notifier pointed at ONE real SMTP setup.server here, disable several webhooks of a
 * dead endpoint on the system clock (a disable threshold of seconds, not 72 hours). Every notice
 * must arrive as exactly one email, whichever process disabled its webhook and whichever claimed it.
 */
const setup = useFleet('notices');
const cleanups = setup.cleanups;

const WEBHOOKS = 12;

/**
 * Which process disables and which sends is up to the race for claims; a run where one process
 * happened to take all twelve proves exactly-once for one process only. So the exactly-once checks
 * hold on every try, and a try where one process sent everything is run again on a fresh schema
 * (at most three tries; seen once in ~100 runs on a slow machine).
 */
test('two PostgreSQL processes disable webhooks of a dead endpoint: each notice is one email, and both processes sent some', async () => {
  const t0 = performance.now();
  const smtp = await startSmtpServer();
  cleanups.push(() => smtp.close());
  const tries: Array<Record<string, number>> = [];
  let errors = 0;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const run = await disableAndNotify(smtp, attempt);
    tries.push(Object.fromEntries(run.senders));
    errors += run.errors;
    if (run.senders.size === 2) break;
  }
  expect(Object.keys(tries.at(-1)!).sort()).toEqual(['webhooks+w0@acme.example', 'webhooks+w1@acme.example']);
  console.info(
    `[processes] notices: ${WEBHOOKS} webhooks disabled by 2 processes, one email per notice; sent by ${JSON.stringify(tries)} ` +
      `(${tries.length} ${tries.length === 1 ? 'try' : 'tries'}); ${errors} errors logged; ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}, 60_000);

/** One try on a fresh schema: every notice is exactly one email to its own holder. Returns emails per sender, and errors logged. */
async function disableAndNotify(
  smtp: Awaited<ReturnType<typeof startSmtpServer>>,
  attempt: number,
): Promise<{ senders: Map<string, number>; errors: number }> {
  smtp.messages.length = 0;
  const schema = await createSchema(setup.server.url, `n${attempt}`);
  cleanups.push(() => schema.drop());
  // Failures every 150 ms, disabled once a failure lands 1.5 s after the first: within seconds.
  const options = {
    delivery: { pollIntervalMs: 100, timeoutMs: 1000, leaseMs: 3000, concurrency: 8, perWebhookConcurrency: 2 },
    disableAfterMs: 1500,
    backoff: { schedule: Array.from({ length: 40 }, () => 150), jitter: 0 },
    smtp: { url: smtp.url },
  };
  const workers: Worker[] = await Promise.all(['w0', 'w1'].map((id) => spawnWorker(setup.dist, schema.url, id, setup.key, options)));
  cleanups.push(() => Promise.all(workers.map((w) => w.kill())));

  // The host side that only creates and emits (never started: it delivers nothing).
  const host = createWebhooks({
    store: postgresStore({ connectionString: schema.url }),
    keys: [setup.key],
    issuer: 'http://127.0.0.1/',
    allowPrivateNetworks: true,
  });
  cleanups.push(() => host.close());
  const dead = `http://127.0.0.1:${await closedPort()}/hooks`;
  const environments = Array.from({ length: WEBHOOKS }, (_, i) => `env_${i}`);
  for (const environment of environments) {
    await host.webhooks.create({ name: `CRM ${environment}`, endpoint: dead, eventTypes: ['user.created'], environment });
    await host.emit({ type: 'user.created', source: 'admin', data: userData(), environment });
  }

  const admin = new pg.Pool({ connectionString: schema.url, max: 1 });
  cleanups.push(() => admin.end());
  const notices = async () =>
    (await admin.query<{ id: string; status: string; environment: string; attempt_count: number }>('select * from iw_notices')).rows;
  const state = async () =>
    JSON.stringify({
      webhooks: (await admin.query('select status, failing_since, disabled_at, last_error from iw_webhooks')).rows,
      deliveries: (await admin.query('select status, attempt_count, next_attempt_at, locked_by from iw_deliveries')).rows,
      notices: await notices(),
      stderr: workers.map((w) => w.stderr.join('')),
    });
  await until(
    'every webhook disabled and its notice sent',
    async () => {
      const rows = await notices();
      return rows.length === WEBHOOKS && rows.every((n) => n.status === 'sent');
    },
    20_000,
    50,
  ).catch(async (error) => {
    throw new Error(`${error.message}: ${await state()}`);
  });
  await smtp.waitFor(WEBHOOKS, 5_000);
  // Both processes go on polling for a while: a second send would show up now.
  await new Promise((r) => setTimeout(r, 1000));
  const errors = (await Promise.all(workers.map((w) => w.stop()))).reduce((n, r) => n + r.errors, 0);

  const rows = await notices();
  const perNotice = new Map<string, number>();
  for (const m of smtp.messages) {
    const id = m.header('x-webhooks-notice-id')!;
    perNotice.set(id, (perNotice.get(id) ?? 0) + 1);
  }
  expect([...perNotice.keys()].sort()).toEqual(rows.map((n) => n.id).sort());
  expect([...perNotice.values()].filter((n) => n !== 1)).toEqual([]);
  expect(smtp.messages).toHaveLength(WEBHOOKS);
  expect(rows.every((n) => Number(n.attempt_count) === 1)).toBe(true);
  // Each email went to the holder of its own environment.
  for (const m of smtp.messages) {
    const notice = rows.find((n) => n.id === m.header('x-webhooks-notice-id'))!;
    expect(m.to).toEqual([`owner+${notice.environment}@acme.example`]);
  }
  const disabledBy = (await admin.query("select count(*)::int as n from iw_webhooks where status = 'disabled'")).rows[0].n;
  expect(disabledBy).toBe(WEBHOOKS);
  const senders = new Map<string, number>();
  for (const m of smtp.messages) senders.set(m.from, (senders.get(m.from) ?? 0) + 1);
  return { senders, errors };
}
