import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startReceiver } from '../helpers/http.js';
import { type Dialect, startAuth, startVerifyingReceiver } from './harness.js';

const SIGN_UPS = 40;
const IN_FLIGHT = 1_000;

describe.each<Dialect>(['sqlite', 'postgres'])('better-auth on %s under load', (dialect) => {
  let s: Awaited<ReturnType<typeof startAuth>>;
  let users: Awaited<ReturnType<typeof startVerifyingReceiver>>;
  let busy: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    s = await startAuth(dialect, { delivery: { pollIntervalMs: 100 } }, `bauth_load_${dialect}`);
    users = await startVerifyingReceiver(s.issuer);
    // A receiver that takes its time, so the deliveries stay in flight while the sign-ups run.
    busy = await startReceiver(() => ({ status: 200, delayMs: 5 }));
    await s.hooks.webhooks.create({ name: 'users', endpoint: users.url, eventTypes: ['user.created'] });
    await s.hooks.webhooks.create({ name: 'busy', endpoint: `${busy.url}/busy`, eventTypes: ['organization.updated'] });
  });
  afterAll(async () => {
    await busy?.close();
    await users?.close();
    await s?.close();
  });

  test(`${SIGN_UPS} concurrent sign-ups while ${IN_FLIGHT} deliveries are in flight: all succeed, each user.created delivered once`, async () => {
    for (let i = 0; i < IN_FLIGHT; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          s.hooks.emit({ type: 'organization.updated', source: 'api', data: { organization: { code: `org_${i + j}`, name: 'Busy' } } }),
        ),
      );
    }
    const answers = await Promise.all(
      Array.from({ length: SIGN_UPS }, (_, i) =>
        s
          .client()
          .call('/sign-up/email', { body: { email: `user${i}@example.com`, password: 'correct horse battery staple', name: `User ${i}` } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    console.info(
      `[${dialect}] sign-ups: ${statuses.filter((x) => x === 200).length}/${SIGN_UPS}; busy deliveries received so far: ${busy.requests.length}/${IN_FLIGHT}`,
    );
    expect(answers.filter((a) => a.status !== 200).map((a) => a.text)).toEqual([]);
    await users.waitFor(SIGN_UPS, 120_000);
    await busy.waitFor(IN_FLIGHT, 120_000);
    await s.hooks.drain();
    const ids = answers.map((a) => a.json.user.id as string).sort();
    expect(users.received.map((e) => e.data.user.id as string).sort()).toEqual(ids);
    expect(users.requests, 'each user.created delivered once').toBe(SIGN_UPS);
    expect(new Set(users.received.map((e) => e.webhookId)).size).toBe(SIGN_UPS);
    console.info(
      `[${dialect}] user.created delivered: ${users.received.length} (requests ${users.requests}); busy: ${busy.requests.length}`,
    );
  }, 240_000);
});
