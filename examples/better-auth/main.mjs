// better-auth + Hono + identity-webhooks, on one SQLite file, with a receiver that verifies.
// Run: npm run example:better-auth   (builds, then runs this file; exits by itself)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import Database from 'better-sqlite3';
import { Hono } from 'hono';
import { generateSigningKey } from 'identity-webhooks';
import { webhooks, webhooksOf } from 'identity-webhooks/better-auth';
import { createReceiver, createVerifier } from 'identity-webhooks/receiver';

const dir = mkdtempSync(join(tmpdir(), 'identity-webhooks-better-auth-'));
const log = (...args) => console.log(...args);

/** Starts a Hono app on 127.0.0.1 (a free port) and returns its address. */
function listen(app) {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
      resolve({ url: `http://127.0.0.1:${info.port}`, close: () => new Promise((r) => (server.closeAllConnections?.(), server.close(r))) }),
    );
  });
}

// --- 1. The identity server: Hono, better-auth, and the webhooks plugin. --------------------------
let auth;
const app = new Hono();
app.on(['GET', 'POST', 'PATCH', 'DELETE'], '/api/auth/*', (c) => auth.handler(c.req.raw));
const site = await listen(app);

const database = new Database(join(dir, 'auth.db')); // better-auth's database: the plugin keeps its iw_* tables in it
// WAL: readers never wait for the writer, and a commit is one append. The plugin leaves your
// handle's settings as they are, so this is yours to choose.
database.pragma('journal_mode = WAL');
const options = {
  database,
  baseURL: site.url,
  secret: 'example-secret-at-least-32-characters-long!',
  emailAndPassword: { enabled: true },
  plugins: [
    webhooks({
      keys: [await generateSigningKey()], // in production: a key you keep (see docs/security.md)
      allowPrivateNetworks: true, // the receiver below is on 127.0.0.1: development only
      environment: () => 'default', // every user's events go to the 'default' environment
      manage: ({ user }) => (user.email === 'admin@example.com' ? 'default' : null), // who may open the dashboard
    }),
  ],
};
// better-auth's own tables (in production: `npx @better-auth/cli migrate` ahead of deploy).
await (await getMigrations(options)).runMigrations();
auth = betterAuth(options);
const hooks = await webhooksOf(auth); // the engine: started, its tables migrated
log(`auth server on ${site.url}/api/auth`);
log(`  JWKS       ${site.url}/api/auth/webhooks/.well-known/jwks`);
log(`  API        ${site.url}/api/auth/webhooks/api/v1/webhooks (a session manage() accepts)`);
log(`  dashboard  ${site.url}/api/auth/webhooks/dashboard (the same)`);

// --- 2. A receiver, as an account holder runs it: verifies each token against the JWKS. ------
const issuer = `${site.url}/api/auth/webhooks`;
let done;
const delivered = new Promise((resolve) => (done = resolve));
const receiverApp = new Hono();
const receive = createReceiver({
  verifier: createVerifier({ issuer }),
  on: {
    'user.created': (event, { webhookId }) => {
      log(`receiver: verified ${event.type} from ${event.source} (webhook-id ${webhookId})`);
      log(`  data.user = ${JSON.stringify(event.data.user)}`);
      done();
    },
  },
});
receiverApp.post('/webhooks', (c) => receive(c.req.raw));
const receiver = await listen(receiverApp);

await hooks.webhooks.create({ name: 'CRM sync', endpoint: `${receiver.url}/webhooks`, eventTypes: ['user.created'] });
log(`webhook "CRM sync" → ${receiver.url}/webhooks (user.created)`);

// --- 3. Someone signs up. The user row and its event commit in one transaction. ----------------
const res = await fetch(`${site.url}/api/auth/sign-up/email`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', origin: site.url },
  body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery staple', name: 'Ada Lovelace' }),
});
log(`sign-up: ${res.status} ${JSON.stringify((await res.json()).user?.email)}`);

const timeout = setTimeout(() => {
  console.error('no delivery within 10 s');
  process.exit(1);
}, 10_000);
await delivered;
clearTimeout(timeout);

await hooks.close();
await receiver.close();
await site.close();
database.close();
rmSync(dir, { recursive: true, force: true });
log('done');
