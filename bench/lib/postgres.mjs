import pg from 'pg';

/** The server the bench uses: local, trust auth. BENCH_PG_URL overrides (still only 127.0.0.1 / ::1). */
export const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** True when a PostgreSQL server answers at ADMIN_URL within two seconds. */
export async function postgresAvailable() {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The connection string of database `name` on the same server. */
export function databaseUrl(name) {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(fn) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const safe = (name) => {
  if (!/^[a-z0-9_]{1,60}$/.test(name)) throw new TypeError(`bad database name ${name}`);
  return name;
};

/** Creates an empty database and returns its connection string. */
export async function createDatabase(name) {
  await admin((c) => c.query(`create database ${safe(name)}`));
  return databaseUrl(name);
}

/** Drops a database, ending any session still connected to it. */
export async function dropDatabase(name) {
  await admin((c) => c.query(`drop database if exists ${safe(name)} with (force)`));
}

/** Drops every database whose name starts with `prefix` (a crashed scenario's leftovers). */
export async function dropDatabasesLike(prefix) {
  const { rows } = await admin((c) => c.query('select datname from pg_database where datname like $1', [`${safe(prefix)}%`]));
  for (const { datname } of rows) await dropDatabase(datname);
}
