import { afterAll, beforeAll } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
import { describeStore, type TestableStore } from './conformance.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await useTestPostgres('store');
});
afterAll(async () => {
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
