import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { closedPort } from './http.js';
import { adminQuery } from './postgres.js';

/**
 * A PgBouncer of the tests' own, in transaction mode (what Supabase's and Neon's pooled URLs
 * are): Debian's `pgbouncer` on a free port of 127.0.0.1, every database name passed through to
 * the test server (`* =`), trust auth, config and log in a temp dir. Started by a file's
 * `beforeAll`, stopped by its teardown. Without the binary the PgBouncer tests say so loudly and
 * are skipped, except under CI=true, where that is a failure (`.ci/run` installs it).
 */
export const PGBOUNCER = [process.env.PGBOUNCER_PATH, '/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(
  (p): p is string => typeof p === 'string' && existsSync(p),
);

/** True when PgBouncer can run; otherwise warns (and under CI=true adds a failing test). */
export function pgbouncerAvailable(file: string): boolean {
  if (PGBOUNCER) return true;
  const message = `\n*** ${file}: NO PGBOUNCER FOUND (looked at $PGBOUNCER_PATH, /usr/sbin/pgbouncer): the PgBouncer tests DID NOT RUN. Install it: apt-get install -y pgbouncer ***\n`;
  console.warn(message);
  if (process.env.CI === 'true') test('PgBouncer is installed (required under CI=true)', () => expect.fail(message));
  return false;
}

export interface TestPgBouncer {
  port: number;
  /** `url` (a database on the test server) as reached through the pooler. */
  pooled(url: string): string;
  /** The pooler's log so far (for a failing test's message). */
  log(): string;
  close(): Promise<void>;
}

/** Starts PgBouncer in front of the server of `serverUrl` (any database of it); resolves once it answers. */
export async function startPgBouncer(serverUrl: string, options: { poolSize?: number } = {}): Promise<TestPgBouncer> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const server = new URL(serverUrl);
  const port = await closedPort();
  // Not mkdtemp: PgBouncer refuses to run as root, so as root it drops to another user, who must
  // read the config and write the log.
  const dir = join(tmpdir(), `iw-pgbouncer-${randomBytes(4).toString('hex')}`);
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
  const files: Array<[string, string]> = [
    [
      ini,
      [
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
        `default_pool_size = ${options.poolSize ?? 20}`,
        `logfile = ${join(dir, 'pgbouncer.log')}`,
        'log_connections = 0',
        'log_disconnections = 0',
        '',
      ].join('\n'),
    ],
    [join(dir, 'userlist.txt'), `"${user}" ""\n`],
  ];
  for (const [path, text] of files) writeFileSync(path, text, { mode: 0o644 });
  const args = userInfo().uid === 0 ? ['-u', runAs(), ini] : [ini];
  const child: ChildProcess = spawn(PGBOUNCER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => void stderr.push(d.toString()));
  let exited = false;
  child.once('exit', () => (exited = true));
  const log = () => {
    const path = join(dir, 'pgbouncer.log');
    return (existsSync(path) ? readFileSync(path, 'utf8') : '') + stderr.join('');
  };
  const pooled = (url: string) => {
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
    try {
      await adminQuery(pooled(serverUrl), 'select 1');
      break;
    } catch (error) {
      if (exited || Date.now() > deadline) {
        const text = log();
        await close();
        throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${text.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  console.info(
    `[postgres tests] PgBouncer ${version()} (transaction mode) at 127.0.0.1:${port} -> ${server.hostname}:${server.port || 5432}`,
  );
  return { port, pooled, log, close };
}

function runAs(): string {
  for (const name of ['postgres', 'nobody']) {
    try {
      execFileSync('id', ['-u', name], { stdio: 'ignore' });
      return name;
    } catch {}
  }
  return 'nobody';
}

function version(): string {
  try {
    return execFileSync(PGBOUNCER!, ['--version'], { encoding: 'utf8' })
      .split('\n')[0]!
      .replace(/^PgBouncer /, '');
  } catch {
    return '';
  }
}
