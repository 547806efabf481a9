// An example identity host on SQLite delivering to a local receiver.
// Run: npm run demo               (builds, then runs this file; exits by itself)
//      npm run demo -- --serve    (the same, then keeps serving the dashboard to click through; Ctrl-C stops)

import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhooks, generateSigningKey, ManualClock } from 'identity-webhooks';
import { sqliteStore } from 'identity-webhooks/sqlite';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const dir = mkdtempSync(join(tmpdir(), 'identity-webhooks-demo-'));
const log = (...args) => console.log(...args);
const serving = process.argv.includes('--serve');

/** Serves a web-standard (Request) => Response handler on 127.0.0.1. */
async function serve(handler) {
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const response = await handler(
      new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers: req.headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
  };
}

// --- 1. The identity host: its own HTTP server, mounting hooks.handler for the JWKS and the ---
// dashboard its account holders use at /settings/webhooks.
const DASHBOARD = '/settings/webhooks';
let hooks;
const host = await serve((req) => {
  const { pathname } = new URL(req.url);
  return pathname === DASHBOARD || pathname.startsWith(`${DASHBOARD}/`) ? hooks.dashboard(req) : hooks.handler(req);
});
// Every caller manages the 'default' environment: fine for a demo on 127.0.0.1, never for a real
// host, whose hook reads its own session (cookie or token) and returns that account holder's environment.
const authorize = () => ({ environment: 'default' });
hooks = createWebhooks({
  store: sqliteStore({ filename: join(dir, 'webhooks.db') }),
  keys: [await generateSigningKey()],
  issuer: host.url, // receivers find the key set at {issuer}/.well-known/jwks
  allowPrivateNetworks: true, // the receiver below is on 127.0.0.1: development only
  backoff: { schedule: [500, 1000, 2000], jitter: 0 }, // short, so the demo shows next attempts within seconds
  notifier: { webhookDisabled: (info) => log(`  ✉ email to account holder: webhook "${info.webhook.name}" disabled (${info.lastError})`) },
  authorize,
});
await hooks.start();
log(`identity host on ${host.url}, JWKS at ${host.url}/.well-known/jwks`);
log(`dashboard at ${host.url}${DASHBOARD}${serving ? '' : ' (npm run demo -- --serve keeps it running)'}`);

// --- 2. An account holder's receiver: verifies every JWT against the host's JWKS and issuer. -----
const jwks = createRemoteJWKSet(new URL(`${host.url}/.well-known/jwks`));
let failuresLeft = 2; // the /flaky endpoint fails twice, then recovers
const seen = new Set();
const receiver = await serve(async (req) => {
  const token = await req.text();
  const id = req.headers.get('webhook-id');
  if (new URL(req.url).pathname === '/flaky' && failuresLeft-- > 0) {
    log(`  receiver /flaky: answering 503 to ${id}`);
    return new Response('busy', { status: 503 });
  }
  try {
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: host.url, algorithms: ['RS256'] });
    const dupe = seen.has(id);
    seen.add(id);
    log(
      `  receiver ${new URL(req.url).pathname}: verified ${payload.type} (kid ${protectedHeader.kid.slice(0, 8)}…, webhook-id ${id}${dupe ? ', duplicate' : ''})`,
    );
    if (payload.data.user?.email !== undefined)
      log(`    user ${payload.data.user.id}: ${payload.data.user.first_name} ${payload.data.user.last_name} <${payload.data.user.email}>`);
    return new Response('ok', { status: 200 });
  } catch (error) {
    log(`  receiver: rejected (${error.code ?? error.message})`);
    return new Response(JSON.stringify({ message: 'invalid token' }), { status: 400 });
  }
});

// --- 3. The host registers a webhook and emits identity events. -----------------------------
const crm = await hooks.webhooks.create({
  name: 'CRM sync',
  description: 'Pushes users to the CRM',
  endpoint: `${receiver.url}/crm`,
  eventTypes: ['user.created', 'user.updated'],
});
log(`\ncreated ${crm.id} -> ${crm.endpoint}`);
const user = {
  id: 'kp_9a1c',
  email: 'ada@example.com',
  first_name: 'Ada',
  last_name: 'Lovelace',
  phone: null,
  username: null,
  is_password_reset_requested: false,
  is_suspended: false,
  organizations: [{ code: 'org_acme', permissions: null, roles: null }],
};
const created = await hooks.emit({ type: 'user.created', source: 'admin', data: { user } });
log(`emitted ${created.type} ${created.id}`);
const updated = await hooks.emit({ type: 'user.updated', source: 'user', data: { user: { ...user, last_name: 'King' } } });
log(`emitted ${updated.type} ${updated.id}`);
await hooks.drain();

// --- 4. A failing endpoint: tried again on the back-off schedule, same webhook-id each time. ---
log('\na flaky endpoint (503 twice, then 200):');
const flaky = await hooks.webhooks.create({ name: 'Flaky', endpoint: `${receiver.url}/flaky`, eventTypes: ['user.deleted'] });
const deleted = await hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: user.id } } });
while ((await hooks.deliveries.get(deleted.deliveryIds[0])).status === 'pending') await new Promise((r) => setTimeout(r, 100));
for (const a of await hooks.deliveries.attempts(deleted.deliveryIds[0])) {
  log(`  attempt at +${a.startedAt - deleted.createdAt} ms: ${a.statusCode} ${a.success ? 'delivered' : 'failed'}`);
}
if (!serving) {
  await hooks.webhooks.delete(flaky.id);
  await hooks.close();
}

// --- 5. A dead endpoint over 72 hours, on a ManualClock: disabled, account holder notified. --
log('\na dead endpoint, 100 hours fast-forwarded with ManualClock:');
const clock = new ManualClock();
const dead = createWebhooks({
  store: sqliteStore({ filename: join(dir, 'simulated.db') }),
  keys: [await generateSigningKey()],
  issuer: host.url,
  clock,
  allowPrivateNetworks: true,
  transport: { send: async () => ({ status: 500, excerpt: 'down' }) },
  delivery: { pollIntervalMs: 3_600_000 },
  authorize, // the same host: without it the engine warns that its management API refuses everyone
  notifier: {
    webhookDisabled: (info) =>
      log(
        `  ✉ email to account holder: "${info.webhook.name}" disabled after failing since ${new Date(info.failingSince).toISOString()} (${info.lastError})`,
      ),
  },
});
await dead.start();
const gone = await dead.webhooks.create({ name: 'Legacy ERP', endpoint: 'https://erp.example.com/hooks', eventTypes: ['user.created'] });
const ev = await dead.emit({ type: 'user.created', source: 'admin', data: { user } });
await dead.drain();
await clock.advance(100 * 3600_000);
const attempts = await dead.deliveries.attempts(ev.deliveryIds[0]);
log(
  `  ${attempts.length} attempts over ${Math.round((attempts.at(-1).startedAt - attempts[0].startedAt) / 3600_000)} h; webhook is now ${(await dead.webhooks.get(gone.id)).status}`,
);
await dead.close();

const stop = async () => {
  if (serving) await hooks.close();
  await receiver.close();
  await host.close();
  rmSync(dir, { recursive: true, force: true });
};
if (serving) {
  log(`\nserving the dashboard at ${host.url}${DASHBOARD}`);
  log(`  its webhooks' deliveries (CRM sync, Flaky) are in their logs; new webhooks can point at ${receiver.url}/anything`);
  log('  Ctrl-C stops');
  process.once('SIGINT', () => stop().then(() => process.exit(0)));
} else {
  await stop();
  log('\ndone');
}
