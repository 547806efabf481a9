import { expect, test } from 'vitest';
import { smtpNotifier } from '../../src/email/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { closedPort, startSmtpServer } from '../helpers/smtp.js';

const HOUR = 3600_000;
const cleanups = useCleanups();

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
  // The notice outbox's row id: the same on every retry of this notice.
  const notices = await hooks.notices.list();
  expect(notices).toHaveLength(1);
  expect(notices[0]).toMatchObject({ id: noticeId, webhookId: wh.id, status: 'sent', attempts: 1, kind: 'webhook_disabled' });
});

/** A dead endpoint on an engine over `filename`, advanced past the 72-hour disable. */
async function disableOne(env: Awaited<ReturnType<typeof makeEngine>>) {
  await env.hooks.start();
  const dead = `http://127.0.0.1:${await closedPort()}/hooks`;
  const wh = await env.hooks.webhooks.create({ name: 'Billing sync', endpoint: dead, eventTypes: ['user.created'] });
  await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
  await env.hooks.drain();
  await env.clock.advance(101 * HOUR);
  await env.hooks.drain();
  expect((await env.hooks.webhooks.get(wh.id)).status).toBe('disabled');
  return wh;
}

test('the SMTP server is down at the disable and the process closes: a new process on the same file sends the notice once the server is up', async () => {
  const smtp = await startSmtpServer();
  cleanups.push(() => smtp.close());
  await smtp.stop(); // down before the disable
  const mail = () => smtpNotifier({ url: smtp.url, from: 'webhooks@acme.example', to: () => 'owner@acme.example' });
  const first = mail();
  const env = await makeEngine({ notifier: first });
  cleanups.push(() => env.close());
  const wh = await disableOne(env);
  // The notifier failed: the notice waits, with the error and its next try, in the outbox.
  const [waiting] = await env.hooks.notices.list();
  // Tried at the disable and again on its back-off while the clock ran on to 101 h (1 min, 5 min, …).
  expect(waiting).toMatchObject({ webhookId: wh.id, status: 'pending' });
  expect(waiting!.attempts).toBeGreaterThanOrEqual(1);
  expect(waiting!.lastError).toMatch(/ECONNREFUSED|connect/i);
  expect(waiting!.nextAttemptAt).toBeGreaterThan(env.clock.now());
  await first.close();

  // The process goes away; the mail server comes back; a new process opens the same file.
  const second = mail();
  cleanups.push(() => second.close());
  const hooks = await env.restart({ notifier: second });
  await smtp.start();
  await hooks.start();
  await env.clock.advance(2 * 24 * 3600_000); // past the notice's next try, whatever its back-off step
  await hooks.drain();
  await smtp.waitFor(1);
  expect(smtp.messages).toHaveLength(1);
  expect(smtp.messages[0]!.header('x-webhooks-notice-id')).toBe(waiting!.id);
  expect((await hooks.notices.list())[0]).toMatchObject({
    id: waiting!.id,
    status: 'sent',
    attempts: waiting!.attempts + 1,
    lastError: null,
  });
});

test('a notifier that keeps failing is retried on the notice back-off for days, then given up and listed as failed', async () => {
  let calls = 0;
  const env = await makeEngine({
    notifier: {
      webhookDisabled: () => {
        calls++;
        throw new Error('mail relay refused');
      },
    },
  });
  cleanups.push(() => env.close());
  await disableOne(env);
  for (let day = 0; day < 7; day++) {
    await env.clock.advance(24 * HOUR);
    await env.hooks.drain();
  }
  const [notice] = await env.hooks.notices.list();
  expect(notice).toMatchObject({ status: 'failed', lastError: 'Error: mail relay refused', nextAttemptAt: null });
  expect(calls).toBe(notice!.attempts);
  expect(calls).toBeGreaterThanOrEqual(10);
  expect(env.logged.some((l) => l.includes('given up'))).toBe(true);
  expect(await env.hooks.notices.list({ status: 'pending' })).toEqual([]);
});
