import { afterAll, beforeAll, expect, test } from 'vitest';
import { startAuth, startVerifyingReceiver } from './harness.js';

const PASSWORD = 'correct horse battery staple';
let s: Awaited<ReturnType<typeof startAuth>>;
let r: Awaited<ReturnType<typeof startVerifyingReceiver>>;

beforeAll(async () => {
  s = await startAuth('sqlite', {
    environment: ({ user }) => (user?.email?.endsWith('@acme.example') ? 'acme' : 'default'),
    events: {
      // The host's own mapping: Kinde's shape plus nothing it would refuse.
      'user.created': ({ data, user }) => (user?.email === 'bad@example.com' ? { user: { ...(data.user as object), extra: 1 } } : data),
      'user.updated': ({ user }) => {
        if (user?.name === 'throw') throw new Error('the host mapping failed');
        return null; // nothing this time
      },
      'user.authenticated': false,
    },
  });
  r = await startVerifyingReceiver(s.issuer);
  await s.hooks.webhooks.create({ name: 'all', endpoint: r.url, eventTypes: ['user.created', 'user.updated', 'user.authenticated'] });
  await s.hooks.webhooks.create({ name: 'acme', endpoint: r.url, eventTypes: ['user.created'], environment: 'acme' });
});
afterAll(async () => {
  await r?.close();
  await s?.close();
});

test('an override whose data the schema refuses, or that throws, leaves the event out and never fails the write', async () => {
  const browser = s.client();
  const bad = await browser.call('/sign-up/email', { body: { email: 'bad@example.com', password: PASSWORD, name: 'Bad' } });
  expect(bad.status).toBe(200);
  const thrown = await browser.call('/update-user', { body: { name: 'throw' } });
  expect(thrown.status).toBe(200);
  expect(await s.sql(`select name from "user" where email = 'bad@example.com'`)).toEqual([{ name: 'throw' }]);
  await s.hooks.drain();
  expect(r.received).toEqual([]);
  expect(s.errors).toHaveLength(2);
  expect(s.errors.join('\n')).toContain('user.created');
  expect(s.errors.join('\n')).toContain('the host mapping failed');
});

test('environment() routes each user to its environment; false turns a type off', async () => {
  const browser = s.client();
  expect((await browser.call('/sign-up/email', { body: { email: 'ada@acme.example', password: PASSWORD, name: 'Ada' } })).status).toBe(200);
  expect((await browser.call('/sign-in/email', { body: { email: 'ada@acme.example', password: PASSWORD } })).status).toBe(200);
  await r.waitFor(1);
  await s.hooks.drain();
  expect(r.received.map((e) => [e.type, e.data.user.email])).toEqual([['user.created', 'ada@acme.example']]);
  const [event] = await s.sql(`select environment from iw_events where type = 'user.created'`);
  expect(event).toEqual({ environment: 'acme' });
});

test('a refused sign-in whose emit fails: the caller still gets its 401; the event is logged, tried again, and delivered', async () => {
  await s.hooks.webhooks.create({ name: 'failures', endpoint: r.url, eventTypes: ['user.authentication_failed'], environment: 'acme' });
  const before = r.received.length;
  s.errors.length = 0;
  await s.sql('alter table iw_events rename to iw_events_away');
  const refused = await s.client().call('/sign-in/email', { body: { email: 'ada@acme.example', password: 'wrong password' } });
  expect(refused.status).toBe(401);
  expect(s.errors.join('\n')).toContain('user.authentication_failed could not be emitted; trying again');
  await s.sql('alter table iw_events_away rename to iw_events');
  await r.waitFor(before + 1);
  expect(r.received[before]).toMatchObject({ type: 'user.authentication_failed', data: { user: { email: 'ada@acme.example' } } });
});
