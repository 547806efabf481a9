import { createHash } from 'node:crypto';
import { domainToASCII } from 'node:url';
import type { WebhookDisabledInfo } from '../types.js';
import { escapeHtml, formatDuration, formatUtc, oneLine } from './text.js';

/** The content of the disable email, ready for any mailer. */
export interface DisabledEmail {
  /** `Webhook "<name>" was disabled`, one line, the name cut to 100 characters. */
  subject: string;
  /** The plain-text part. */
  text: string;
  /** The HTML part: self-contained (no remote images, fonts or styles), every value escaped. */
  html: string;
  /**
   * `Message-ID` (`<id@domain>`, the same for every send of one notice), `X-Webhooks-Notice-Id`
   * and `Auto-Submitted: auto-generated` (so auto-responders stay quiet). Each value is one
   * ASCII line.
   */
  headers: Readonly<Record<string, string>>;
}

/** Options of {@link renderDisabledEmail}. */
export interface RenderDisabledEmailOptions {
  /** The domain of the `Message-ID`; use your From address's domain. Default `identity-webhooks.invalid`. */
  domain?: string;
  /** An http(s) link to the webhook in your dashboard; the email shows it when given. */
  dashboardUrl?: string | null;
}

const SUBJECT_NAME_CHARS = 100;
const FALLBACK_DOMAIN = 'identity-webhooks.invalid';

/**
 * Renders the email that tells an account holder their webhook was disabled: subject, a plain-text
 * and an HTML part, and the headers that make a resent notice recognisable. Pure: use it with
 * your own mailer when {@link smtpNotifier} does not fit. Reads only the fields it shows from
 * `info`, so nothing else the object carries can reach the mail.
 *
 * @example
 * ```ts
 * const notifier = {
 *   async webhookDisabled(info) {
 *     const mail = renderDisabledEmail(info, { domain: 'acme.example', dashboardUrl: `https://acme.example/webhooks/${info.webhook.id}` });
 *     await myMailer.send({ to: await ownerOf(info.environment), ...mail });
 *   },
 * };
 * ```
 */
export function renderDisabledEmail(info: WebhookDisabledInfo, options: RenderDisabledEmailOptions = {}): DisabledEmail {
  if (typeof info !== 'object' || info === null || typeof info.webhook !== 'object' || info.webhook === null) {
    throw new TypeError('renderDisabledEmail: info must be the WebhookDisabledInfo the engine passed');
  }
  const domain = messageIdDomain(options.domain);
  const dashboard = dashboardLink(options.dashboardUrl);
  const noticeId = noticeIdOf(info);

  const name = oneLine(info.webhook.name, 255) || '(unnamed)';
  const facts: Array<[string, string]> = [
    ['Webhook', name],
    ['Webhook id', oneLine(info.webhook.id, 200)],
    ['Endpoint', oneLine(info.webhook.endpoint, 2048)],
    ['Environment', oneLine(info.environment, 255)],
    ['Failing since', formatUtc(info.failingSince)],
    ['Disabled at', formatUtc(info.disabledAt)],
    ['Last error', oneLine(info.lastError, 1000) || 'none recorded'],
  ];
  const subject = `Webhook "${oneLine(info.webhook.name, SUBJECT_NAME_CHARS) || '(unnamed)'}" was disabled`;
  const lead =
    info.reason === 'gone'
      ? `Your webhook "${name}" was disabled on ${formatUtc(info.disabledAt)}: its endpoint answered 410 Gone, ` +
        'which says it is gone for good.'
      : `Your webhook "${name}" was disabled on ${formatUtc(info.disabledAt)}: every delivery to its endpoint ` +
        `failed for ${formatDuration(info.disabledAt - info.failingSince)}, since ${formatUtc(info.failingSince)}.`;
  const held =
    'While it is disabled, no events are sent to it. Deliveries that were still waiting are held, ' +
    'and are sent when you enable it again.';
  const check =
    'Make sure the endpoint is reachable and answers a POST with HTTP 200. Any other status, ' +
    'a redirect, or no answer in time counts as a failure.';
  const enableApi = `POST /api/v1/webhooks/${oneLine(info.webhook.id, 200)}/enable`;
  const footer = `This is an automatic message (notice ${oneLine(noticeId, 200)}).`;

  const width = Math.max(...facts.map(([label]) => label.length)) + 2;
  const text = [
    lead,
    '',
    ...facts.map(([label, value]) => `${label.padEnd(width)}${value}`),
    '',
    held,
    '',
    'What to do',
    `1. ${check}`,
    `2. Enable the webhook again in the dashboard or with the management API (${enableApi}).`,
    ...(dashboard ? ['', 'Open the webhook in the dashboard:', dashboard] : []),
    '',
    footer,
    '',
  ].join('\n');

  const cell = 'padding:4px 0;vertical-align:top;word-break:break-all';
  const th = 'padding:4px 16px 4px 0;vertical-align:top;text-align:left;white-space:nowrap;font-weight:600';
  const html = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    `<title>${escapeHtml(subject)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#ffffff;color:#1a1a1a;font-family:Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5">',
    '<div style="max-width:640px">',
    `<h1 style="font-size:20px;margin:0 0 16px">${escapeHtml(subject)}</h1>`,
    `<p>${escapeHtml(lead)}</p>`,
    '<table role="presentation" style="border-collapse:collapse;margin:16px 0">',
    ...facts.map(([label, value]) => `<tr><th style="${th}">${escapeHtml(label)}</th><td style="${cell}">${escapeHtml(value)}</td></tr>`),
    '</table>',
    `<p>${escapeHtml(held)}</p>`,
    '<h2 style="font-size:16px;margin:24px 0 8px">What to do</h2>',
    '<ol style="padding-left:20px">',
    `<li>${escapeHtml(check)}</li>`,
    `<li>Enable the webhook again in the dashboard or with the management API (<code>${escapeHtml(enableApi)}</code>).</li>`,
    '</ol>',
    ...(dashboard
      ? [
          `<p><a href="${escapeHtml(dashboard)}" style="color:#0b57d0;font-weight:600">Open the webhook in the dashboard</a></p>`,
          `<p style="font-size:13px;color:#555555;word-break:break-all">${escapeHtml(dashboard)}</p>`,
        ]
      : []),
    `<p style="font-size:13px;color:#555555">${escapeHtml(footer)}</p>`,
    '</div></body></html>',
    '',
  ].join('\n');

  return Object.freeze({
    subject,
    text,
    html,
    headers: Object.freeze({
      'Message-ID': `<${messageIdLeft(noticeId)}@${domain}>`,
      'X-Webhooks-Notice-Id': asciiLine(noticeId, 200),
      'Auto-Submitted': 'auto-generated',
    }),
  });
}

/**
 * The notice id, or one derived from the webhook and the time of its disable. The engine before
 * the notice outbox passes no `noticeId`; webhook id + `disabledAt` is stable across its tries
 * of one disable and differs for the next disable of the same webhook, which is what a notice
 * id promises.
 */
export function noticeIdOf(info: WebhookDisabledInfo): string {
  if (typeof info.noticeId === 'string' && info.noticeId !== '') return info.noticeId;
  return `${oneLine(info.webhook.id, 200)}.${Number.isFinite(info.disabledAt) ? info.disabledAt : 'unknown'}`;
}

// RFC 5322 id-left is a dot-atom; ours is stricter (no exotic atext), so any mailer keeps it
// byte for byte. Anything else is hashed: still stable per notice, never a header-breaker.
const SAFE_ID = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
function messageIdLeft(noticeId: string): string {
  if (noticeId.length <= 200 && SAFE_ID.test(noticeId)) return noticeId;
  return `sha256-${createHash('sha256').update(noticeId).digest('hex').slice(0, 40)}`;
}

function asciiLine(value: string, max: number): string {
  return oneLine(value, max).replace(/[^\x20-\x7e]/g, '?');
}

function messageIdDomain(value: unknown): string {
  if (value === undefined || value === null) return FALLBACK_DOMAIN;
  const ascii = typeof value === 'string' ? domainToASCII(value) : '';
  if (!/^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*$/.test(ascii) || ascii.length > 253) {
    throw new TypeError('renderDisabledEmail: domain must be a domain name, like acme.example');
  }
  return ascii;
}

function dashboardLink(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  let url: URL | null = null;
  try {
    url = typeof value === 'string' && value.length <= 2048 ? new URL(value) : null;
  } catch {}
  // Only http(s): anything else in an href (javascript:, data:) is a trap for the reader.
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new TypeError('renderDisabledEmail: dashboardUrl must be an absolute http or https URL');
  }
  return url.href;
}
