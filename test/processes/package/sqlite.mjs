// Opens the SQLite store as the Quick start does and prints what happened: a working store when
// better-sqlite3 is installed beside the package, the error naming it when it is not.
const { sqliteStore } = await import('identity-webhooks/sqlite');
const { createWebhooks, generateSigningKey } = await import('identity-webhooks');
let store;
try {
  store = sqliteStore({ filename: ':memory:' });
} catch (error) {
  console.log(JSON.stringify({ opened: false, message: error.message }));
  process.exit(0);
}
const hooks = createWebhooks({
  store,
  keys: [await generateSigningKey()],
  issuer: 'https://auth.example.com',
  logger: { warn() {}, error: console.error },
});
await hooks.start();
const webhook = await hooks.webhooks.create({ name: 'CRM', endpoint: 'https://crm.example.com/hooks', eventTypes: ['user.created'] });
console.log(JSON.stringify({ opened: true, webhooks: (await hooks.webhooks.list()).map((w) => w.id), created: webhook.id }));
await hooks.close();
