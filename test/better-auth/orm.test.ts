import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { prismaAdapter } from 'better-auth/adapters/prisma';
import { organization } from 'better-auth/plugins';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { webhooks, webhooksOf } from '../../src/better-auth/index.js';
import { ormBinding } from '../../src/better-auth/orm.js';
import type { EmitInput, Webhooks } from '../../src/index.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';
import { createDatabase, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
import { testPasswords } from './harness.js';
import { drizzleDdl } from './orm/ddl.js';
import * as pgSchema from './orm/drizzle-schema-pg.js';
import * as sqliteSchema from './orm/drizzle-schema-sqlite.js';

/**
 * better-auth on an ORM's adapter, with the real ORMs: drizzleAdapter on node-postgres and on
 * better-sqlite3, prismaAdapter (Prisma 7, its driver adapters) on PostgreSQL and SQLite. The
 * tables are the ones better-auth's CLI generates for each (snake_case for Drizzle, camelCase for
 * Prisma). Where the engine joins the ORM's transaction, a sign-up that fails after its user
 * insert leaves neither the user nor its event; where it cannot (Prisma on SQLite: its own
 * connection), the event is written after the commit and not at all on a rollback; Drizzle on
 * better-sqlite3 runs without transactions (`transaction: false`: better-sqlite3's cannot await),
 * so each write commits alone and its event right after it. The window is measured and printed.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(import.meta.dirname, 'orm');
const BASE_URL = 'http://127.0.0.1:3999';
const PASSWORD = 'correct horse battery staple';

type Setup = 'drizzle on node-postgres' | 'drizzle on better-sqlite3' | 'prisma on postgresql' | 'prisma on sqlite';

/** better-auth's instance as these tests use it (its full type depends on each setup's options). */
interface AnyAuth {
  api: any;
  $context: Promise<unknown>;
}
const make = (options: object): AnyAuth => betterAuth(options as Parameters<typeof betterAuth>[0]) as unknown as AnyAuth;

interface Host {
  auth: AnyAuth;
  hooks: Webhooks;
  /** Rows of a query on the database (the engine's tables and better-auth's). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

let server: TestPostgres;
const files = tempDir('iw-orm-');
const cleanups: Array<() => Promise<unknown> | unknown> = [files.cleanup];

beforeAll(async () => {
  server = await useTestPostgres('better_auth_orm');
}, 120_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await server?.close();
});

/** The Prisma client for a provider, generated once per checkout (offline: no engine download). */
async function prismaClient(provider: 'pg' | 'sqlite'): Promise<new (options: object) => Record<string, unknown>> {
  const source = readFileSync(join(FIXTURES, `prisma-${provider}.prisma`), 'utf8');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  // Under node_modules so that the generated client resolves @prisma/client (this tree's).
  const dir = join(ROOT, 'node_modules/.cache/identity-webhooks-test', `prisma-${provider}-${hash}`);
  if (!existsSync(join(dir, 'client/index.js'))) {
    mkdirSync(dir, { recursive: true });
    cpSync(join(FIXTURES, `prisma-${provider}.prisma`), join(dir, 'schema.prisma'));
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules/prisma/build/index.js'), 'generate', '--schema', join(dir, 'schema.prisma')],
      {
        cwd: dir,
        timeout: 120_000,
        // Prisma fetches a schema engine it does not use for generate: pointing at any file skips the download.
        env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false', CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
      },
    );
  }
  const loaded = (await import(join(dir, 'client/index.js'))) as { default?: { PrismaClient: never }; PrismaClient?: never };
  return (loaded.PrismaClient ?? loaded.default!.PrismaClient) as never;
}

async function start(setup: Setup, extra: Partial<Parameters<typeof betterAuth>[0]> = {}): Promise<Host> {
  const key = await testKey();
  const common = {
    baseURL: BASE_URL,
    secret: 'a-test-secret-of-enough-length-0123456789',
    emailAndPassword: { enabled: true, password: testPasswords },
    telemetry: { enabled: false },
    logger: { disabled: true },
    ...extra,
  };
  const plugins = (orm: { client: object; database?: unknown }) => [organization(), webhooks({ keys: [key], orm })];
  let auth: AnyAuth;
  let rows: Host['rows'];
  let closeDb: () => Promise<unknown>;
  if (setup === 'drizzle on node-postgres' || setup === 'prisma on postgresql') {
    const created = await createDatabase(server.adminUrl, 'orm');
    const pool = new pg.Pool({ connectionString: created.url, options: '-c timezone=UTC' });
    // The teardown drops the database with (force): a client still ending then hears its backend terminated.
    pool.on('error', () => {});
    rows = async (sql) => (await pool.query(sql)).rows;
    if (setup === 'drizzle on node-postgres') {
      await pool.query(drizzleDdl(pgSchema, 'postgres'));
      const db = drizzlePg({ client: pool, schema: pgSchema });
      auth = make({
        ...common,
        database: drizzleAdapter(db, { provider: 'pg', schema: pgSchema, transaction: true }),
        plugins: plugins({ client: db }),
      });
      closeDb = async () => {
        await pool.end();
        await created.drop();
      };
    } else {
      await pool.query(readFileSync(join(FIXTURES, 'prisma-pg.sql'), 'utf8'));
      const PrismaClient = await prismaClient('pg');
      const prisma = new PrismaClient({ adapter: new PrismaPg(pool) }) as { $disconnect(): Promise<void> };
      auth = make({
        ...common,
        database: prismaAdapter(prisma, { provider: 'postgresql', transaction: true }),
        plugins: plugins({ client: prisma, database: pool }),
      });
      closeDb = async () => {
        await prisma.$disconnect();
        await pool.end();
        await created.drop();
      };
    }
  } else {
    const file = files.file(`${setup.replace(/\W/g, '-')}-${Math.random().toString(36).slice(2)}.db`);
    const sqlite = new Database(file);
    sqlite.pragma('journal_mode = WAL');
    rows = async (sql) => sqlite.prepare(sql).all() as Record<string, unknown>[];
    if (setup === 'drizzle on better-sqlite3') {
      sqlite.exec(drizzleDdl(sqliteSchema, 'sqlite'));
      const db = drizzleSqlite({ client: sqlite, schema: sqliteSchema });
      auth = make({
        ...common,
        database: drizzleAdapter(db, { provider: 'sqlite', schema: sqliteSchema }),
        plugins: plugins({ client: db }),
      });
      closeDb = async () => sqlite.close();
    } else {
      sqlite.exec(readFileSync(join(FIXTURES, 'prisma-sqlite.sql'), 'utf8'));
      const PrismaClient = await prismaClient('sqlite');
      const prisma = new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${file}` }) }) as { $disconnect(): Promise<void> };
      auth = make({
        ...common,
        database: prismaAdapter(prisma, { provider: 'sqlite', transaction: true }),
        plugins: plugins({ client: prisma, database: file }),
      });
      closeDb = async () => {
        await prisma.$disconnect();
        sqlite.close();
      };
    }
  }
  const hooks = await webhooksOf(auth);
  const host = {
    auth,
    hooks,
    rows,
    async close() {
      await hooks.close();
      await closeDb();
    },
  };
  cleanups.push(() => host.close());
  return host;
}

const events = async (host: Host) =>
  (await host.rows('select type, data from iw_events order by id')).map((r) => ({
    type: String(r.type),
    data: JSON.parse(String(r.data)) as Record<string, Record<string, unknown>>,
  }));

const SETUPS: Setup[] = ['drizzle on node-postgres', 'drizzle on better-sqlite3', 'prisma on postgresql', 'prisma on sqlite'];

describe.each(SETUPS)('better-auth with %s and the plugin', (setup) => {
  test('sign-up, profile update, organization: each write its events, in the ORM database', async () => {
    const host = await start(setup);
    const { user } = await host.auth.api.signUpEmail({ body: { email: 'ada@example.com', password: PASSWORD, name: 'Ada Lovelace' } });
    const ctx = (await host.auth.$context) as unknown as {
      internalAdapter: { updateUser(id: string, data: object): Promise<unknown> };
    };
    await ctx.internalAdapter.updateUser(user.id, { name: 'Ada King' });
    const api = host.auth.api as unknown as { createOrganization(args: object): Promise<{ id: string }> };
    const org = await api.createOrganization({ body: { name: 'Acme', slug: 'acme', userId: user.id } });
    const seen = await events(host);
    expect(seen.map((e) => e.type)).toEqual(['user.created', 'user.updated', 'organization.created', 'membership.created', 'user.updated']);
    expect(seen[0]!.data.user!.id).toBe(user.id);
    expect(seen[1]!.data.user).toMatchObject({ first_name: 'Ada', last_name: 'King' });
    expect(seen[4]!.data.user!.organizations).toEqual([{ code: org.id, roles: ['owner'] }]);
  });

  test('a sign-up that fails after its user insert: an event exactly when the user row stayed', async () => {
    const host = await start(setup, {
      databaseHooks: {
        account: {
          create: {
            before: async () => {
              throw new Error('the account is refused');
            },
          },
        },
      },
    });
    await expect(host.auth.api.signUpEmail({ body: { email: 'bob@example.com', password: PASSWORD, name: 'Bob' } })).rejects.toThrow();
    const users = await host.rows(`select id from "user"`);
    const created = (await events(host)).filter((e) => e.type === 'user.created');
    // Drizzle on better-sqlite3 has no transaction: the user row stays, and so does its event.
    const transactional = setup !== 'drizzle on better-sqlite3';
    expect(users.length).toBe(transactional ? 0 : 1);
    expect(created.map((e) => e.data.user!.id)).toEqual(users.map((u) => u.id));
  });

  test.runIf(setup.endsWith('postgresql') || setup.endsWith('node-postgres'))(
    "the engine writes on the ORM transaction's own connection: an emit of the host's inside it rolls back with it",
    async () => {
      let hooks: Webhooks | undefined;
      const host = await start(setup, {
        databaseHooks: {
          account: {
            create: {
              before: async () => {
                await hooks!.emit({ type: 'user.updated', source: 'api', data: userData({ id: 'kp_in_hook' }) });
                // Still uncommitted: another connection does not see it.
                expect(await host.rows(`select id from iw_events where data like '%kp_in_hook%'`)).toEqual([]);
                throw new Error('the account is refused');
              },
            },
          },
        },
      });
      hooks = host.hooks;
      await expect(host.auth.api.signUpEmail({ body: { email: 'cy@example.com', password: PASSWORD, name: 'Cy' } })).rejects.toThrow();
      expect(await host.rows(`select id from "user"`)).toEqual([]);
      expect(await events(host)).toEqual([]);
    },
  );

  test('how long an event trails its row (none where the transaction is joined)', async () => {
    const host = await start(setup);
    const { user } = await host.auth.api.signUpEmail({ body: { email: 'eve@example.com', password: PASSWORD, name: 'Eve' } });
    const ctx = (await host.auth.$context) as unknown as { internalAdapter: { updateUser(id: string, data: object): Promise<unknown> } };
    // The emit's own time is the window between the row's commit and the event's, where the
    // emit runs after the write: it is timed on the engine's emit as the plugin calls it.
    const durations: number[] = [];
    const emit = host.hooks.emit;
    host.hooks.emit = ((event: EmitInput, options?: object) => {
      const began = performance.now();
      return emit(event, options).finally(() => durations.push(performance.now() - began));
    }) as Webhooks['emit'];
    for (let i = 0; i < 200; i++) await ctx.internalAdapter.updateUser(user.id, { name: `Eve ${i}` });
    expect(durations.length).toBe(200);
    expect((await events(host)).filter((e) => e.type === 'user.updated').length).toBe(200);
    durations.sort((a, b) => a - b);
    const at = (p: number) => durations[Math.min(durations.length - 1, Math.floor(p * durations.length))]!.toFixed(2);
    console.info(`[orm] ${setup}: emit of user.updated, 200 updates: median ${at(0.5)} ms, p99 ${at(0.99)} ms`);
  }, 60_000);
});

test('an ORM adapter without orm: { client }, orm with a raw database, an unknown orm option: clear errors', async () => {
  const key = await testKey();
  const sqlite = new Database(':memory:');
  cleanups.push(() => sqlite.close());
  const db = drizzleSqlite({ client: sqlite, schema: sqliteSchema });
  const noOrm = make({
    baseURL: BASE_URL,
    logger: { disabled: true },
    database: drizzleAdapter(db, { provider: 'sqlite', schema: sqliteSchema }),
    plugins: [webhooks({ keys: [key] })],
  });
  await expect(noOrm.$context).rejects.toThrow(/webhooks\(\{ orm: \{ client \} \}\)/);
  const rawWithOrm = make({
    baseURL: BASE_URL,
    logger: { disabled: true },
    database: sqlite,
    plugins: [webhooks({ keys: [key], orm: { client: db } })],
  });
  await expect(rawWithOrm.$context).rejects.toThrow(/orm is for a better-auth whose database is drizzleAdapter/);
  expect(() => webhooks({ keys: [key], orm: { client: db, databse: sqlite } as never })).toThrow(/orm\.databse.*orm\.database/);
  // Prisma: its SQLite file as a path or Prisma's file: URL; another database's URL is refused.
  const prismaLike = { $transaction: async () => {}, $queryRawUnsafe: async () => [] };
  expect(() => ormBinding({ client: prismaLike, database: 'postgresql://127.0.0.1/app' })).toThrow(/pass the pg Pool you gave PrismaPg/);
  expect(() => ormBinding({ client: prismaLike })).toThrow(/set orm\.database/);
  const viaUrl = ormBinding({ client: prismaLike, database: `file:${files.file('prisma-url.db')}` });
  await viaUrl.store.migrate(Date.now());
  await viaUrl.store.close();
  expect(existsSync(files.file('prisma-url.db'))).toBe(true);
});
