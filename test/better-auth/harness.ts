import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { type BetterAuthOptions, betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNextJsHandler } from 'better-auth/next-js';
import { toNodeHandler } from 'better-auth/node';
import { admin, organization } from 'better-auth/plugins';
import Database from 'better-sqlite3';
import express from 'express';
import { Hono } from 'hono';
import pg from 'pg';
import { type BetterAuthWebhooksOptions, webhooks, webhooksOf } from '../../src/better-auth/index.js';
import type { Webhooks } from '../../src/index.js';
import { createReceiver, createVerifier } from '../../src/receiver/index.js';
import { testKey } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';
import { useTestPostgres } from '../helpers/postgres.js';

export type Dialect = 'sqlite' | 'postgres';

/** A received, verified webhook. */
export interface Received {
  type: string;
  source: string;
  data: any;
  webhookId: string;
}

/** A real HTTP listener on 127.0.0.1 whose handler is set after it listens (the port is the base URL). */
async function listen() {
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set(next: http.RequestListener) {
      handler = next;
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** The real receiver: identity-webhooks/receiver's verifier against the auth server's JWKS over HTTP. */
export async function startVerifyingReceiver(issuer: string) {
  const received: Received[] = [];
  let requests = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const receive = createReceiver({
    verifier: createVerifier({ issuer }),
    on: {},
    onError: (error) => console.error('receiver', error),
  });
  const site = await listen();
  const verifier = createVerifier({ issuer });
  site.set(async (req, res) => {
    requests++;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const request = new Request(`${site.url}${req.url}`, { method: 'POST', headers: req.headers as Record<string, string>, body });
    const response = await receive(request);
    if (response.status === 200) {
      const event = (await verifier.verify(body)) as unknown as { type: string; source: string; data: unknown };
      received.push({ type: event.type, source: event.source, data: event.data, webhookId: String(req.headers['webhook-id']) });
      for (const w of [...waiters])
        if (received.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
    }
    res.writeHead(response.status).end(await response.text());
  });
  return {
    url: `${site.url}/hooks`,
    received,
    /** Every request that arrived, verified or not (a second delivery of one event counts too). */
    get requests() {
      return requests;
    },
    waitFor(n: number, timeoutMs = 20_000): Promise<void> {
      if (received.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${n} events`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) });
      });
    },
    close: site.close,
  };
}

/**
 * Passwords for the test servers: a salted SHA-256 (better-auth's documented
 * `emailAndPassword.password` option) instead of its scrypt, which is costly by design and was a
 * large share of these files' CPU. No test here is about password hashing; the programs of the
 * docs test (README.md, docs/better-auth.md) sign up with better-auth's default.
 */
export const testPasswords = {
  async hash(password: string): Promise<string> {
    const salt = randomBytes(16).toString('hex');
    return `${salt}:${createHash('sha256').update(`${salt}:${password}`).digest('hex')}`;
  },
  async verify({ hash, password }: { hash: string; password: string }): Promise<boolean> {
    const [salt, digest] = hash.split(':');
    const expected = Buffer.from(digest ?? '', 'hex');
    const actual = createHash('sha256').update(`${salt}:${password}`).digest();
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  },
};

/** One better-auth server (email + password, admin, organization) with the plugin, on a real database, over HTTP. */
/**
 * How better-auth is mounted, as its guides do it: `node` (toNodeHandler on node:http), `express`
 * (`app.all('/api/auth/{*any}', toNodeHandler(auth))`), `hono` (`app.on(['GET', 'POST'],
 * '/api/auth/*', …)`: nothing else reaches it), `next` (an App Router route exporting only
 * `{ GET, POST } = toNextJsHandler(auth)`: 405 for the rest), `handler` (auth.handler itself).
 */
export type Mount = 'node' | 'express' | 'hono' | 'next' | 'handler';

function mounted(auth: { handler: (request: Request) => Promise<Response> }, mount: Mount): http.RequestListener {
  if (mount === 'node') return toNodeHandler(auth);
  if (mount === 'express') {
    const app = express();
    app.all('/api/auth/{*any}', toNodeHandler(auth));
    return app;
  }
  if (mount === 'hono') {
    const app = new Hono();
    app.on(['GET', 'POST'], '/api/auth/*', (c) => auth.handler(c.req.raw));
    return getRequestListener(app.fetch);
  }
  if (mount === 'next') {
    const route: Partial<Record<string, (request: Request) => Promise<Response>>> = {};
    const { GET, POST } = toNextJsHandler(auth);
    Object.assign(route, { GET, POST });
    return getRequestListener((request) => {
      const method = route[request.method];
      if (!new URL(request.url).pathname.startsWith('/api/auth/')) return new Response('Not Found', { status: 404 });
      return method ? method(request) : new Response(null, { status: 405, headers: { allow: 'GET, POST' } });
    });
  }
  return getRequestListener((request) => auth.handler(request));
}

export async function startAuth(
  dialect: Dialect,
  plugin: Partial<BetterAuthWebhooksOptions> = {},
  label = 'bauth',
  extra: Partial<BetterAuthOptions> = {},
  mount: Mount = 'node',
) {
  const site = await listen();
  const cleanups: Array<() => Promise<void> | void> = [site.close];
  let database: BetterAuthOptions['database'];
  let sql: (text: string) => Promise<unknown[]>;
  if (dialect === 'sqlite') {
    const dir = tempDir('iw-bauth-');
    cleanups.push(() => dir.cleanup());
    const db = new Database(dir.file('auth.db'));
    db.pragma('journal_mode = WAL'); // the host's choice, as docs/better-auth.md advises
    cleanups.push(() => void db.close());
    database = db;
    sql = async (text) => (/^\s*select/i.test(text) ? db.prepare(text).all() : (db.exec(text), []));
  } else {
    const server = await useTestPostgres(label);
    cleanups.push(() => server.close());
    const pool = new pg.Pool({ connectionString: server.url, max: 20 });
    // Dropping the test database ends the connections pool.end() has not closed yet.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    cleanups.push(() => pool.end());
    database = pool;
    sql = async (text) => (await pool.query(text)).rows;
  }
  const errors: string[] = [];
  const options = {
    database,
    baseURL: site.url,
    secret: 'a-test-secret-that-is-at-least-32-characters-long',
    emailAndPassword: { enabled: true, password: testPasswords },
    user: { deleteUser: { enabled: true } },
    logger: { disabled: true },
    plugins: [
      admin(),
      organization(),
      webhooks({
        keys: [await testKey()],
        allowPrivateNetworks: true,
        manage: ({ user }) => ((user as { role?: string }).role === 'admin' ? 'default' : null),
        logger: { warn: () => {}, error: (message, meta) => errors.push(`${message} ${JSON.stringify(meta ?? {})}`) },
        delivery: { pollIntervalMs: 200 },
        ...plugin,
      }),
    ],
    ...extra,
  } satisfies BetterAuthOptions;
  // better-auth's own tables first, before the engine starts working on the same database.
  const { runMigrations } = await getMigrations(options);
  await runMigrations();
  const auth = betterAuth(options);
  const hooks: Webhooks = await webhooksOf(auth);
  cleanups.push(() => hooks.close());
  site.set(mounted(auth, mount));
  const base = `${site.url}/api/auth`;

  /** A browser: one cookie jar, same-origin requests to the auth server. */
  const client = () => {
    const jar = new Map<string, string>();
    /** `origin: ''` sends none; `raw` is sent as it is, with `headers` (a form's content type, say). */
    const call = async (
      path: string,
      init: { method?: string; body?: unknown; origin?: string; raw?: string; headers?: Record<string, string> } = {},
    ) => {
      const headers: Record<string, string> = init.origin === '' ? {} : { origin: init.origin ?? site.url };
      if (init.body !== undefined) headers['content-type'] = 'application/json';
      Object.assign(headers, init.headers);
      if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const response = await fetch(`${base}${path}`, {
        method: init.method ?? (init.body === undefined && init.raw === undefined ? 'GET' : 'POST'),
        headers,
        body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
        redirect: 'manual',
      });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const eq = pair!.indexOf('=');
        jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      const text = await response.text();
      let json: any = null;
      try {
        json = JSON.parse(text);
      } catch {}
      return { status: response.status, json, text, headers: response.headers };
    };
    return { call };
  };

  return {
    auth,
    hooks,
    base,
    origin: site.url,
    issuer: `${base}/webhooks`,
    errors,
    sql,
    client,
    async close() {
      for (const c of cleanups.reverse()) await c();
    },
  };
}
