// The variants of bench/peers.mjs: the hand-written reference, the peers, the engine; for each its
// store, its durability, its in-flight bound, and the reference it is a ratio to. And the
// issue's targets, as ratios between variants measured in the same sitting.

const SQLITE_DURABLE = 'SQLite WAL, synchronous=NORMAL: survives a process crash (an OS crash can drop the last commits)';
const PG_DURABLE = 'PostgreSQL, durable';
const durable = (store) =>
  store === 'sqlite' ? { durabilityKey: 'SQLite', durability: SQLITE_DURABLE } : { durabilityKey: 'PostgreSQL', durability: PG_DURABLE };

/** The reference and the peers: run once per sitting, whatever engines are compared. */
export function peerVariants({ pgboss = { loops: 2, batchSize: 4 } } = {}) {
  const ref = (id, title, store, fanout, inFlight) => ({
    id,
    title,
    store,
    module: store === 'sqlite' ? 'reference-sqlite.mjs' : 'reference-postgres.mjs',
    ...durable(store),
    inFlight,
    config: { fanout, inFlight },
    ref: null,
  });
  // The reference signing the Standard Webhooks way (issue 37): a JSON body, an HMAC per delivery.
  const sw = (id, title, store, fanout, inFlight) => {
    const v = ref(id, `${title}, standard-webhooks`, store, fanout, inFlight);
    v.config.format = 'standard-webhooks';
    return v;
  };
  return [
    sw('ref-sw-sqlite-8', 'reference, SQLite, fan-out 1, one endpoint, capped at 8 in flight', 'sqlite', 1, 8),
    sw('ref-sw-sqlite-fo10', 'reference, SQLite, fan-out 10, 64 in flight', 'sqlite', 10, 64),
    sw('ref-sw-pg-8', 'reference, PostgreSQL, fan-out 1, one endpoint, capped at 8 in flight', 'postgres', 1, 8),
    sw('ref-sw-pg-fo10', 'reference, PostgreSQL, fan-out 10, 64 in flight', 'postgres', 10, 64),
    ref('ref-sqlite-8', 'reference, SQLite, fan-out 1, one endpoint, capped at 8 in flight', 'sqlite', 1, 8),
    ref('ref-sqlite-64', 'reference, SQLite, fan-out 1, one endpoint, 64 in flight', 'sqlite', 1, 64),
    ref('ref-sqlite-fo10', 'reference, SQLite, fan-out 10, 64 in flight', 'sqlite', 10, 64),
    ref('ref-pg-8', 'reference, PostgreSQL, fan-out 1, one endpoint, capped at 8 in flight', 'postgres', 1, 8),
    ref('ref-pg-fo10', 'reference, PostgreSQL, fan-out 10, 64 in flight', 'postgres', 10, 64),
    {
      id: 'bullmq',
      title: 'BullMQ + jose + undici, fan-out 1, one endpoint, concurrency 8',
      store: 'redis',
      module: 'bullmq.mjs',
      durabilityKey: 'Redis',
      durability: '(read from Redis at run time)',
      inFlight: 8,
      config: { concurrency: 8 },
      ref: 'ref-sqlite-8',
    },
    {
      id: 'pgboss',
      title: `pg-boss + jose + fetch, fan-out 1, one endpoint, ${pgboss.loops} fetch loops x ${pgboss.batchSize}`,
      store: 'postgres',
      module: 'pgboss.mjs',
      ...durable('postgres'),
      inFlight: pgboss.loops * pgboss.batchSize,
      config: pgboss,
      ref: 'ref-pg-8',
    },
  ];
}

/** The engine's variants, for one build (`label`, loaded from `path`/dist). */
export function engineVariants({ label, path }) {
  const at = label === 'current' ? '' : `@${label}`;
  const v = (id, title, store, fanout, delivery, inFlight, ref) => ({
    id: `${id}${at}`,
    base: id,
    engine: label,
    title: `engine${at ? ` (${label})` : ''}, ${title}`,
    store,
    module: 'engine.mjs',
    ...durable(store),
    inFlight,
    config: { enginePath: path, kind: store, fanout, ...(delivery ? { delivery } : {}) },
    ref,
  });
  return [
    v('engine-fo1', 'SQLite, fan-out 1, one endpoint, defaults', 'sqlite', 1, null, 8, 'ref-sqlite-8'),
    v(
      'engine-pec64',
      'SQLite, fan-out 1, one endpoint, perWebhookConcurrency 64',
      'sqlite',
      1,
      // The old name too: `--engine=PATH` may load a build from before the rename, which would
      // silently run this variant at the default of 8.
      { perWebhookConcurrency: 64, perEndpointConcurrency: 64 },
      64,
      'ref-sqlite-64',
    ),
    v('engine-fo10', 'SQLite, fan-out 10 (10 webhooks of one environment), defaults', 'sqlite', 10, null, 64, 'ref-sqlite-fo10'),
    v('engine-pg-fo1', 'PostgreSQL, fan-out 1, one endpoint, defaults', 'postgres', 1, null, 8, 'ref-pg-8'),
    v('engine-pg-fo10', 'PostgreSQL, fan-out 10, defaults', 'postgres', 10, null, 64, 'ref-pg-fo10'),
    // Standard Webhooks (issue 37): no RSA signature; each beside the reference signing the same way.
    sw(v('engine-sw-fo1', 'SQLite, fan-out 1, one endpoint, standard-webhooks', 'sqlite', 1, null, 8, 'ref-sw-sqlite-8')),
    sw(v('engine-sw-fo10', 'SQLite, fan-out 10, standard-webhooks', 'sqlite', 10, null, 64, 'ref-sw-sqlite-fo10')),
    sw(v('engine-sw-pg-fo1', 'PostgreSQL, fan-out 1, one endpoint, standard-webhooks', 'postgres', 1, null, 8, 'ref-sw-pg-8')),
    sw(v('engine-sw-pg-fo10', 'PostgreSQL, fan-out 10, standard-webhooks', 'postgres', 10, null, 64, 'ref-sw-pg-fo10')),
  ];
}

const sw = (variant) => ((variant.config.format = 'standard-webhooks'), variant);

/** `--only=stdwh`: the Standard Webhooks variants beside the JWT ones (issue 37). */
export const STDWH = [
  'engine-fo1',
  'engine-fo10',
  'engine-pg-fo1',
  'engine-pg-fo10',
  'engine-sw-fo1',
  'engine-sw-fo10',
  'engine-sw-pg-fo1',
  'engine-sw-pg-fo10',
];

/** Issue 17's targets for one engine build: [variant, over, goal, title]; `over` null = its own reference. */
export function engineTargets(label) {
  const at = label === 'current' ? '' : `@${label}`;
  const tag = at ? ` (${label})` : '';
  return [
    [`engine-fo1${at}`, null, 0.75, `fan-out 1, one endpoint, defaults${tag} × reference capped at 8`],
    [`engine-pec64${at}`, null, 0.9, `perWebhookConcurrency 64${tag} × reference at 64`],
    [`engine-fo10${at}`, null, 0.85, `fan-out 10${tag} × reference fan-out 10`],
    [`engine-pg-fo1${at}`, null, 0.7, `PostgreSQL fan-out 1${tag} × PostgreSQL reference capped at 8`],
    [`engine-pg-fo10${at}`, null, 0.7, `PostgreSQL fan-out 10${tag} × PostgreSQL reference fan-out 10`],
    [`engine-fo1${at}`, 'bullmq', 1, `fan-out 1, defaults${tag} ahead of BullMQ (× BullMQ, > 1)`],
    [`engine-sw-fo1${at}`, null, 0.8, `standard-webhooks fan-out 1${tag} × reference signing the same way`],
    [`engine-sw-pg-fo1${at}`, null, 0.8, `standard-webhooks PostgreSQL fan-out 1${tag} × reference signing the same way`],
  ];
}
