import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { wholeLogPage } from '../../adapters/kysely/log.js';
import { BASELINE, MIGRATIONS } from '../../adapters/kysely/migrations.js';
import { type KyselyStore, NEXT_DUE_SQL } from '../../adapters/kysely/store.js';
import { CLAIM_DUE_CALL, claimQuery } from '../../adapters/postgres/claim.js';
import { STORED_FUNCTIONS } from '../../adapters/postgres/functions/index.js';
import { migratePostgres, postgresStore } from '../../adapters/postgres/index.js';
import type { ClaimArgs } from '../../src/store.js';
import { useCleanups } from '../helpers/cleanup.js';
import { percentile, until } from '../helpers/fleet.js';
import { adminQuery, createSchema, type TestPostgres, terminateBackends, useTestPostgres } from '../helpers/postgres.js';
import { attempt, event, webhook } from './conformance.js';

/** What only PostgreSQL has: SKIP LOCKED claims, the partial index, advisory-locked migrations, LISTEN/NOTIFY, pools. */
let server: TestPostgres;
beforeAll(async () => {
  server = await useTestPostgres('pgstore');
});
afterAll(async () => {
  await server?.close();
});

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const cleanups = useCleanups();
let n = 0;
const msg = () => `msg_${(++n).toString().padStart(32, '0')}`;

async function fresh(options: { migrate?: boolean } = {}) {
  const schema = await createSchema(server.url);
  cleanups.push(() => schema.drop());
  const open = (extra: Partial<Parameters<typeof postgresStore>[0]> = {}) => {
    const store = postgresStore({ connectionString: schema.url, maxConnections: 4, ...extra });
    cleanups.push(() => store.close());
    return store;
  };
  const store = open();
  if (options.migrate !== false) await store.migrate(T0);
  return { url: schema.url, store, open };
}

async function explain(store: KyselyStore, compiled: CompiledQuery, analyze = false): Promise<any> {
  const prefix = analyze ? 'explain (analyze, buffers, format json) ' : 'explain (format json) ';
  const { rows } = await store.kysely.executeQuery(CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]));
  return (rows[0] as { 'QUERY PLAN': any[] })['QUERY PLAN'][0];
}

/**
 * The plan a call of the engine's function `name` runs with: the generic plan of its query (its
 * text read back from the database, its arguments as parameters), made under the function's own
 * settings (`proconfig`) as a call would, on one connection. `args` are SQL literals. `between`
 * runs after the plan is made and before it is used (a plan is kept for a connection's life).
 * With `analyze` it runs the query.
 */
async function explainFunction(
  store: KyselyStore,
  name: string,
  args: string[],
  { analyze = false, between }: { analyze?: boolean; between?: () => Promise<void> } = {},
): Promise<any> {
  return store.kysely.connection().execute(async (db) => {
    const run = async (q: string) => (await db.executeQuery<any>(CompiledQuery.raw(q))).rows;
    const [{ prosrc, proconfig, names, types }] = await run(
      `select prosrc, proconfig, proargnames[1:pronargs] as names,
         array(select format_type(t, null) from unnest(proargtypes::oid[]) with ordinality as a(t, i) order by i) as types
       from pg_proc where oid = '${name}'::regproc`,
    );
    const query = (/return query([\s\S]*);\s*end\s*$/.exec(prosrc) ?? [])[1];
    expect(query).toBeDefined();
    const numbered = (names as string[]).reduce((q, arg, i) => q.replace(new RegExp(`\\b${arg}\\b`, 'g'), `$${i + 1}`), query!);
    const settings = (proconfig as string[]).map((c) => c.split('='));
    for (const [setting, value] of settings) await run(`set ${setting} = ${value}`);
    await run(`prepare iw_generic(${(types as string[]).join(', ')}) as ${numbered}`);
    const execute = `execute iw_generic(${args.join(', ')})`;
    try {
      await run(`explain ${execute}`); // the plan is made here, and kept
      await between?.();
      const [row] = await run(`${analyze ? 'explain (analyze, buffers, format json)' : 'explain (format json)'} ${execute}`);
      return row['QUERY PLAN'][0];
    } finally {
      await run('deallocate iw_generic');
      for (const [setting] of settings) await run(`reset ${setting}`);
    }
  });
}

/** {@link explainFunction} for `iw_claim_due_2`, the claim that leaves nothing out. */
async function explainClaimFunction(
  store: KyselyStore,
  { now, limit, workerId, leaseMs }: ClaimArgs,
  analyze = false,
  between?: () => Promise<void>,
): Promise<any> {
  const args = [`${now}`, `${limit}`, `'${workerId.replaceAll("'", "''")}'`, `${now + leaseMs}`];
  const plan = await explainFunction(store, 'iw_claim_due_2', args, { analyze, between });
  // A generic plan: the due time is a parameter in it, not the value.
  expect(JSON.stringify(plan)).toContain('(next_attempt_at <= $1)');
  return plan;
}

/** `Node Type Relation [Index]` of every node of a plan that reads a table. */
function scansOf(plan: any): string[] {
  const scans: string[] = [];
  const walk = (node: any) => {
    if (node['Relation Name']) scans.push(`${node['Node Type']} ${node['Relation Name']} ${node['Index Name'] ?? ''}`.trim());
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan.Plan);
  return scans;
}

/**
 * Events `<prefix>1` … `<prefix><count>` of env_a, created at T0 + 1 … T0 + count, in one
 * statement with the deliveries `deliveries` selects from them (`ev`: id, created_at; `$1` is
 * T0, then `parameters`).
 */
async function bulkLoad(store: KyselyStore, prefix: string, count: number, deliveries: string, parameters: unknown[]): Promise<void> {
  await store.kysely.executeQuery(
    CompiledQuery.raw(
      `with ev as (
         insert into iw_events (id, environment, type, source, data, event_timestamp, created_at)
         select '${prefix}' || g, 'env_a', 'user.created', 'api', '{}', $1::bigint, $1::bigint + g from generate_series(1, ${count}) g
         returning id, created_at)
       insert into iw_deliveries (id, environment, webhook_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
       ${deliveries}`,
      [T0, ...parameters],
    ),
  );
}

describe('postgres: claims', () => {
  test('one statement: FOR UPDATE SKIP LOCKED, the lease set and the rows returned with their webhooks and events, time passed in', () => {
    // Leaving nothing out: migration 12's function, planned once per connection.
    const plain = claimQuery({ now: T0, limit: 5, workerId: 'w1', leaseMs: 1000 });
    expect(plain.sql).toBe(CLAIM_DUE_CALL);
    expect(plain.parameters).toEqual([T0, 5, 'w1', T0 + 1000]);
    // Leaving webhooks or environments out: a text, per webhook, each one's rows locked as they are read.
    const { sql, parameters } = claimQuery({
      now: T0,
      limit: 5,
      workerId: 'w1',
      leaseMs: 1000,
      excludeWebhookIds: ['webhook_x'],
      excludeEnvironments: ['env_x'],
    });
    expect(sql).toMatch(/^with "due" as \(with recursive "hw"\("id"\) as \(/);
    expect(sql).toMatch(
      /from "hw" join "iw_webhooks" "w" on "w"\."id" = "hw"\."id" and "w"\."id" not in \(\$1\) and "w"\."environment" not in \(\$2\) cross join lateral \(select "z"\."id", "z"\."next_attempt_at" from "iw_deliveries" "z" where "z"\."webhook_id" = "hw"\."id" and "z"\."status" = 'pending' and "z"\."next_attempt_at" <= \$3 and \("z"\."locked_until" is null or "z"\."locked_until" <= \$4\) order by "z"\."next_attempt_at" limit \$5 for update skip locked\) "x" order by "x"\."next_attempt_at" limit \$6\), "claimed" as \(update "iw_deliveries" set "locked_by" = \$7, "locked_until" = \$8, "claimed_due_at" = iw_deliveries\.next_attempt_at from "due"/,
    );
    expect(sql).toMatch(/returning "iw_deliveries"\.\*\) select "claimed"\.\*, /);
    expect(sql).toMatch(
      /case when row_number\(\) over \(\) = 1 then \(select json_agg\(\(select row_to_json\("w"\.\*\) from "iw_webhooks" "w" where "w"\."id" = "d"\."webhook_id"\)\) from \(select distinct "webhook_id" from "claimed"\) "d"\) end as "webhooks"/,
    );
    expect(sql).toMatch(
      /case when row_number\(\) over \(\) = 1 then \(select json_agg\(\(select row_to_json\("e"\.\*\) from "iw_events" "e" where "e"\."id" = "d"\."event_id"\)\) from \(select distinct "event_id" from "claimed"\) "d"\) end as "events", /,
    );
    // Taking nothing, it answers one row of nulls with the next due times (an idle pass in one round trip).
    expect(sql).toMatch(
      /"next"\."delivery" as "next_delivery", "next"\."notice" as "next_notice" from \(select case when not exists \(select from "claimed"\) then \(select "next_attempt_at" from "iw_deliveries" where "status" = 'pending' and "locked_by" is null and "next_attempt_at" is not null order by "next_attempt_at" limit 1\) end as "delivery", case when not exists \(select from "claimed"\) then \(select "next_attempt_at" from "iw_notices" where "status" = 'pending' order by "next_attempt_at" limit 1\) end as "notice"\) "next" left join "claimed" on true$/,
    );
    expect(parameters).toEqual(['webhook_x', 'env_x', T0, T0, 5, 5, 'w1', T0 + 1000]);
  });

  test('the claim function returns every column of a delivery, and forces a generic plan only while it runs', async () => {
    const { store } = await fresh();
    const run = async (q: string) => (await store.kysely.executeQuery<any>(CompiledQuery.raw(q))).rows;
    const [fn] = await run(
      `select proconfig, array(select n from unnest(proargnames, proargmodes) as a(n, m) where m = 't') as columns from pg_proc where oid = 'iw_claim_due_2'::regproc`,
    );
    const table = (
      await run(
        `select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'iw_deliveries' order by ordinal_position`,
      )
    ).map((r: { column_name: string }) => r.column_name);
    // A migration adding a column to iw_deliveries must replace the function too, or claims would not return it.
    expect(fn.columns).toEqual([...table, 'webhooks', 'events', 'next_delivery', 'next_notice']);
    expect(fn.proconfig).toEqual(['plan_cache_mode=force_generic_plan', 'enable_seqscan=off', 'enable_sort=off']);
    // The session's own setting is untouched by a claim (both on one connection).
    const after = await store.kysely.connection().execute(async (db) => {
      await db.executeQuery(claimQuery({ now: T0, limit: 5, workerId: 'w1', leaseMs: 1000 }));
      return (await db.executeQuery<{ plan_cache_mode: string }>(CompiledQuery.raw('show plan_cache_mode'))).rows[0]!.plan_cache_mode;
    });
    expect(after).toBe('auto');
  });

  test('a plan made while the tables were empty still reads by index once 20,000 due rows arrived, before any ANALYZE', async () => {
    const { store } = await fresh();
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    const plan = await explainClaimFunction(store, { now: T0 + 100_000, limit: 64, workerId: 'w1', leaseMs: 45_000 }, true, () =>
      bulkLoad(
        store,
        'event_late_',
        20_000,
        `select 'msg_late_' || ev.id, 'env_a', $2, ev.id, 'pending', 0, ev.created_at, ev.created_at, ev.created_at from ev`,
        [hook.id],
      ),
    );
    // Made for empty tables, a generic plan read the deliveries by a sequential scan and a sort
    // (290 ms a claim with 200,000 rows, against 10 once ANALYZE had run).
    const scans = scansOf(plan);
    expect(scans.filter((x) => x.startsWith('Seq Scan iw_deliveries'))).toEqual([]);
    expect(scans.some((x) => x.endsWith('iw_deliveries_due'))).toBe(true);
    expect(JSON.stringify(plan)).not.toContain('"Node Type":"Sort"');
    expect(plan.Plan['Actual Rows']).toBe(64);
  });

  test("emit's function: its generic plan, made on empty tables, reads every table by index", async () => {
    const { store } = await fresh();
    // The emit the store calls, with a subject (ordered delivery per subject) and an email.
    const emit = await explainFunction(store, 'iw_emit_3', [
      "'event_y'",
      "'env_a'",
      "'user.created'",
      "'api'",
      "'{}'",
      `${T0}`,
      `${T0}`,
      'null',
      "array['msg_y']",
      'false',
      "'kp_1'",
      "'ada@example.com'",
    ]);
    const emitScans = scansOf(emit);
    expect(emitScans.filter((x) => x.startsWith('Seq Scan'))).toEqual([]);
    expect(emitScans).toContain('Index Scan iw_webhooks iw_webhooks_env');
  });

  test("a claim leaving a saturated webhook out reads per webhook, not past that webhook's 20,000 due rows", async () => {
    const { store } = await fresh();
    const busy = webhook('env_a');
    const quiet = webhook('env_a');
    const elsewhere = webhook('env_b');
    for (const w of [busy, quiet, elsewhere]) await store.createWebhook(w, { maxWebhooks: null });
    // 20,000 due deliveries of the busy webhook, all older than the 3 of each other one.
    await bulkLoad(
      store,
      'event_busy_',
      20_003,
      `select 'msg_' || ev.id || '_' || w.id, w.environment, w.id, ev.id, 'pending', 0, ev.created_at, ev.created_at, ev.created_at
       from ev join iw_webhooks w on w.id = $2 or (w.id in ($3, $4) and ev.created_at > $1::bigint + 20000)`,
      [busy.id, quiet.id, elsewhere.id],
    );
    await store.kysely.executeQuery(CompiledQuery.raw('analyze'));
    const args = { now: T0 + 100_000, limit: 64, workerId: 'w1', leaseMs: 45_000, excludeWebhookIds: [busy.id] };
    // EXPLAIN ANALYZE runs the claim: it leases the 6 others' rows, given back at once.
    const plan = await explain(store, claimQuery(args), true);
    await store.kysely.executeQuery(
      CompiledQuery.raw(
        `update iw_deliveries set next_attempt_at = created_at, locked_by = null, locked_until = null where webhook_id <> $1`,
        [busy.id],
      ),
    );
    const text = JSON.stringify(plan);
    const due = plan.Plan.Plans.find((p: any) => p['Subplan Name'] === 'CTE due');
    expect(JSON.stringify(due)).toContain('"Index Name":"iw_deliveries_pending"');
    expect(JSON.stringify(due)).not.toContain('"Index Name":"iw_deliveries_due"');
    expect(text).not.toContain(
      '"Node Type":"Seq Scan","Parent Relationship":"Outer","Parallel Aware":false,"Async Capable":false,"Relation Name":"iw_deliveries"',
    );
    // Choosing the rows reads a few index pages per webhook and the 6 rows, not the busy
    // webhook's 20,000 (1,062 buffers through the due index, as the planner chose before the
    // migration told it a webhook's share of the table is small).
    const buffers = due['Shared Hit Blocks'] + due['Shared Read Blocks'];
    expect(buffers).toBeLessThan(60);
    const claimed = await store.claimDue(args);
    expect(claimed.map((c) => c.webhook.id).sort()).toEqual([...Array(3).fill(quiet.id), ...Array(3).fill(elsewhere.id)].sort());
    console.info(`[pgstore] claim leaving out a webhook with 20,000 due rows: plan read ${buffers} buffers`);
  });

  test('no SQL of the adapters reads the database clock', () => {
    const dirs = ['adapters/kysely', 'adapters/postgres', 'adapters/sqlite'];
    for (const dir of dirs) {
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
        const text = readFileSync(join(dir, file), 'utf8');
        // SQL's now() (a method call like clock.now() is fine), its timestamp functions, and the wall clock.
        expect(text, `${dir}/${file}`).not.toMatch(
          /(?<![.\w])now\(\)|current_timestamp|clock_timestamp|statement_timestamp|localtimestamp|Date\.now/i,
        );
      }
    }
  });

  test('claimers skip rows another transaction holds instead of waiting for them', async () => {
    const { url, store } = await fresh();
    await store.createWebhook(webhook('env_a'), { maxWebhooks: null });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await store.insertEvent(event('env_a', { createdAt: T0 + i }), { newDeliveryId: msg }))[0]!.id);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query('begin');
    await holder.query('select id from iw_deliveries where id = any($1) for update', [ids.slice(0, 2)]);
    const claimed = await Promise.race([
      store.claimDue({ now: T0 + 10, limit: 10, workerId: 'w1', leaseMs: 1000 }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the claim waited on a locked row')), 5000)),
    ]);
    expect(claimed.map((c) => c.delivery.id)).toEqual(ids.slice(2));
    await holder.query('rollback');
  });

  test("a claim's plan (generic, made once per connection) reads each claimed delivery's webhook and event by primary key, never a scan, however many events are stored", async () => {
    const { store } = await fresh();
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    // 20,000 events with a delivery each, written in bulk: a table the planner must not scan per claim.
    await bulkLoad(
      store,
      'event_bulk_',
      20_000,
      `select 'msg_bulk_' || ev.id, 'env_a', $2, ev.id, 'pending', 0, ev.created_at, ev.created_at, ev.created_at from ev`,
      [hook.id],
    );
    await store.kysely.executeQuery(CompiledQuery.raw('analyze'));
    // EXPLAIN ANALYZE runs the claim: it takes the first 64.
    const plan = await explainClaimFunction(store, { now: T0 + 100_000, limit: 64, workerId: 'w1', leaseMs: 45_000 }, true);
    const scans = scansOf(plan);
    // (A one-page webhooks table may be read whole; the events and deliveries never are.)
    expect(scans.filter((x) => /^Seq Scan iw_(events|deliveries)/.test(x))).toEqual([]);
    expect(scans).toContain('Index Scan iw_events iw_events_pkey');
    expect(scans.some((x) => x.endsWith('iw_deliveries_due'))).toBe(true);
    // The update finds its rows by primary key: the generic plan cannot count on the limit (a
    // join to the chosen ids hash-joined a scan of the whole table).
    expect(scans).toContain('Index Scan iw_deliveries iw_deliveries_pkey');
    const claimed = await store.claimDue({ now: T0 + 100_000, limit: 64, workerId: 'w1', leaseMs: 45_000 });
    expect(claimed[0]!.webhook).toEqual(hook);
    expect(claimed.map((c) => c.event.id)).toEqual(Array.from({ length: 64 }, (_, i) => `event_bulk_${i + 65}`));
    expect(claimed[0]!.event).toMatchObject({ environment: 'env_a', type: 'user.created', source: 'api', data: {}, createdAt: T0 + 65 });
  });

  test('an idle tick stays cheap with many future retries pending: the partial index serves claim and nextDueAt', async () => {
    const rows = Number(process.env.TEST_PG_IDLE_ROWS ?? 200_000);
    const { store } = await fresh();
    const t0 = performance.now();
    await store.kysely.executeQuery(
      CompiledQuery.raw(
        `insert into iw_deliveries (id, environment, webhook_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
         select 'msg_future_' || g, 'env_idle', 'webhook_idle', 'event_' || g, 'pending', 3, $1::bigint + 3600000 + g, $1::bigint, $1::bigint
         from generate_series(1, $2::int) g`,
        [T0, rows],
      ),
    );
    await store.kysely.executeQuery(CompiledQuery.raw('analyze iw_deliveries'));
    const loaded = performance.now() - t0;

    const plan = await explainClaimFunction(store, { now: T0, limit: 64, workerId: 'w1', leaseMs: 45_000 }, true);
    const text = JSON.stringify(plan);
    expect(text).toContain('"Index Name":"iw_deliveries_due"');
    expect(text).not.toContain('"Node Type":"Seq Scan"');
    // nextDueAt's one statement: the head of each partial index, deliveries and notices.
    const next = JSON.stringify(await explain(store, CompiledQuery.raw(NEXT_DUE_SQL, [])));
    expect(next).toContain('"Index Name":"iw_deliveries_due"');
    expect(next).toContain('"Index Name":"iw_notices_due"');
    expect(next).not.toContain('"Node Type":"Seq Scan"');

    // The idle tick is the claim alone: taking nothing, it says when the next retry is due.
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const s = performance.now();
      const claimed = await store.claimDue({ now: T0, limit: 64, workerId: 'w1', leaseMs: 45_000 });
      times.push(performance.now() - s);
      expect(claimed).toEqual([]);
      expect(claimed.nextDueAt).toBe(T0 + 3_600_001);
    }
    console.info(
      `[pgstore] idle tick with ${rows} future retries pending (loaded in ${(loaded / 1000).toFixed(1)} s): one claim p50 ${percentile(times, 50).toFixed(2)} ms, ` +
        `p99 ${percentile(times, 99).toFixed(2)} ms; claim plan reads ${plan.Plan['Shared Hit Blocks'] + (plan.Plan['Shared Read Blocks'] ?? 0)} buffers`,
    );
  }, 120_000);
});

describe('postgres: an empty claim says what nextDueAt would', () => {
  test('the next delivery or notice, whichever is first; null with nothing pending; nothing said by a claim that took something', async () => {
    const { store } = await fresh();
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    const claim = (now: number) => store.claimDue({ now, limit: 10, workerId: 'w1', leaseMs: 1000 });
    const none = await claim(T0);
    expect(none).toEqual([]);
    expect(none.nextDueAt).toBeNull();
    expect(await store.nextDueAt()).toBeNull();

    await store.insertEvent(event('env_a', { createdAt: T0 + 500 }), { newDeliveryId: msg });
    const early = await claim(T0);
    expect(early.nextDueAt).toBe(T0 + 500);
    expect(await store.nextDueAt()).toBe(T0 + 500);
    // A notice due sooner than any delivery comes first, as in nextDueAt.
    await store.kysely.executeQuery(
      CompiledQuery.raw(
        `insert into iw_notices (id, environment, kind, webhook_id, payload, status, next_attempt_at, created_at, updated_at)
         values ('notice_x', 'env_a', 'webhook_disabled', $1, '{}', 'pending', $2, $3, $3)`,
        [hook.id, T0 + 200, T0],
      ),
    );
    expect((await claim(T0)).nextDueAt).toBe(T0 + 200);
    expect(await store.nextDueAt()).toBe(T0 + 200);

    const took = await claim(T0 + 500);
    expect(took).toHaveLength(1);
    expect(took.nextDueAt).toBeUndefined();
    // The lease moved the delivery to T0 + 1500; the notice is still first.
    expect((await claim(T0 + 500)).nextDueAt).toBe(T0 + 200);
  });
});

describe('postgres: migrations', () => {
  test('autoMigrate: false only checks, and points at migratePostgres, which runs them ahead of deploy', async () => {
    const { url, open } = await fresh({ migrate: false });
    const strict = open({ autoMigrate: false });
    await expect(strict.migrate(T0)).rejects.toThrow(
      /not this version's and autoMigrate is false; .*migratePostgres.*\(missing: 25 baseline\)/,
    );
    expect(await migratePostgres({ connectionString: url })).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
    await strict.migrate(T0);
    expect(await migratePostgres({ connectionString: url })).toEqual([]);
  });

  test('deliveries are unique by (event_id, webhook_id), one index where there were two, and lookups by event use it', async () => {
    const { store } = await fresh();
    const run = async (q: string) => (await store.kysely.executeQuery<any>(CompiledQuery.raw(q))).rows;
    const indexes = (
      await run(`select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = 'iw_deliveries'`)
    ).map((r: { indexname: string; indexdef: string }) => `${r.indexname}: ${r.indexdef.replace(/^.* USING /, '')}`);
    expect(indexes).toContain('iw_deliveries_event_webhook: btree (event_id, webhook_id)');
    expect(indexes.filter((i: string) => /iw_deliveries_(event|webhook_event):/.test(i))).toEqual([]);
    // The same rule as before: one delivery per event and webhook.
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    const [d] = await store.insertEvent(event('env_a'), { newDeliveryId: msg });
    await expect(
      run(
        `insert into iw_deliveries (id, environment, webhook_id, event_id, status, attempt_count, next_attempt_at, event_type, created_at, updated_at) select '${msg()}', environment, webhook_id, event_id, status, 0, next_attempt_at, event_type, created_at, updated_at from iw_deliveries where id = '${d!.id}'`,
      ),
    ).rejects.toThrow(/iw_deliveries_event_webhook/);
    // An event's deliveries, and retention's "no delivery left", read the key's leading column.
    // (One connection: the table is tiny, so sequential scans are off for this session alone.)
    const plan = await store.kysely.connection().execute(async (db) => {
      await db.executeQuery(CompiledQuery.raw('set enable_seqscan = off'));
      const { rows } = await db.executeQuery<any>(
        CompiledQuery.raw('explain (format json) select id from iw_deliveries where event_id = $1', [d!.eventId]),
      );
      await db.executeQuery(CompiledQuery.raw('reset enable_seqscan'));
      return JSON.stringify(rows[0]['QUERY PLAN']);
    });
    expect(plan).toContain('"Index Name":"iw_deliveries_event_webhook"');
  });

  test("no index of a webhook's whole log; its page reads a backward range of the status index per status", async () => {
    const { store } = await fresh();
    const run = async (q: string) => (await store.kysely.executeQuery<any>(CompiledQuery.raw(q))).rows;
    const names = (await run(`select indexname from pg_indexes where schemaname = current_schema() and tablename = 'iw_deliveries'`)).map(
      (r: { indexname: string }) => r.indexname,
    );
    expect(names).not.toContain('iw_deliveries_log');
    expect(names).toContain('iw_deliveries_log_status');
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    for (let i = 0; i < 5; i++) await store.insertEvent(event('env_a', { createdAt: T0 + i }), { newDeliveryId: msg });
    const page = wholeLogPage('env_a', hook.id, { createdAt: T0 + 3, id: 'msg_~' }, 26).compile(store.kysely);
    // (One connection: the table is tiny, so sequential scans are off for this session alone.)
    const plan = await store.kysely.connection().execute(async (db) => {
      await db.executeQuery(CompiledQuery.raw('set enable_seqscan = off'));
      const { rows } = await db.executeQuery<any>(CompiledQuery.raw(`explain (format json) ${page.sql}`, [...page.parameters]));
      await db.executeQuery(CompiledQuery.raw('reset enable_seqscan'));
      return JSON.stringify(rows[0]['QUERY PLAN']);
    });
    // Four backward index scans, each limited; what is sorted is at most four times a page.
    expect(plan.match(/"Index Name":"iw_deliveries_log_status"/g)).toHaveLength(4);
    expect(plan.match(/"Scan Direction":"Backward"/g)).toHaveLength(4);
    expect(plan).not.toContain('"Node Type":"Seq Scan"');
  });

  test('a claim changes no indexed column, and on pages with room most of its updates are HOT (no index entry)', async () => {
    const { store } = await fresh();
    const run = async (q: string) => (await store.kysely.executeQuery<any>(CompiledQuery.raw(q))).rows;
    const [table] = await run(`select reloptions from pg_class where oid = 'iw_deliveries'::regclass`);
    expect(table.reloptions).toEqual(['fillfactor=60']);
    expect(await run(`select 1 from pg_proc where proname = 'iw_claim_due'`)).toEqual([]);
    // 64 deliveries as emit writes them: 8 events to 8 webhooks, in emit order.
    for (let i = 0; i < 8; i++) await store.createWebhook(webhook('env_a'), { maxWebhooks: null });
    for (let i = 0; i < 8; i++) await store.insertEvent(event('env_a', { createdAt: T0 + i }), { newDeliveryId: msg });
    const indexed = `select id, status, next_attempt_at, updated_at, webhook_id, event_id, event_type, created_at from iw_deliveries order by id`;
    const before = await run(indexed);
    // The transaction's own counters: how many rows the claim updated, and how many of those were HOT.
    const counted = await store.kysely.connection().execute(async (db) => {
      const q = async (text: string, parameters: unknown[] = []) => (await db.executeQuery<any>(CompiledQuery.raw(text, parameters))).rows;
      await q('begin');
      const c = claimQuery({ now: T0 + 1000, limit: 64, workerId: 'w1', leaseMs: 60_000 });
      const claimed = await q(c.sql, [...c.parameters]);
      const [stats] = await q(`select n_tup_upd, n_tup_hot_upd from pg_stat_xact_user_tables where relid = 'iw_deliveries'::regclass`);
      await q('commit');
      return { claimed: claimed.length, updated: Number(stats.n_tup_upd), hot: Number(stats.n_tup_hot_upd) };
    });
    expect(await run(indexed)).toEqual(before);
    expect(counted.claimed).toBe(64);
    expect(counted.updated).toBe(64);
    // A page takes all the new versions of its rows in one statement before any old one can be
    // pruned; with 40 % of each page free, most of them fit. (An update setting an indexed column,
    // as the claim of migration 8 did, is never HOT: 0.)
    expect(counted.hot).toBeGreaterThanOrEqual(40);
  });

  test('several stores migrating one empty schema at once: one applies, all succeed', async () => {
    const { url, open } = await fresh({ migrate: false });
    const stores = Array.from({ length: 5 }, () => open());
    await Promise.all(stores.map((s) => s.migrate(T0)));
    const { rows } = await adminQuery(url, 'select count(*)::int as n from iw_migrations');
    expect(rows[0].n).toBe(1 + MIGRATIONS.length);
    const functions = await adminQuery(url, 'select count(*)::int as n from iw_functions');
    expect(functions.rows[0].n).toBe(STORED_FUNCTIONS.length);
  });
});

describe('postgres: wake-ups (LISTEN/NOTIFY)', () => {
  async function listening() {
    const { url, store, open } = await fresh();
    const other = open();
    const wakes: number[] = [];
    const stop = await other.subscribe!(() => wakes.push(performance.now()));
    cleanups.push(stop);
    await until('the listener to connect', () => wakes.length >= 1, 10_000, 5); // it wakes once on (re)connect
    return { url, store, other, wakes };
  }

  test('with directConnectionString the listener holds a connection of its own on that URL (behind a pooler); hints still wake it', async () => {
    const { url, store, open } = await fresh();
    const direct = new URL(url);
    direct.searchParams.set('application_name', 'iw_direct_listen');
    const other = open({ directConnectionString: direct.toString() });
    const wakes: number[] = [];
    cleanups.push(await other.subscribe!(() => wakes.push(performance.now())));
    await until('the listener to connect', () => wakes.length >= 1, 10_000, 5);
    const { rows } = await adminQuery(
      server.adminUrl,
      "select application_name, query from pg_stat_activity where application_name = 'iw_direct_listen'",
    );
    expect(rows).toEqual([{ application_name: 'iw_direct_listen', query: 'listen identity_webhooks_wake' }]);
    await store.createWebhook(webhook('env_a'), { maxWebhooks: null });
    const before = wakes.length;
    await store.insertEvent(event('env_a'), { newDeliveryId: msg });
    await until('the wake-up', () => wakes.length > before, 5000, 1);
  });

  test('an event committed by one store wakes the other; a rolled-back one does not', async () => {
    const { store, wakes } = await listening();
    await store.createWebhook(webhook('env_a'), { maxWebhooks: null });
    const samples: number[] = [];
    for (let i = 0; i < 20; i++) {
      const before = wakes.length;
      const t0 = performance.now();
      await store.insertEvent(event('env_a'), { newDeliveryId: msg });
      await until('the wake-up', () => wakes.length > before, 5000, 1);
      samples.push(wakes[before]! - t0);
    }
    console.info(
      `[pgstore] insertEvent -> other store woken: p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms`,
    );

    const before = wakes.length;
    await expect(
      store.kysely.transaction().execute(async (trx) => {
        await store.insertEvent(event('env_a'), { newDeliveryId: msg, transaction: trx });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await store.insertEvent(event('env_nobody'), { newDeliveryId: msg }); // no delivery, no hint
    await new Promise((r) => setTimeout(r, 300));
    expect(wakes.length).toBe(before);
  });

  test('resuming held deliveries and giving back claims wake the others too', async () => {
    const { store, wakes } = await listening();
    const hook = webhook('env_a');
    await store.createWebhook(hook, { maxWebhooks: null });
    const [d] = await store.insertEvent(event('env_a'), { newDeliveryId: msg });
    await store.disableWebhook('env_a', hook.id, 'manual', T0);
    let before = wakes.length;
    await store.enableWebhook('env_a', hook.id, T0 + 1, true);
    await until('a wake-up after enable', () => wakes.length > before, 5000, 1);
    await store.claimDue({ now: T0 + 1, limit: 1, workerId: 'w1', leaseMs: 1000 });
    before = wakes.length;
    await store.release([d!.id], 'w1', T0 + 2);
    await until('a wake-up after release', () => wakes.length > before, 5000, 1);
  });

  test("an ordered success that makes its subject's next due wakes the other workers, not the worker that recorded it", async () => {
    const { url, store, open } = await fresh();
    const listen = async (self: string) => {
      const wakes: number[] = [];
      cleanups.push(await open().subscribe!(() => wakes.push(performance.now()), self));
      await until(`${self}'s listener to connect`, () => wakes.length >= 1, 10_000, 5); // it wakes once on (re)connect
      return wakes;
    };
    const own = await listen('w1');
    const others = await listen('w2');
    const hook = webhook('env_a', { ordering: 'per-subject' });
    await store.createWebhook(hook, { maxWebhooks: null });
    const user = (at: number) => event('env_a', { createdAt: at, data: { user: { id: 'u1' } } });
    await store.insertEvent(user(T0), { newDeliveryId: msg, subject: 'u1' });
    const [second] = await store.insertEvent(user(T0 + 1), { newDeliveryId: msg, subject: 'u1' });
    const [head] = await store.claimDue({ now: T0 + 10, limit: 10, workerId: 'w1', leaseMs: 60_000 });
    const [ownBefore, othersBefore] = [own.length, others.length];
    const [result] = await store.recordAttempts([
      {
        attempt: attempt(head!.delivery.id, hook.id, 'env_a', true, T0 + 20),
        workerId: 'w1',
        now: T0 + 20,
        nextAttemptAt: null,
        disableAfterMs: 72 * 3600_000,
        leaseUntil: head!.lease.until,
        ordered: true,
      },
    ]);
    expect(result).toEqual({ disabled: null, released: true });
    expect(await store.getDelivery('env_a', second!.id)).toMatchObject({ status: 'pending', nextAttemptAt: T0 + 20 });
    await until('the other worker woken', () => others.length > othersBefore, 5000, 1);
    // Both listeners are on the same server and channel: had the recording worker's own heard
    // the hint, it would have by now.
    await new Promise((r) => setTimeout(r, 200));
    expect(own.length).toBe(ownBefore);
    const { rows } = await adminQuery(url, "select count(*)::int as n from iw_ordered where seq is not null and subject = 'u1'");
    expect(rows[0].n).toBe(1); // the head left its queue; the next is its head now
  });

  test('the listener survives its connection being killed: it reconnects and hears again', async () => {
    const { url, store, other, wakes } = await listening();
    await store.createWebhook(webhook('env_a'), { maxWebhooks: null });
    const errors: unknown[] = [];
    const before = wakes.length;
    expect(await terminateBackends(url)).toBeGreaterThan(0);
    const killedAt = performance.now();
    // Emit until one is heard: the first few may land while the listener is still reconnecting.
    await until(
      'a wake-up after reconnecting',
      async () => {
        await store.insertEvent(event('env_a'), { newDeliveryId: msg }).catch((e) => errors.push(e));
        return wakes.length > before;
      },
      15_000,
      100,
    );
    console.info(`[pgstore] listener heard again ${(wakes[before]! - killedAt).toFixed(0)} ms after its backend was killed`);
    expect(await other.nextDueAt()).not.toBeNull(); // and its pool replaced the dead connections
  });
});

describe('postgres: pools', () => {
  test('a host pool is lent, not owned: close leaves it open and takes our listeners off it', async () => {
    const { url } = await fresh();
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    cleanups.push(() => pool.end());
    const listeners = [pool.listenerCount('error'), pool.listenerCount('connect')];
    const store = postgresStore({ pool });
    await store.migrate(T0);
    const stop = await store.subscribe!(() => {});
    await stop();
    await store.close();
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    expect([pool.listenerCount('error'), pool.listenerCount('connect')]).toEqual(listeners);
    const client = await pool.connect(); // a connection opened while we were there: our guard is gone
    expect(client.listenerCount('error')).toBe(0);
    client.release();
  });

  test('idle connections killed under the pool do not crash the process; the next query reconnects', async () => {
    const errors: string[] = [];
    const { url, open } = await fresh();
    const store = open({ onError: (m) => errors.push(m) });
    await Promise.all([store.nextDueAt(), store.nextDueAt(), store.nextDueAt()]); // several idle connections
    expect(await terminateBackends(url)).toBeGreaterThan(0);
    await until('the pool to notice', () => errors.length > 0, 5000, 10);
    expect(errors[0]).toMatch(/idle connection was lost/);
    // A connection whose death is not yet noticed may fail one query (the scheduler's p-retry
    // covers that); the pool then hands out fresh ones.
    const failures: unknown[] = [];
    await until(
      'a query on a fresh connection',
      () =>
        store.nextDueAt().then(
          () => true,
          (e) => (failures.push(e), false),
        ),
      5000,
      10,
    );
    expect(failures.length).toBeLessThanOrEqual(3);
  });

  test('options are checked at once', () => {
    expect(() => postgresStore({} as never)).toThrow(TypeError);
    expect(() => postgresStore({ connectionString: '' })).toThrow(TypeError);
    expect(() => postgresStore({ connectionString: 'postgres://x', pool: new pg.Pool() })).toThrow(/exactly one/);
    expect(() => postgresStore({ connectionString: 'postgres://x', maxConnections: 1 })).toThrow(/maxConnections/);
    expect(() => postgresStore({ connectionString: 'postgres://x', notifications: 'yes' as never })).toThrow(/notifications/);
    expect(() => postgresStore({ connectionString: 'postgres://x', directConnectionString: '' })).toThrow(/directConnectionString/);
    const quiet = postgresStore({ connectionString: 'postgres://x', notifications: false }); // behind PgBouncer: polling only
    cleanups.push(() => quiet.close());
    expect(quiet.subscribe).toBeUndefined();
  });
});
