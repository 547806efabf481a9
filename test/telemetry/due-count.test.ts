import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { countDueQuery } from '../../adapters/kysely/telemetry.js';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/** The due gauge's count reads the due index, never the table: it stays cheap under a large backlog of future retries. */
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
/** Pending deliveries loaded: the first 10 due by T0, the rest hours ahead (retries waiting). */
const ROWS = 50_000;
const cleanups = useCleanups();
let server: TestPostgres;
beforeAll(async () => {
  server = await useTestPostgres('duecount');
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe('countDue', () => {
  test('SQLite: served by the partial index iw_deliveries_due', async () => {
    const dir = tempDir();
    const store = sqliteStore({ filename: dir.file('webhooks.db') });
    cleanups.push(
      () => dir.cleanup(),
      () => store.close(),
    );
    await store.migrate(T0);
    await store.kysely.executeQuery(
      CompiledQuery.raw(
        `insert into iw_deliveries (id, environment, webhook_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
         with recursive g(g) as (select 1 union all select g + 1 from g where g < ${ROWS})
         select 'msg_' || g, 'env', 'webhook_x', 'event_' || g, 'pending', 1,
                case when g <= 10 then ${T0} - g else ${T0} + 3600000 + g end, ${T0}, ${T0}
         from g`,
      ),
    );
    expect(await store.countDue(T0)).toBe(10);
    const { sql, parameters } = countDueQuery(store.kysely, T0).compile();
    const { rows } = await store.kysely.executeQuery(CompiledQuery.raw(`explain query plan ${sql}`, [...parameters]));
    const plan = rows.map((r) => (r as { detail: string }).detail).join('\n');
    expect(plan).toMatch(/USING (COVERING )?INDEX iw_deliveries_due/);
    expect(plan).not.toMatch(/^SCAN iw_deliveries$/m);
  });

  test('PostgreSQL: served by the partial index iw_deliveries_due, a handful of buffers', async () => {
    const schema = await createSchema(server.url, 'due');
    const store = postgresStore({ connectionString: schema.url, maxConnections: 2 });
    cleanups.push(
      () => schema.drop(),
      () => store.close(),
    );
    await store.migrate(T0);
    await store.kysely.executeQuery(
      CompiledQuery.raw(
        `insert into iw_deliveries (id, environment, webhook_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
         select 'msg_' || g, 'env', 'webhook_x', 'event_' || g, 'pending', 1,
                case when g <= 10 then $1::bigint - g else $1::bigint + 3600000 + g end, $1::bigint, $1::bigint
         from generate_series(1, $2::int) g`,
        [T0, ROWS],
      ),
    );
    await store.kysely.executeQuery(CompiledQuery.raw('analyze iw_deliveries'));
    expect(await store.countDue(T0)).toBe(10);
    const { sql, parameters } = countDueQuery(store.kysely, T0).compile();
    const { rows } = await store.kysely.executeQuery(CompiledQuery.raw(`explain (analyze, buffers, format json) ${sql}`, [...parameters]));
    const plan = (rows[0] as { 'QUERY PLAN': Array<{ Plan: Record<string, number> }> })['QUERY PLAN'][0]!;
    const text = JSON.stringify(plan);
    expect(text).toContain('"Index Name":"iw_deliveries_due"');
    expect(text).not.toContain('"Node Type":"Seq Scan"');
    expect(plan.Plan['Shared Hit Blocks']! + (plan.Plan['Shared Read Blocks'] ?? 0)).toBeLessThan(50);
  });
});
