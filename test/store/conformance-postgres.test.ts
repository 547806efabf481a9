import { afterAll, beforeAll } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { pgbouncerAvailable, startPgBouncer, type TestPgBouncer } from '../helpers/pgbouncer.js';
import { adminQuery, createDatabase, createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
import { describeStore, type TestableStore } from './conformance.js';

let server: TestPostgres;
let bouncer: TestPgBouncer | undefined;
const withBouncer = pgbouncerAvailable('conformance-postgres.test.ts');
beforeAll(async () => {
  server = await useTestPostgres('store');
  if (withBouncer) bouncer = await startPgBouncer(server.adminUrl);
}, 60_000);
afterAll(async () => {
  await bouncer?.close();
  await server?.close();
});

/**
 * Empties every table of the store's schema (one statement) but the migration ledger and the
 * functions' record: the next test starts on empty tables of a migrated schema. Migrating a new
 * schema per test cost about 0.3 s a test, and a database per test behind the pooler 0.6 s; the
 * first migration's races are proven on a new database in migrations.test.ts.
 */
async function emptied(url: string): Promise<void> {
  await adminQuery(
    url,
    `do $$ begin execute coalesce((select 'truncate ' || string_agg(format('%I', tablename), ', ') || ' cascade' from pg_tables
       where schemaname = current_schema() and tablename not in ('iw_migrations', 'iw_functions')), 'select'); end $$`,
  );
}

/** A store factory on one database (`url`, migrated once), its tables emptied after each test. */
function onOne(url: () => string, options: (url: string) => Parameters<typeof postgresStore>[0]) {
  return async () => {
    const stores: TestableStore[] = [];
    const open = () => {
      const store = postgresStore(options(url()));
      stores.push(store);
      return store;
    };
    return {
      store: open(),
      sibling: async () => open(),
      async close() {
        for (const s of stores) await s.close();
        await emptied(url());
      },
    };
  };
}

// One schema of this file's database for every test, emptied after each; siblings are separate
// pools, i.e. real concurrent connections, as separate processes would have.
let schema: { url: string; drop(): Promise<void> };
beforeAll(async () => {
  schema = await createSchema(server.url);
}, 60_000);
afterAll(async () => {
  await schema?.drop();
});
describeStore(
  'postgres',
  onOne(
    () => schema.url,
    (connectionString) => ({ connectionString, maxConnections: 3 }),
  ),
);

// The same contract through PgBouncer in transaction mode (decision 027): every statement on the
// pooled URL, wake-ups on the direct one. A database of its own: the pooler passes no search_path.
let database: { url: string; drop(): Promise<void> } | undefined;
if (withBouncer) {
  beforeAll(async () => {
    database = await createDatabase(server.adminUrl, 'bouncer');
  }, 60_000);
  afterAll(async () => {
    await database?.drop();
  });
  describeStore(
    'postgres through PgBouncer (transaction mode)',
    onOne(
      () => database!.url,
      (url) => ({ connectionString: bouncer!.pooled(url), directConnectionString: url, maxConnections: 3 }),
    ),
  );
}
