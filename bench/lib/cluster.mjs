// A throwaway PostgreSQL cluster for the benches that stop and start their database (soak.mjs,
// outage.mjs): initdb in a temp dir, on a free port of 127.0.0.1 (never 5432: the machine's
// server is never touched), started as the postgres user when run as root. `remove()` stops it if
// it is up and deletes its directory; call it on exit.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const root = userInfo().uid === 0;
const asPostgres = (cmd, argv) => (root ? ['runuser', ['-u', 'postgres', '--', cmd, ...argv]] : [cmd, argv]);
const bin = (name) => {
  for (const dir of [process.env.PG_BIN, '/usr/lib/postgresql/15/bin', '/usr/local/bin', '/usr/bin'].filter(Boolean)) {
    try {
      execFileSync(join(dir, name), ['--version'], { stdio: 'ignore' });
      return join(dir, name);
    } catch {}
  }
  return name;
};
const run = (cmd, argv) => {
  const [c, a] = asPostgres(cmd, argv);
  const r = spawnSync(c, a, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
};
const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Makes and starts a cluster (`prefix` names its temp dir; `flags` are added to the server's). */
export async function startThrowawayCluster({ prefix, flags = '' }) {
  const dir = join(tmpdir(), `${prefix}-${randomBytes(4).toString('hex')}`);
  const data = join(dir, 'data');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  if (root) {
    mkdirSync(data, { mode: 0o700 });
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(data, uid, gid);
  }
  const port = await freePort();
  if (port === 5432) throw new Error('refusing port 5432');
  const pgCtl = bin('pg_ctl');
  run(bin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const serverFlags = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories='' -c max_connections=100 ${flags}`.trim();
  let up = false;
  const cluster = {
    dir,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    log: join(dir, 'postgres.log'),
    start() {
      run(pgCtl, ['-D', data, '-l', cluster.log, '-o', serverFlags, '-w', '-t', '60', 'start']);
      up = true;
    },
    /** pg_ctl stop -m fast. */
    stop() {
      run(pgCtl, ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      up = false;
    },
    remove() {
      if (up) {
        try {
          cluster.stop();
        } catch {}
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
