import { afterEach, expect, test } from 'vitest';
import { smtpNotifier } from '../../src/email/index.js';
import { startSilentServer } from '../helpers/smtp.js';
import { disabledInfo } from './info.js';

// Its own file so the 10-second default runs beside the other email tests, not after them.
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function silent() {
  const s = await startSilentServer();
  cleanups.push(() => s.close());
  return s;
}

async function timeToFail(send: Promise<void>): Promise<{ ms: number; error: Error }> {
  const started = performance.now();
  const error = await send.then(
    () => {
      throw new Error('the send succeeded against a server that never answers');
    },
    (e: Error) => e,
  );
  return { ms: performance.now() - started, error };
}

const base = { from: 'webhooks@acme.example', to: () => 'holder@acme.example' };

test('a server that accepts the connection and never greets fails the send in seconds by default', async () => {
  const s = await silent();
  const n = smtpNotifier({ ...base, url: s.url });
  cleanups.push(() => n.close());
  const { ms, error } = await timeToFail(n.webhookDisabled(disabledInfo()));
  expect(error.message).toMatch(/was not sent: .*greeting/i);
  expect(ms).toBeGreaterThan(9_000); // the 10 s greeting timeout, not an earlier accident
  expect(ms).toBeLessThan(13_000); // nodemailer's own default would be 30 s
}, 20_000);

test('timeouts given in transport options win over ours', async () => {
  const s = await silent();
  const n = smtpNotifier({ ...base, url: { host: '127.0.0.1', port: s.port, greetingTimeout: 300 } });
  cleanups.push(() => n.close());
  const { ms, error } = await timeToFail(n.webhookDisabled(disabledInfo()));
  expect(error.message).toMatch(/greeting/i);
  expect(ms).toBeLessThan(2_000);
});

test('timeoutMs bounds the whole send', async () => {
  const s = await silent();
  const n = smtpNotifier({ ...base, url: s.url, timeoutMs: 400 });
  cleanups.push(() => n.close());
  const { ms, error } = await timeToFail(n.webhookDisabled(disabledInfo()));
  expect(error.message).toMatch(/was not sent/);
  expect(error.message).not.toMatch(/greeting/i);
  expect(ms).toBeGreaterThan(350);
  expect(ms).toBeLessThan(2_000);
});
