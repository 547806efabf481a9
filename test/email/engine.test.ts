import { afterEach, expect, test } from 'vitest';
import { smtpNotifier } from '../../src/email/index.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { closedPort, startSmtpServer } from '../helpers/smtp.js';

const HOUR = 3600_000;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

test('a dead endpoint is disabled after 72 hours and exactly one email reaches the SMTP server', async () => {
  const smtp = await startSmtpServer();
  cleanups.push(() => smtp.close());
  const notifier = smtpNotifier({
    url: smtp.url,
    from: 'Acme Webhooks <webhooks@acme.example>',
    to: async (info) => `owner@${info.environment}.acme.example`,
    dashboardUrl: (info) => `https://acme.example/settings/webhooks/${info.webhook.id}`,
  });
  cleanups.push(() => notifier.close());
  // The engine's callback form as it is today: the notifier is the object smtpNotifier returns.
  const env = await makeEngine({ notifier });
  cleanups.push(() => env.close());
  const { hooks, clock } = env;
  await hooks.start();

  const dead = `http://127.0.0.1:${await closedPort()}/hooks`;
  const wh = await hooks.webhooks.create({ name: 'Billing sync', endpoint: dead, eventTypes: ['user.created'] });
  const start = clock.now();
  await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
  await hooks.drain();

  await clock.advance(71 * HOUR);
  expect((await hooks.webhooks.get(wh.id)).status).toBe('enabled');
  expect(smtp.sessions).toBe(0);

  await clock.advance(30 * HOUR);
  const disabled = await hooks.webhooks.get(wh.id);
  expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'failing', failingSince: start });
  await smtp.waitFor(1);

  // Time goes on, the delivery stays held: still one email.
  await clock.advance(200 * HOUR);
  await new Promise((r) => setTimeout(r, 300));
  expect(smtp.messages).toHaveLength(1);

  const m = smtp.messages[0]!;
  expect(m.to).toEqual(['owner@default.acme.example']);
  expect(m.from).toBe('webhooks@acme.example');
  expect(m.subject).toBe('Webhook "Billing sync" was disabled');
  expect(m.parts.map((p) => p.contentType)).toEqual(['text/plain', 'text/html']);
  expect(m.text).toContain(`Endpoint       ${dead}\n`);
  expect(m.text).toContain('Failing since  2026-01-01 00:00:00 UTC\n');
  expect(m.text).toContain(`Disabled at    ${new Date(disabled.disabledAt!).toISOString().replace('T', ' ').slice(0, 19)} UTC\n`);
  expect(m.text).toMatch(/Last error {5}network: \S/);
  expect(m.text).toContain(`https://acme.example/settings/webhooks/${wh.id}\n`);
  // The Message-ID names the notice; X-Webhooks-Notice-Id says which one.
  const noticeId = m.header('x-webhooks-notice-id')!;
  expect(m.header('message-id')).toBe(`<${noticeId}@acme.example>`);
  // Today's engine passes no noticeId, so it is derived from the webhook and its disable time.
  // When the notice outbox lands this becomes the outbox's notice id.
  expect(noticeId).toBe(`${wh.id}.${disabled.disabledAt}`);
});
