import { randomBytes } from 'node:crypto';
// The engine, loaded from the dist directory of a built checkout (`enginePath`: this checkout by
// default, or another one, so two builds run side by side in one sitting), used the way
// bench/lib/engine.mjs and bench/scenarios/throughput.mjs use it: an engine as a host builds it
// (allowPrivateNetworks for the loopback receiver, the rest defaults unless `delivery` says
// otherwise), a warm-up emit per environment through the real path, then a preloaded backlog of
// due deliveries (bench/lib/preload.mjs: the rows emit() writes), wake(), drain().
//
// Config: { enginePath, kind: 'sqlite' | 'postgres', deliveries, fanout, delivery, receiver, pgPrefix }.
// Fan-out 1: ONE webhook (one endpoint, one environment); fan-out F: F webhooks of one environment.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { EVENT_DATA, EVENT_TYPE, ISSUER } from '../lib/payload.mjs';
import { createDatabase } from '../lib/postgres.mjs';
import { preload } from '../lib/preload.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';
import { tempDir } from '../lib/tmp.mjs';
import { checkOnce, figures, timedWindow } from './common.mjs';

const load = (enginePath, file) => import(pathToFileURL(join(enginePath, 'dist', file)).href);

export default async function engine(config) {
  const { enginePath, kind, deliveries, fanout, delivery, receiver, pgPrefix } = config;
  const { createWebhooks, generateSigningKey } = await load(enginePath, 'src/index.js');
  let store;
  let dir;
  if (kind === 'sqlite') {
    const { sqliteStore } = await load(enginePath, 'adapters/sqlite/index.js');
    dir = tempDir('peers-engine');
    store = sqliteStore({ filename: join(dir.path, 'webhooks.db') });
  } else {
    const { postgresStore } = await load(enginePath, 'adapters/postgres/index.js');
    store = postgresStore({ connectionString: await createDatabase(`${pgPrefix}_engine`) }); // dropped by peers.mjs
  }
  const errors = [];
  const hooks = createWebhooks({
    store,
    keys: [await generateSigningKey()],
    issuer: ISSUER,
    allowPrivateNetworks: true,
    // Standard Webhooks (issue 37) needs its secrets sealed.
    ...(config.format ? { secretsKey: randomBytes(32).toString('base64') } : {}),
    ...(delivery ? { delivery } : {}),
    logger: {
      warn: () => {},
      error: (message, meta) => void (errors.length < 20 && errors.push(`${message} ${meta ? JSON.stringify(meta) : ''}`)),
    },
  });
  const count = async (query) => Number((await query.execute(store.kysely)).rows[0].n);
  const delivered = () => count(sql`select count(*) as n from iw_deliveries where status = 'delivered'`);
  try {
    await hooks.start();
    const webhookIds = [];
    for (let i = 0; i < fanout; i++) {
      const w = await hooks.webhooks.create({
        name: `peers ${i}`,
        endpoint: `${receiver.urls[i % receiver.urls.length]}/ok/${i}`,
        eventTypes: [EVENT_TYPE],
        environment: 'default',
        ...(config.format ? { format: config.format } : {}),
      });
      webhookIds.push(w.id);
    }
    // Warm-up through the real path: connections open, key imported, statements prepared.
    for (let i = 0; i < Math.max(1, Math.ceil(64 / fanout)); i++)
      await hooks.emit({ type: EVENT_TYPE, source: 'admin', data: EVENT_DATA, environment: 'default' });
    await hooks.drain();
    const warm = await delivered();
    const warmAttempts = await count(sql`select count(*) as n from iw_attempts`);

    const events = Math.ceil(deliveries / fanout);
    const loaded = await preload(store, {
      groups: [{ environment: 'default', webhookIds }],
      events,
      firstDueAt: Date.now() - events,
      kind,
    });
    if (kind === 'postgres') await sql`analyze`.execute(store.kysely);
    await receiverControl(receiver.urls).reset();
    const { seconds, cpu } = await timedWindow('engine', async () => {
      hooks.wake();
      await hooks.drain();
    });

    const recorded = (await delivered()) - warm;
    const attempts = (await count(sql`select count(*) as n from iw_attempts`)) - warmAttempts;
    const distinct = await count(
      sql`select count(distinct a.delivery_id) as n from iw_attempts a join iw_deliveries d on d.id = a.delivery_id where d.event_id like ${`${loaded.prefix}%`}`,
    );
    if (errors.length) throw new Error(`the engine logged errors: ${errors.slice(0, 3).join(' | ')}`);
    const check = await checkOnce(receiver.urls, { expected: loaded.deliveries, recorded, attempts, distinct });
    return figures({ deliveries: loaded.deliveries, seconds, cpu, check });
  } finally {
    await hooks.close();
    dir?.cleanup();
  }
}
