import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BASELINE, MIGRATIONS } from '../../adapters/kysely/migrations.js';
import { migratePostgres, postgresStore } from '../../adapters/postgres/index.js';
import { createWebhooks, type LogMeta, ManualClock, type Webhooks, WebhooksError } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey } from '../helpers/fixtures.js';
import { closedPort } from '../helpers/http.js';
import { type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * What a host meets in its first hour, said where it looks: a warning at start() when nothing
 * authorizes the management API, and a start() that fails on the store with the store's own
 * reason in the top-level message (which migrations are missing and what to run; a refused
 * connection), not only "store failed while migrating".
 */
const cleanups = useCleanups();
let server: TestPostgres;

beforeAll(async () => {
  server = await useTestPostgres('first_hour');
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** A logger that keeps what it is given. */
function recordingLogger() {
  const warned: Array<{ message: string; meta: LogMeta | undefined }> = [];
  const errors: string[] = [];
  return {
    warned,
    errors,
    logger: { warn: (message: string, meta?: LogMeta) => void warned.push({ message, meta }), error: (m: string) => void errors.push(m) },
  };
}

/** An engine on `store` with a recording logger, closed after the test. */
async function engineOn(store: ReturnType<typeof postgresStore>): Promise<Webhooks> {
  const hooks = createWebhooks({
    store,
    keys: [await testKey()],
    issuer: 'https://auth.example.com',
    clock: new ManualClock(Date.parse('2026-01-01T00:00:00.000Z')),
    logger: recordingLogger().logger,
    authorize: () => ({ environment: 'default' }),
  });
  cleanups.push(() => hooks.close());
  return hooks;
}

/** The ERR_STORE that start() rejects with (fails the test if it resolves or rejects otherwise). */
async function startFailure(hooks: Webhooks): Promise<WebhooksError> {
  const error = await hooks.start().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhooksError);
  expect((error as WebhooksError).code).toBe('ERR_STORE');
  return error as WebhooksError;
}

describe('no authorize hook', () => {
  test('start() warns, with the code ERR_NO_AUTHORIZE, that the management API answers 403; and it does', async () => {
    const { warned, logger } = recordingLogger();
    const engine = await makeEngine({ logger });
    cleanups.push(() => engine.close());
    await engine.hooks.start();
    const ours = warned.filter((w) => w.meta?.errorKind === 'ERR_NO_AUTHORIZE');
    expect(ours).toHaveLength(1);
    expect(ours[0]!.message).toMatch(
      /no authorize hook was given: every management API route answers 403 until createWebhooks\(\{ authorize \}\)/,
    );
    // What the warning says is what happens.
    const response = await engine.hooks.handler(new Request('https://auth.example.com/api/v1/webhooks'));
    expect(response.status).toBe(403);
  });

  test('with an authorize hook, start() gives no such warning', async () => {
    const { warned, logger } = recordingLogger();
    const engine = await makeEngine({ logger, authorize: () => ({ environment: 'default' }) });
    cleanups.push(() => engine.close());
    await engine.hooks.start();
    expect(warned.filter((w) => w.meta?.errorKind === 'ERR_NO_AUTHORIZE')).toEqual([]);
  });
});

describe('start() on a PostgreSQL store that cannot be used', () => {
  test('autoMigrate: false on an empty database: the message lists the missing migrations and says to run migratePostgres', async () => {
    const hooks = await engineOn(postgresStore({ connectionString: server.url, autoMigrate: false, notifications: false }));
    const error = await startFailure(hooks);
    // The whole advice, then what is missing.
    expect(error.message).toBe(
      "store failed while migrating: identity-webhooks: the database schema is not this version's and autoMigrate is false; " +
        'run migratePostgres({ connectionString }) from "identity-webhooks/postgres" ahead of deploy (missing: 25 baseline)',
    );
    // The advice works: once migrated ahead of deploy, the same kind of store starts.
    expect(await migratePostgres({ connectionString: server.url })).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
    const after = await engineOn(postgresStore({ connectionString: server.url, autoMigrate: false, notifications: false }));
    await after.start();
  });

  test('a refused connection (nothing listens on the port): the message names the refusal and the address', async () => {
    const port = await closedPort();
    const hooks = await engineOn(
      postgresStore({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, notifications: false }),
    );
    const error = await startFailure(hooks);
    expect(error.message).toMatch(new RegExp(`^store failed while migrating: .*ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
  });
});
