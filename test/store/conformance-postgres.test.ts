import { afterAll, beforeAll } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { pgbouncerAvailable, startPgBouncer, type TestPgBouncer } from '../helpers/pgbouncer.js';
import { createDatabase, createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
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

// Each test gets a fresh schema of this file's database; siblings are separate pools, i.e. real
// concurrent connections, as separate processes would have.
describeStore('postgres', async () => {
  const schema = await createSchema(server.url);
  const stores: TestableStore[] = [];
  const open = () => {
    const store = postgresStore({ connectionString: schema.url, maxConnections: 3 });
    stores.push(store);
    return store;
  };
  return {
    store: open(),
    sibling: async () => open(),
    async close() {
      for (const s of stores) await s.close();
      await schema.drop();
    },
  };
});

// The same contract through PgBouncer in transaction mode (decision 027): every statement on the
// pooled URL, wake-ups on the direct one. A database per test: the pooler passes no search_path.
if (withBouncer)
  describeStore('postgres through PgBouncer (transaction mode)', async () => {
    const database = await createDatabase(server.adminUrl, 'bouncer');
    const stores: TestableStore[] = [];
    const open = () => {
      const store = postgresStore({
        connectionString: bouncer!.pooled(database.url),
        directConnectionString: database.url,
        maxConnections: 3,
      });
      stores.push(store);
      return store;
    };
    return {
      store: open(),
      sibling: async () => open(),
      async close() {
        for (const s of stores) await s.close();
        await database.drop();
      },
    };
  });
