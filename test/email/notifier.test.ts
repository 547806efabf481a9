import { afterEach, describe, expect, test } from 'vitest';
import { type SmtpNotifierOptions, smtpNotifier } from '../../src/email/index.js';
import { testKey } from '../helpers/fixtures.js';
import { closedPort, type SmtpTestServer, startSmtpServer } from '../helpers/smtp.js';
import { disabledInfo } from './info.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function server(options?: Parameters<typeof startSmtpServer>[0]): Promise<SmtpTestServer> {
  const smtp = await startSmtpServer(options);
  cleanups.push(() => smtp.close());
  return smtp;
}

function notifier(options: Partial<SmtpNotifierOptions> & Pick<SmtpNotifierOptions, 'url'>) {
  const n = smtpNotifier({ from: 'Acme Webhooks <webhooks@acme.example>', to: () => 'holder@acme.example', ...options });
  cleanups.push(() => n.close());
  return n;
}

describe('smtpNotifier over a real SMTP server', () => {
  test('one email: subject, both parts, from, to, Message-ID from the notice, the dashboard link', async () => {
    const smtp = await server();
    const n = notifier({
      url: smtp.url,
      to: (info) => `Owner of ${info.environment} <owner@${info.environment}.acme.example>`,
      dashboardUrl: (info) => `https://acme.example/settings/webhooks/${info.webhook.id}`,
    });
    await n.webhookDisabled(disabledInfo());
    await smtp.waitFor(1);
    expect(smtp.messages).toHaveLength(1);
    const m = smtp.messages[0]!;
    expect(m.from).toBe('webhooks@acme.example');
    expect(m.to).toEqual(['owner@production.acme.example']);
    expect(m.subject).toBe('Webhook "Billing sync" was disabled');
    expect(m.header('from')).toBe('Acme Webhooks <webhooks@acme.example>');
    expect(m.header('to')).toBe('Owner of production <owner@production.acme.example>');
    expect(m.header('message-id')).toBe('<notice_01JTESTNOTICE@acme.example>');
    expect(m.header('x-webhooks-notice-id')).toBe('notice_01JTESTNOTICE');
    expect(m.header('auto-submitted')).toBe('auto-generated');
    expect(m.header('content-type')).toMatch(/^multipart\/alternative;/);
    expect(m.parts.map((p) => p.contentType)).toEqual(['text/plain', 'text/html']);
    expect(m.text).toContain('Your webhook "Billing sync" was disabled on 2026-01-04 03:12:05 UTC');
    expect(m.text).toContain('Endpoint       https://billing.acme.example/hooks\n');
    expect(m.text).toContain('Last error     500: HTTP 500\n');
    expect(m.text).toContain('Open the webhook in the dashboard:\nhttps://acme.example/settings/webhooks/webhook_01JTESTWEBHOOK\n');
    expect(m.html).toContain('<a href="https://acme.example/settings/webhooks/webhook_01JTESTWEBHOOK"');
    expect(m.html).toContain('<td style="padding:4px 0;vertical-align:top;word-break:break-all">https://billing.acme.example/hooks</td>');
  });

  test('without dashboardUrl the email has no link', async () => {
    const smtp = await server();
    await notifier({ url: smtp.url }).webhookDisabled(disabledInfo());
    await smtp.waitFor(1);
    expect(smtp.messages[0]!.text).not.toContain('Open the webhook');
    expect(smtp.messages[0]!.html).not.toContain('<a ');
  });

  test('to may return a string, an array, or a promise of either', async () => {
    const smtp = await server();
    const answers: Array<() => unknown> = [
      () => 'one@acme.example',
      () => ['two@acme.example', 'Three <three@acme.example>'],
      async () => 'four@acme.example, "Doe, Jane" <five@acme.example>',
      async () => ['six@acme.example'],
    ];
    for (const answer of answers)
      await notifier({ url: smtp.url, to: answer as SmtpNotifierOptions['to'] }).webhookDisabled(disabledInfo());
    await smtp.waitFor(4);
    expect(smtp.messages.map((m) => m.to)).toEqual([
      ['one@acme.example'],
      ['two@acme.example', 'three@acme.example'],
      ['four@acme.example', 'five@acme.example'],
      ['six@acme.example'],
    ]);
    expect(smtp.messages[2]!.header('to')).toBe('four@acme.example, "Doe, Jane" <five@acme.example>');
  });

  test('a webhook named with CR/LF cannot add a header or a recipient', async () => {
    const smtp = await server();
    const n = notifier({ url: smtp.url });
    await n.webhookDisabled(
      disabledInfo({ lastError: 'boom\r\nBcc: evil2@attacker.example' }, { name: 'x\r\nBcc: evil@attacker.example' }),
    );
    await smtp.waitFor(1);
    const m = smtp.messages[0]!;
    expect(m.to).toEqual(['holder@acme.example']); // the envelope: nobody else got it
    expect([...m.headers.keys()].sort()).toEqual(
      ['auto-submitted', 'content-type', 'date', 'from', 'message-id', 'mime-version', 'subject', 'to', 'x-webhooks-notice-id'].sort(),
    );
    expect(m.headers.get('subject')).toHaveLength(1);
    expect(m.subject).toBe('Webhook "x Bcc: evil@attacker.example" was disabled');
    // In the raw message no line starts a Bcc field, in the headers or in any part.
    expect(m.raw).not.toMatch(/^bcc:/im);
    expect(m.text).not.toMatch(/^bcc:/im);
  });

  test('markup in the name and the last error arrives escaped in the HTML part', async () => {
    const smtp = await server();
    await notifier({ url: smtp.url }).webhookDisabled(
      disabledInfo({ lastError: '<script>steal()</script>' }, { name: '<script>alert(1)</script>' }),
    );
    await smtp.waitFor(1);
    const m = smtp.messages[0]!;
    expect(m.html).not.toContain('<script>');
    expect(m.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(m.html).toContain('&lt;script&gt;steal()&lt;/script&gt;');
    expect(m.subject).toBe('Webhook "<script>alert(1)</script>" was disabled');
  });

  test('the same notice sent twice carries the same Message-ID; another notice does not', async () => {
    const smtp = await server();
    const n = notifier({ url: smtp.url });
    await n.webhookDisabled(disabledInfo());
    await n.webhookDisabled(disabledInfo());
    await n.webhookDisabled(disabledInfo({ noticeId: 'notice_01JANOTHER' }));
    await smtp.waitFor(3);
    expect(smtp.messages.map((m) => m.header('message-id'))).toEqual([
      '<notice_01JTESTNOTICE@acme.example>',
      '<notice_01JTESTNOTICE@acme.example>',
      '<notice_01JANOTHER@acme.example>',
    ]);
  });

  test('no private key material, even when the info object carries a key', async () => {
    const smtp = await server();
    const key = await testKey();
    const info = Object.assign(disabledInfo({}, { ...(key as any), name: 'Billing sync' }), { key, keys: [key], ...key });
    await notifier({ url: smtp.url }).webhookDisabled(info);
    await smtp.waitFor(1);
    const m = smtp.messages[0]!;
    const unwrapped = m.raw.replace(/=\r\n/g, ''); // quoted-printable soft breaks could split a value
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const) {
      const secret = (key as unknown as Record<string, string>)[member]!;
      expect(secret.length).toBeGreaterThan(40);
      for (const where of [unwrapped, m.text!, m.html!]) expect(where).not.toContain(secret.slice(0, 40));
    }
    expect(m.text).toContain('Billing sync');
  });

  test('a refused connection rejects within a bounded time', async () => {
    const port = await closedPort();
    const n = notifier({ url: `smtp://127.0.0.1:${port}` });
    const started = performance.now();
    const error = await n.webhookDisabled(disabledInfo()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/notice for webhook webhook_01JTESTWEBHOOK was not sent: .*ECONNREFUSED/);
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  test('a rejected recipient rejects; a partly rejected list is sent to the rest and logged', async () => {
    const smtp = await server({ rejectRecipients: ['gone@acme.example'] });
    const warnings: Array<[string, unknown]> = [];
    const logger = { warn: (message: string, meta?: unknown) => void warnings.push([message, meta]) };
    await expect(notifier({ url: smtp.url, to: () => 'gone@acme.example', logger }).webhookDisabled(disabledInfo())).rejects.toThrow(
      /was not sent: .*550/,
    );
    expect(smtp.messages).toHaveLength(0);

    await notifier({ url: smtp.url, to: () => ['gone@acme.example', 'holder@acme.example'], logger }).webhookDisabled(disabledInfo());
    await smtp.waitFor(1);
    expect(smtp.messages[0]!.to).toEqual(['holder@acme.example']);
    expect(warnings).toEqual([
      [
        expect.stringContaining('refused for some recipients'),
        {
          errorKind: 'recipients_refused',
          webhookId: 'webhook_01JTESTWEBHOOK',
          noticeId: 'notice_01JTESTNOTICE',
          messageId: '<notice_01JTESTNOTICE@acme.example>',
          rejected: ['gone@acme.example'],
        },
      ],
    ]);
  });

  test('logs in with the credentials of the URL; a wrong password rejects', async () => {
    const smtp = await server({ auth: { user: 'webhooks@acme.example', pass: 'p@ss:word/1' } });
    const good = `smtp://${encodeURIComponent('webhooks@acme.example')}:${encodeURIComponent('p@ss:word/1')}@127.0.0.1:${smtp.port}`;
    await notifier({ url: good }).webhookDisabled(disabledInfo());
    await smtp.waitFor(1);

    const bad = `smtp://${encodeURIComponent('webhooks@acme.example')}:wrong@127.0.0.1:${smtp.port}`;
    const error = await notifier({ url: bad })
      .webhookDisabled(disabledInfo())
      .catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/was not sent: .*(535|Invalid login)/);
    expect((error as Error).message).not.toContain('wrong'); // the password stays out of the error
    expect(smtp.messages).toHaveLength(1);
  });

  test('to returning nothing, an empty list or an invalid address rejects and sends nothing', async () => {
    const smtp = await server();
    const bad: Array<[unknown, RegExp]> = [
      [undefined, /to\(\) must return an address/],
      [null, /to\(\) must return an address/],
      ['', /must not be empty/],
      [[], /no recipient/],
      ['not an address', /invalid address/],
      [['ok@acme.example', 'x@'], /invalid address "x@"/],
      ['ok@acme.example\r\nBcc: evil@attacker.example', /line breaks/],
      [42, /not number/],
      [Array.from({ length: 51 }, (_, i) => `u${i}@acme.example`), /51 recipients; at most 50/],
    ];
    for (const [answer, message] of bad) {
      await expect(notifier({ url: smtp.url, to: async () => answer as string }).webhookDisabled(disabledInfo())).rejects.toThrow(message);
    }
    // And when to() itself throws, that error is what the outbox sees.
    await expect(
      notifier({
        url: smtp.url,
        to: () => {
          throw new Error('directory unavailable');
        },
      }).webhookDisabled(disabledInfo()),
    ).rejects.toThrow('directory unavailable');
    expect(smtp.sessions).toBe(0);
  });

  test('a dashboardUrl that is not http(s) rejects rather than mailing a javascript: link', async () => {
    const smtp = await server();
    await expect(notifier({ url: smtp.url, dashboardUrl: () => 'javascript:alert(1)' }).webhookDisabled(disabledInfo())).rejects.toThrow(
      /dashboardUrl must be an absolute http or https URL/,
    );
    await notifier({ url: smtp.url, dashboardUrl: async () => null }).webhookDisabled(disabledInfo());
    await smtp.waitFor(1);
    expect(smtp.messages[0]!.text).not.toContain('Open the webhook');
  });

  test('the pool survives the server going down and coming back on the same port', async () => {
    const smtp = await server();
    const n = notifier({ url: smtp.url });
    await n.webhookDisabled(disabledInfo({ noticeId: 'notice_1' }));
    await smtp.waitFor(1);
    await smtp.stop();
    await expect(n.webhookDisabled(disabledInfo({ noticeId: 'notice_2' }))).rejects.toThrow(/was not sent/);
    await smtp.start();
    await n.webhookDisabled(disabledInfo({ noticeId: 'notice_2' }));
    await smtp.waitFor(2);
    expect(smtp.messages.map((m) => m.header('x-webhooks-notice-id'))).toEqual(['notice_1', 'notice_2']);
  });

  test('transport options as an object; close() waits for a send in flight, later sends reject', async () => {
    const smtp = await server();
    const n = notifier({ url: { host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true } });
    const sending = n.webhookDisabled(disabledInfo());
    await n.close();
    await sending;
    expect(smtp.messages).toHaveLength(1);
    await expect(n.webhookDisabled(disabledInfo())).rejects.toThrow(/closed/);
    await n.close(); // twice is fine
  });
});

describe('smtpNotifier options', () => {
  const base = { url: 'smtp://127.0.0.1:2525', from: 'webhooks@acme.example', to: () => 'holder@acme.example' };

  test.each([
    ['missing from', { from: undefined }, /from must be a string/],
    ['empty from', { from: '  ' }, /from must not be empty/],
    ['from with a newline', { from: 'Acme <webhooks@acme.example>\r\nBcc: evil@attacker.example' }, /from must not contain line breaks/],
    ['from without an address', { from: 'Acme Webhooks' }, /from holds an invalid address/],
    ['two from addresses', { from: 'a@acme.example, b@acme.example' }, /from must be exactly one address/],
    ['missing url', { url: undefined }, /url must be an smtp/],
    ['http url', { url: 'https://smtp.acme.example' }, /url must be an smtp:\/\/ or smtps:\/\/ URL/],
    ['unparsable url', { url: 'smtp://exa mple.com:99999' }, /url must be an smtp/],
    ['url without a host', { url: 'smtp://' }, /url must/],
    ['options without a host', { url: { port: 25 } }, /url options must have a url, host or service/],
    ['another transport', { url: { jsonTransport: true } }, /url must be SMTP settings/],
    ['a bad url inside options', { url: { url: 'ftp://x' } }, /url must be an smtp/],
    ['to not a function', { to: 'holder@acme.example' }, /to must be a function/],
    ['dashboardUrl not a function', { dashboardUrl: 'https://acme.example' }, /dashboardUrl must be a function/],
    ['timeoutMs not a positive integer', { timeoutMs: 0 }, /timeoutMs/],
    ['logger without warn', { logger: {} }, /logger/],
  ])('%s is a TypeError naming the option', (_, patch, message) => {
    const attempt = () => smtpNotifier({ ...base, ...(patch as object) } as SmtpNotifierOptions);
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(message);
  });

  test('a TypeError about the url never repeats it (it carries the password)', () => {
    const attempt = () => smtpNotifier({ ...base, url: 'smtpx://user:hunter2@smtp.acme.example' });
    expect(attempt).toThrow(TypeError);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2');
    }
  });

  test('valid options build a frozen notifier without connecting', async () => {
    const n = smtpNotifier({ ...base, url: 'smtps://user:pass@smtp.acme.example', dashboardUrl: () => null });
    expect(Object.isFrozen(n)).toBe(true);
    expect(typeof n.webhookDisabled).toBe('function');
    await n[Symbol.asyncDispose]();
  });
});
