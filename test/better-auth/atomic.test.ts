import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Dialect, startAuth, startVerifyingReceiver } from './harness.js';

const PASSWORD = 'correct horse battery staple';

const REFUSE_ACCOUNTS: Record<Dialect, string[]> = {
  sqlite: [`create trigger refuse_account before insert on account begin select raise(abort, 'accounts refused'); end`],
  postgres: [
    `create function refuse_account() returns trigger language plpgsql as $$ begin raise exception 'accounts refused'; end $$`,
    `create trigger refuse_account before insert on account for each row execute function refuse_account()`,
  ],
};
const ALLOW_ACCOUNTS: Record<Dialect, string> = {
  sqlite: 'drop trigger refuse_account',
  postgres: 'drop trigger refuse_account on account',
};

describe.each<Dialect>(['sqlite', 'postgres'])('better-auth on %s: the event commits or rolls back with the user', (dialect) => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  let r: Awaited<ReturnType<typeof startVerifyingReceiver>>;
  beforeAll(async () => {
    s = await startAuth(dialect, {}, `bauth_atomic_${dialect}`);
    r = await startVerifyingReceiver(s.issuer);
    await s.hooks.webhooks.create({ name: 'users', endpoint: r.url, eventTypes: ['user.created'] });
  });
  afterAll(async () => {
    await r?.close();
    await s?.close();
  });

  const count = async (table: string) => Number(((await s.sql(`select count(*) as n from ${table}`)) as Array<{ n: unknown }>)[0]!.n);

  test('a sign-up whose account insert fails leaves no user, no event, no delivery', async () => {
    for (const statement of REFUSE_ACCOUNTS[dialect]) await s.sql(statement);
    const res = await s.client().call('/sign-up/email', { body: { email: 'ada@example.com', password: PASSWORD, name: 'Ada' } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await count('"user"')).toBe(0);
    expect(await count('iw_events')).toBe(0);
    expect(await count('iw_deliveries')).toBe(0);
    await s.hooks.drain();
    expect(r.received).toEqual([]);

    // The same sign-up once accounts are allowed: one user, one event, one delivery.
    await s.sql(ALLOW_ACCOUNTS[dialect]);
    const ok = await s.client().call('/sign-up/email', { body: { email: 'ada@example.com', password: PASSWORD, name: 'Ada' } });
    expect(ok.status).toBe(200);
    await r.waitFor(1);
    await s.hooks.drain();
    expect(await count('"user"')).toBe(1);
    expect(await count('iw_events')).toBe(1);
    expect(r.received.map((e) => [e.type, e.data.user.id])).toEqual([['user.created', ok.json.user.id]]);
  });
});
