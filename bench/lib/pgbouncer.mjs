// A PgBouncer of the bench's own, in transaction mode (what Supabase's and Neon's pooled URLs
// are), in front of the bench's PostgreSQL: Debian's `pgbouncer` on a free port of 127.0.0.1,
// every database name passed through (`* =`), trust auth, config and log in a temp dir. The
// tests have the same helper in TypeScript (test/helpers/pgbouncer.ts).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The binary, or undefined when PgBouncer is not installed (the scenario then says so and skips). */
export const PGBOUNCER = [process.env.PGBOUNCER_PATH, '/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(
  (p) => typeof p === 'string' && existsSync(p),
);

/** Starts PgBouncer in front of `serverUrl`'s server; resolves once it answers. `pooled(url)` rewrites a database URL to go through it. */
export async function startPgBouncer(serverUrl, { poolSize = 20 } = {}) {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const server = new URL(serverUrl);
  const port = await freePort();
  // Not mkdtemp: PgBouncer refuses to run as root, so as root it drops to another user, who
  // must read the config and write the log.
  const dir = join(tmpdir(), `iw-bench-pgbouncer-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  const user = decodeURIComponent(server.username || 'postgres');
  const target = [
    `host=${server.hostname}`,
    `port=${server.port || 5432}`,
    `user=${user}`,
    ...(server.password ? [`password=${decodeURIComponent(server.password)}`] : []),
  ].join(' ');
  const ini = join(dir, 'pgbouncer.ini');
  const config = [
    '[databases]',
    `* = ${target}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    // After a failed server login PgBouncer waits this long before trying again (default 15 s):
    // a database restart of a few seconds would last up to that long through it.
    'server_login_retry = 1',
    'max_client_conn = 1000',
    `default_pool_size = ${poolSize}`,
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
  writeFileSync(ini, config, { mode: 0o644 });
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const args = userInfo().uid === 0 ? ['-u', runAs(), ini] : [ini];
  const child = spawn(PGBOUNCER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr = [];
  child.stderr.on('data', (d) => void stderr.push(d.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const log = () => {
    const path = join(dir, 'pgbouncer.log');
    return (existsSync(path) ? readFileSync(path, 'utf8') : '') + stderr.join('');
  };
  const pooled = (url) => {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    u.password = '';
    return u.toString();
  };
  const close = async () => {
    if (!exited) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: pooled(serverUrl) });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (exited || Date.now() > deadline) {
        const text = log();
        await close();
        throw new Error(`pgbouncer did not start: ${error.message}\n${text.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    port,
    pid: child.pid,
    version: version(),
    pooled,
    log,
    close,
    get closed() {
      return exited;
    },
  };
}

function runAs() {
  for (const name of ['postgres', 'nobody']) {
    try {
      execFileSync('id', ['-u', name], { stdio: 'ignore' });
      return name;
    } catch {}
  }
  return 'nobody';
}

function version() {
  try {
    return execFileSync(PGBOUNCER, ['--version'], { encoding: 'utf8' })
      .split('\n')[0]
      .replace(/^PgBouncer /, '');
  } catch {
    return '';
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
