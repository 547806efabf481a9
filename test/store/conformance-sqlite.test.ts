import { sqliteStore } from '../../adapters/sqlite/index.js';
import { tempDir } from '../helpers/http.js';
import { describeStore } from './conformance.js';

// better-sqlite3 is synchronous: a second handle on the file inside this process would sit in
// SQLite's busy wait while the first, blocked with it, could never commit. So the "other
// process" here is the same store: the races still interleave on its queue. Separate processes
// on one file are covered by test/engine/durability.test.ts.
describeStore('sqlite', async () => {
  const dir = tempDir('iw-store-');
  const store = sqliteStore({ filename: dir.file('webhooks.db') });
  return {
    store,
    sibling: async () => store,
    async close() {
      await store.close();
      dir.cleanup();
    },
  };
});
