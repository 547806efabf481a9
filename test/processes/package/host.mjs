// A PostgreSQL-only identity host, as a user writes it against the installed package (plain
// JavaScript, no build step). It serves hooks.handler under /auth, so its issuer carries that
// prefix, creates one webhook to RECEIVER_URL, emits one event, waits until the delivery is
// recorded as delivered, and prints one JSON line per step for the test to read.
import { createServer } from 'node:http';
import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { toNodeHandler } from 'identity-webhooks/http';
import { postgresStore } from 'identity-webhooks/postgres';

const { DATABASE_URL, RECEIVER_URL, HOST_PORT } = process.env;
const say = (line) => console.log(JSON.stringify(line));
const issuer = `http://127.0.0.1:${HOST_PORT}/auth`;

const store = postgresStore({ connectionString: DATABASE_URL, maxConnections: 4 });
const hooks = createWebhooks({
  store,
  keys: [await generateSigningKey()],
  issuer,
  allowPrivateNetworks: true, // the receiver runs on 127.0.0.1
  authorize: () => ({ environment: 'default' }),
  delivery: { timeoutMs: 5000 },
});
const node = toNodeHandler(hooks.handler);
const server = createServer((req, res) => {
  if (req.url?.startsWith('/auth/')) return node(req, res);
  res.writeHead(404).end();
});
await new Promise((resolve) => server.listen(Number(HOST_PORT), '127.0.0.1', resolve));
await hooks.start();

const webhook = await hooks.webhooks.create({ name: 'Receiver', endpoint: RECEIVER_URL, eventTypes: ['user.created'] });
const data = {
  user: {
    id: 'kp_pack',
    email: 'ada@example.com',
    first_name: 'Ada',
    last_name: 'Lovelace',
    phone: null,
    username: null,
    is_password_reset_requested: false,
    is_suspended: false,
    organizations: [],
  },
};
const emitted = await hooks.emit({ type: 'user.created', source: 'api', data });
say({ step: 'emitted', issuer, webhookId: webhook.id, eventId: emitted.id, deliveryId: emitted.deliveryIds[0], data });

const deadline = Date.now() + 20_000;
let delivery = await hooks.deliveries.get(emitted.deliveryIds[0]);
while (delivery.status !== 'delivered' && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  delivery = await hooks.deliveries.get(delivery.id);
}
const attempts = await hooks.deliveries.attempts(delivery.id);
say({ step: 'done', delivery, attempts });
await hooks.close();
await new Promise((resolve) => server.close(resolve));
