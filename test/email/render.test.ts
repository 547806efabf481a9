import { describe, expect, test } from 'vitest';
import { renderDisabledEmail } from '../../src/email/index.js';
import { DISABLED_AT, disabledInfo } from './info.js';

describe('renderDisabledEmail', () => {
  test('subject, both parts and headers say what happened and what to do', () => {
    const mail = renderDisabledEmail(disabledInfo(), {
      domain: 'acme.example',
      dashboardUrl: 'https://acme.example/settings/webhooks/webhook_01JTESTWEBHOOK',
    });
    expect(mail.subject).toBe('Webhook "Billing sync" was disabled');
    expect(mail.headers).toEqual({
      'Message-ID': '<notice_01JTESTNOTICE@acme.example>',
      'X-Webhooks-Notice-Id': 'notice_01JTESTNOTICE',
      'Auto-Submitted': 'auto-generated',
    });
    for (const part of [mail.text, mail.html]) {
      expect(part).toContain('Billing sync');
      expect(part).toContain('https://billing.acme.example/hooks');
      expect(part).toContain('2026-01-01 00:00:00 UTC'); // failing since
      expect(part).toContain('2026-01-04 03:12:05 UTC'); // disabled at
      expect(part).toContain('3 days 3 hours');
      expect(part).toContain('500: HTTP 500');
      expect(part).toContain('answers a POST with HTTP 200');
      expect(part).toContain('POST /api/v1/webhooks/webhook_01JTESTWEBHOOK/enable');
      expect(part).toContain('https://acme.example/settings/webhooks/webhook_01JTESTWEBHOOK');
    }
    expect(mail.text).toContain('Endpoint       https://billing.acme.example/hooks\n');
    expect(mail.html).toContain('<a href="https://acme.example/settings/webhooks/webhook_01JTESTWEBHOOK"');
    // Self-contained: nothing for a mail client to fetch.
    expect(mail.html).not.toMatch(/<img|<link|@import|url\(|<script/i);
    expect(Object.isFrozen(mail) && Object.isFrozen(mail.headers)).toBe(true);
  });

  test('without a dashboard link, no link and no dangling sentence', () => {
    const mail = renderDisabledEmail(disabledInfo(), { domain: 'acme.example' });
    expect(mail.text).not.toContain('Open the webhook');
    expect(mail.html).not.toContain('<a ');
    expect(mail.text).toContain('in the dashboard or with the management API');
  });

  test('a name or last error with markup is escaped in the HTML part, verbatim in the text part', () => {
    const mail = renderDisabledEmail(
      disabledInfo({ lastError: 'network: <img src=x onerror=alert(1)> & "quotes"' }, { name: '<script>alert("x")</script>' }),
    );
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<img');
    expect(mail.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(mail.html).toContain('network: &lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;');
    expect(mail.text).toContain('<script>alert("x")</script>');
    expect(mail.subject).toBe('Webhook "<script>alert("x")</script>" was disabled');
  });

  test('control characters, line breaks and bidi overrides cannot reach the subject or a header', () => {
    const nasty = 'x\r\nBcc: evil@attacker.example\u0000\u2028\u202eY\u0007';
    const mail = renderDisabledEmail(disabledInfo({ noticeId: `n\r\nBcc: evil@attacker.example` }, { name: nasty }));
    expect(mail.subject).toBe('Webhook "x Bcc: evil@attacker.example Y" was disabled');
    expect(mail.subject).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
    for (const value of Object.values(mail.headers)) expect(value).toMatch(/^[\x20-\x7e]+$/);
    // An id that is not a plain atom is hashed for the Message-ID (stable, header-safe) and cleaned for the X- header.
    expect(mail.headers['Message-ID']).toMatch(/^<sha256-[0-9a-f]{40}@identity-webhooks\.invalid>$/);
    expect(mail.headers['X-Webhooks-Notice-Id']).toBe('n Bcc: evil@attacker.example');
    // The text part keeps each field on its own line.
    expect(mail.text.split('\n').filter((l) => l.startsWith('Bcc'))).toEqual([]);
  });

  test('a very long name is cut in the subject; the body keeps a bounded amount', () => {
    const mail = renderDisabledEmail(disabledInfo({ lastError: 'e'.repeat(50_000) }, { name: 'N'.repeat(10_000) }));
    expect(mail.subject).toBe(`Webhook "${'N'.repeat(99)}…" was disabled`);
    expect(mail.text.length).toBeLessThan(3_000);
    expect(mail.text).toContain(`${'e'.repeat(999)}…`);
  });

  test('the Message-ID follows the notice: same notice same id, another notice another id', () => {
    const a = renderDisabledEmail(disabledInfo(), { domain: 'acme.example' });
    const b = renderDisabledEmail(disabledInfo(), { domain: 'acme.example' });
    const c = renderDisabledEmail(disabledInfo({ noticeId: 'notice_01JOTHER' }), { domain: 'acme.example' });
    expect(b.headers['Message-ID']).toBe(a.headers['Message-ID']);
    expect(c.headers['Message-ID']).toBe('<notice_01JOTHER@acme.example>');
  });

  test('without a noticeId (the engine before the outbox), the id comes from the webhook and the disable time', () => {
    const info = disabledInfo();
    delete (info as { noticeId?: string }).noticeId;
    const mail = renderDisabledEmail(info, { domain: 'acme.example' });
    expect(mail.headers['Message-ID']).toBe(`<webhook_01JTESTWEBHOOK.${DISABLED_AT}@acme.example>`);
    expect(mail.headers['X-Webhooks-Notice-Id']).toBe(`webhook_01JTESTWEBHOOK.${DISABLED_AT}`);
    // A later disable of the same webhook is another notice.
    const later = disabledInfo({ disabledAt: DISABLED_AT + 1 });
    delete (later as { noticeId?: string }).noticeId;
    expect(renderDisabledEmail(later, { domain: 'acme.example' }).headers['Message-ID']).not.toBe(mail.headers['Message-ID']);
  });

  test('an internationalised From domain becomes its ASCII form in the Message-ID', () => {
    const mail = renderDisabledEmail(disabledInfo(), { domain: 'bücher.example' });
    expect(mail.headers['Message-ID']).toBe('<notice_01JTESTNOTICE@xn--bcher-kva.example>');
  });

  test('refuses a dashboard link that is not http(s), a bad domain, and an info that is not one', () => {
    expect(() => renderDisabledEmail(disabledInfo(), { dashboardUrl: 'javascript:alert(1)' })).toThrow(TypeError);
    expect(() => renderDisabledEmail(disabledInfo(), { dashboardUrl: '/relative/path' })).toThrow(/dashboardUrl/);
    expect(() => renderDisabledEmail(disabledInfo(), { domain: 'acme.example>\r\nBcc: x@y' })).toThrow(/domain/);
    expect(() => renderDisabledEmail(null as any)).toThrow(TypeError);
    expect(() => renderDisabledEmail({ environment: 'x' } as any)).toThrow(TypeError);
  });

  test('times that cannot be shown say so instead of throwing', () => {
    const mail = renderDisabledEmail(disabledInfo({ failingSince: Number.NaN }));
    expect(mail.text).toContain('Failing since  unknown');
    expect(mail.text).toContain('failed for an unknown time');
  });
});
