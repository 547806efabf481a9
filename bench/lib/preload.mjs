import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { EVENT_DATA, EVENT_TYPE } from './payload.mjs';
import { kindOf } from './stores.mjs';

/**
 * Writes events and their pending deliveries straight into the engine's tables with a few
 * set-based statements (a recursive CTE on SQLite, generate_series on PostgreSQL): a backlog of a
 * million rows in seconds, where a million emit() calls would take minutes. The rows are what
 * emit() writes (same columns, statuses, ids of the same shape); this file knows the schema of
 * adapters/kysely/migrations.ts and must follow it.
 *
 * Event i goes to group i % groups.length and gets one delivery per webhook of that group; it is
 * due at `firstDueAt + i * spacingMs`, so claims take events oldest first, each event's
 * deliveries together, as after a burst of emits.
 *
 * @param {import('identity-webhooks').Store & { kysely: any }} store
 * With `deferIndexes`, the secondary indexes (and on PostgreSQL the primary keys and unique
 * constraints) of iw_events and iw_deliveries are dropped first and rebuilt at the end of the
 * same transaction from the catalog's own definitions: one sort per index instead of a million
 * B-tree inserts (PostgreSQL: 13 s -> 5-6 s for the backlog's million rows). The schema after is
 * the migrations' exactly, whatever they define.
 *
 * `kind` ('sqlite' | 'postgres') is for a store not opened by lib/stores.mjs (an engine loaded from another checkout).
 *
 * @param {{ groups: { environment: string, webhookIds: string[] }[], events: number, firstDueAt: number, spacingMs?: number, createdAt?: number, deferIndexes?: boolean, kind?: string }} plan
 * @returns {Promise<{ events: number, deliveries: number, prefix: string }>}
 */
export async function preload(store, { groups, events, firstDueAt, spacingMs = 1, createdAt, deferIndexes = false, kind }) {
  const db = store.kysely;
  const pg = (kind ?? kindOf(store)) === 'postgres';
  const G = groups.length;
  const hex = Date.now().toString(16).padStart(12, '0');
  const prefix = `event_${hex}${randomBytes(4).toString('hex')}`; // + 9-digit index = the usual 20 after the time
  const data = JSON.stringify(EVENT_DATA);
  const lit = (n) => sql.lit(Math.trunc(n));
  let deliveries = 0;

  await db.transaction().execute(async (trx) => {
    const deferred = deferIndexes ? await dropSecondaryIndexes(trx, pg) : [];
    for (let g = 0; g < G; g++) {
      const n = Math.floor(events / G) + (g < events % G ? 1 : 0);
      if (n === 0) continue;
      const { environment, webhookIds } = groups[g];
      // i = g + G*x for x in [0, n): the global index of the event.
      const index = sql`(${lit(g)} + ${lit(G)} * x)`;
      const at = sql`(${lit(firstDueAt)} + ${index} * ${lit(spacingMs)})`;
      const created = createdAt === undefined ? at : lit(createdAt);
      const id = pg ? sql`${prefix} || lpad(${index}::text, 9, '0')` : sql`${prefix} || printf('%09d', ${index})`;
      const cols = sql`insert into iw_events (id, environment, type, source, data, event_timestamp, created_at)`;
      const select = sql`select ${id}, ${environment}, ${EVENT_TYPE}, 'admin', ${data}, ${at}, ${created}`;
      if (pg) await sql`${cols} ${select} from generate_series(0, ${lit(n - 1)}) as s(x)`.execute(trx);
      else
        await sql`with recursive s(x) as (select 0 union all select x + 1 from s where x + 1 < ${lit(n)}) ${cols} ${select} from s`.execute(
          trx,
        );

      // The deliveries as emit() writes them: each event's together, in its webhooks' order (the
      // table's rows, and PostgreSQL's heap, in emit order), each id `msg_` + the creation time in
      // 12 hex digits + 20 random ones (newId), so ids sort by creation time and a claim's oldest
      // rows sit together in every index keyed by delivery id, as they do after real emits.
      const hooks = sql.join(webhookIds.map((webhookId, w) => sql`(${lit(w)}, ${webhookId})`));
      const random = pg ? sql`substr(md5(random()::text || e.id || w.idx::text), 1, 20)` : sql`lower(hex(randomblob(10)))`;
      const stamp = pg ? sql`lpad(to_hex(e.created_at), 12, '0')` : sql`printf('%012x', e.created_at)`;
      await sql`with w(idx, webhook_id) as (values ${hooks})
        insert into iw_deliveries (id, environment, webhook_id, event_id, status, attempt_count, next_attempt_at, locked_by, locked_until, last_attempt_at, last_result, created_at, updated_at)
        select 'msg_' || ${stamp} || ${random}, e.environment, w.webhook_id, e.id, 'pending', 0, e.event_timestamp, null, null, null, null, e.created_at, e.created_at
        from iw_events e cross join w where e.id >= ${prefix} and e.id < ${`${prefix}~`} and e.environment = ${environment}
        order by e.id, w.idx`.execute(trx);
      deliveries += n * webhookIds.length;
    }
    for (const def of deferred) await sql.raw(def).execute(trx);
  });
  return { events, deliveries, prefix };
}

/**
 * Drops the secondary indexes of iw_events and iw_deliveries (on PostgreSQL also their primary
 * keys and unique constraints; SQLite cannot drop those without rebuilding the table) and returns
 * the statements that recreate them exactly, read from the catalog.
 */
async function dropSecondaryIndexes(trx, pg) {
  const tables = ['iw_events', 'iw_deliveries'];
  if (pg) {
    // PostgreSQL: the primary keys and unique constraints too (rebuilt by one sort each, much
    // faster than a million B-tree inserts); nothing references these tables.
    const { rows: cons } =
      await sql`select conrelid::regclass::text as tbl, conname as name, pg_get_constraintdef(oid) as def from pg_constraint
      where conrelid in (${sql.join(tables.map((t) => sql`${t}::regclass`))}) and contype in ('p', 'u')`.execute(trx);
    const { rows: idx } =
      await sql`select indexname as name, indexdef as def from pg_indexes where schemaname = current_schema() and tablename in (${sql.join(tables)})
        and indexname not in (select conname from pg_constraint)`.execute(trx);
    for (const { name } of idx) await sql`drop index ${sql.id(name)}`.execute(trx);
    for (const { tbl, name } of cons) await sql`alter table ${sql.id(tbl)} drop constraint ${sql.id(name)}`.execute(trx);
    return [...cons.map((c) => `alter table ${c.tbl} add constraint ${c.name} ${c.def}`), ...idx.map((r) => r.def)];
  }
  const { rows } =
    await sql`select name, sql as def from sqlite_master where type = 'index' and sql is not null and tbl_name in (${sql.join(tables)})`.execute(
      trx,
    );
  for (const { name } of rows) await sql`drop index ${sql.id(name)}`.execute(trx);
  return rows.map((r) => r.def);
}

/** Refreshes the planner's statistics, as autovacuum would on a database that had time to. */
export async function analyze(store) {
  await sql`analyze`.execute(store.kysely);
}
