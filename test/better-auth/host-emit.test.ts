import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Webhooks } from '../../src/index.js';
import type { EmitInput } from '../../src/types.js';
import { type Dialect, startAuth, startVerifyingReceiver } from './harness.js';

const PASSWORD = 'correct horse battery staple';
const LEAD = { code: 'lead.created', name: 'Lead created', origin: 'acme', schema: { type: 'object' as const } };

describe.each<Dialect>(['sqlite', 'postgres'])("better-auth on %s: the host's own emit inside a better-auth write", (dialect) => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  let r: Awaited<ReturnType<typeof startVerifyingReceiver>>;
  const engine: { hooks?: Webhooks } = {};
  beforeAll(async () => {
    s = await startAuth(dialect, { eventTypes: [LEAD] }, `bauth_host_emit_${dialect}`, {
      databaseHooks: {
        user: {
          create: {
            // Runs inside sign-up's transaction; the emit names no transaction.
            before: async (user) => {
              const lead = { type: 'lead.created', source: 'api', data: { email: user.email } };
              await engine.hooks!.emit(lead as unknown as EmitInput);
            },
          },
        },
      },
    });
    engine.hooks = s.hooks;
    r = await startVerifyingReceiver(s.issuer);
    await s.hooks.webhooks.create({ name: 'all', endpoint: r.url, eventTypes: ['user.created', LEAD.code as 'user.created'] });
  });
  afterAll(async () => {
    await r?.close();
    await s?.close();
  });

  test('joins the transaction by itself (no hang on a shared SQLite handle), and rolls back with it', async () => {
    const refuse =
      dialect === 'sqlite'
        ? [`create trigger refuse_account before insert on account begin select raise(abort, 'refused'); end`]
        : [
            `create function refuse_account() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$`,
            `create trigger refuse_account before insert on account for each row execute function refuse_account()`,
          ];
    for (const statement of refuse) await s.sql(statement);
    const failed = await s.client().call('/sign-up/email', { body: { email: 'no@example.com', password: PASSWORD, name: 'No' } });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(await s.sql('select type from iw_events')).toEqual([]);
    await s.sql(dialect === 'sqlite' ? 'drop trigger refuse_account' : 'drop trigger refuse_account on account');

    const ok = await s.client().call('/sign-up/email', { body: { email: 'ada@example.com', password: PASSWORD, name: 'Ada' } });
    expect(ok.status).toBe(200);
    await r.waitFor(2);
    await s.hooks.drain();
    expect(r.received.map((e) => e.type).sort()).toEqual(['lead.created', 'user.created']);
    expect(r.received.find((e) => e.type === 'lead.created')?.data).toEqual({ email: 'ada@example.com' });
  });
});
