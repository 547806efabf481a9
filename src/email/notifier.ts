import type { SMTPPoolOptions } from 'nodemailer';
import type { Logger, Notifier, WebhookDisabledInfo } from '../types.js';
import { parseFrom, parseRecipients, type Recipients } from './addresses.js';
import { loadNodemailer } from './load.js';
import { renderDisabledEmail } from './render.js';

/** SMTP connection settings in nodemailer's own shape (host, port, secure, auth, tls, pool, timeouts…). */
export type SmtpTransportOptions = SMTPPoolOptions;

/** Options of {@link smtpNotifier}. */
export interface SmtpNotifierOptions {
  /**
   * The SMTP server: `smtps://user:pass@smtp.example.com` (implicit TLS, port 465) or
   * `smtp://…:587` (STARTTLS when offered; percent-encode special characters in the password),
   * or nodemailer's SMTP transport options. Timeouts you set there win over ours.
   */
  url: string | SmtpTransportOptions;
  /** The sender, `Acme <webhooks@acme.example>`; its domain also names the `Message-ID`. */
  from: string;
  /** The account holder's address(es) for the notice's environment. Nothing or an invalid address rejects the send. */
  to: (info: WebhookDisabledInfo) => Recipients | Promise<Recipients>;
  /** A link to the webhook in your dashboard, shown in the email (http or https). */
  dashboardUrl?: (info: WebhookDisabledInfo) => string | null | undefined | Promise<string | null | undefined>;
  /** The most one send may take, connecting and handing over included. Default 60 s. */
  timeoutMs?: number;
  /** Told when the server refused some recipients but accepted others (the send still counts as done). */
  logger?: Pick<Logger, 'warn'>;
}

/** A {@link Notifier} that emails the account holder; `close()` releases its SMTP connections. */
export interface SmtpNotifier extends Notifier, AsyncDisposable {
  /** Resolves once the server accepted the mail; rejects (for the notice outbox to try again) otherwise. */
  webhookDisabled(info: WebhookDisabledInfo): Promise<void>;
  /** Waits for sends in flight, then closes the pooled connections. Later sends reject. */
  close(): Promise<void>;
}

// A dead or silent server must fail a notice in seconds, not in nodemailer's minutes (2 min to
// connect, 10 min of silence): the outbox tries again later anyway, and a stuck send holds its lease.
const DEFAULTS: SMTPPoolOptions = {
  pool: true,
  // Notices are rare (one per disabled webhook); two connections absorb a burst of disables.
  maxConnections: 2,
  idleTimeout: 60_000,
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 30_000,
  dnsTimeout: 10_000,
};
const OTHER_TRANSPORTS = ['sendmail', 'streamTransport', 'jsonTransport', 'SES'];

/**
 * Emails the account holder when a webhook is disabled after 72 hours of failures, over SMTP
 * through a small pool of nodemailer connections. The content is {@link renderDisabledEmail}'s.
 * A refused connection, a failed login or a refused recipient rejects, so the notice outbox
 * tries it again on its back-off; a resend carries the same `Message-ID`.
 *
 * @example
 * ```ts
 * import { smtpNotifier } from 'identity-webhooks/email';
 * const notifier = smtpNotifier({
 *   url: 'smtps://webhooks%40acme.example:app-password@smtp.example.com',
 *   from: 'Acme <webhooks@acme.example>',
 *   to: (info) => accountHolderEmail(info.environment),
 *   dashboardUrl: (info) => `https://acme.example/settings/webhooks/${info.webhook.id}`,
 * });
 * const hooks = createWebhooks({ store, keys, issuer, notifier });
 * // on shutdown, after hooks.close():
 * await notifier.close();
 * ```
 */
export function smtpNotifier(options: SmtpNotifierOptions): SmtpNotifier {
  if (typeof options !== 'object' || options === null) throw new TypeError('smtpNotifier: options are required');
  const from = parseFrom(options.from);
  const { to, dashboardUrl, logger } = options;
  if (typeof to !== 'function') throw new TypeError('smtpNotifier: to must be a function (info) => address(es)');
  if (dashboardUrl !== undefined && typeof dashboardUrl !== 'function') {
    throw new TypeError('smtpNotifier: dashboardUrl must be a function (info) => URL');
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new TypeError('smtpNotifier: timeoutMs must be an integer from 1 to 600000');
  }
  if (logger !== undefined && (typeof logger !== 'object' || logger === null || typeof logger.warn !== 'function')) {
    throw new TypeError('smtpNotifier: logger must have a warn(message, meta) method');
  }
  const transporter = createTransport(options.url);

  const inFlight = new Set<Promise<unknown>>();
  let closed = false;

  const send = async (info: WebhookDisabledInfo): Promise<void> => {
    const recipients = parseRecipients(await to(info));
    const link = dashboardUrl ? await dashboardUrl(info) : undefined;
    const mail = renderDisabledEmail(info, { domain: from.domain, dashboardUrl: link });
    const { 'Message-ID': messageId, ...headers } = mail.headers;
    let sent: { accepted?: unknown[]; rejected?: unknown[] };
    try {
      sent = await transporter.sendMail({
        from: { name: from.name, address: from.address },
        to: recipients.map((r) => ({ name: r.name, address: r.address })),
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId,
        headers,
        // One deadline over queueing, connecting, login and transfer: socket timeouts alone
        // never end a server that trickles its replies.
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`smtpNotifier: the notice for webhook ${info.webhook.id} was not sent: ${reason}`, { cause: error });
    }
    if (sent.rejected && sent.rejected.length > 0) {
      // Some recipient got it: resending would repeat it to them for every refused one.
      logger?.warn(`smtpNotifier: the notice for webhook ${info.webhook.id} was refused for some recipients`, {
        errorKind: 'recipients_refused',
        webhookId: info.webhook.id,
        noticeId: info.noticeId,
        messageId,
        rejected: sent.rejected.map(String),
      });
    }
  };

  const notifier: SmtpNotifier = {
    async webhookDisabled(info) {
      if (closed) throw new Error('smtpNotifier: closed');
      const task = send(info);
      inFlight.add(task);
      try {
        await task;
      } finally {
        inFlight.delete(task);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...inFlight]);
      transporter.close();
    },
    [Symbol.asyncDispose]() {
      return notifier.close();
    },
  };
  return Object.freeze(notifier);
}

/** Checks `url` and builds the transport now, so a bad setting fails at startup, not at the first disable. */
function createTransport(url: unknown) {
  let settings: SMTPPoolOptions;
  if (typeof url === 'string') {
    checkUrl(url);
    settings = { ...DEFAULTS, url };
  } else if (typeof url === 'object' && url !== null && !Array.isArray(url)) {
    const given = url as SMTPPoolOptions & Record<string, unknown>;
    if (typeof given.send === 'function' || OTHER_TRANSPORTS.some((key) => given[key])) {
      throw new TypeError('smtpNotifier: url must be SMTP settings; for another transport use renderDisabledEmail with your own notifier');
    }
    if (given.url !== undefined) checkUrl(given.url);
    else if (typeof given.host !== 'string' && typeof given.service !== 'string') {
      throw new TypeError('smtpNotifier: url options must have a url, host or service');
    }
    // A copy, one level deep, so later changes to the host's object cannot redirect our mail.
    settings = { ...DEFAULTS, ...given };
    if (given.auth) settings.auth = { ...given.auth };
    if (given.tls) settings.tls = { ...given.tls };
  } else {
    throw new TypeError('smtpNotifier: url must be an smtp:// or smtps:// URL or SMTP transport options');
  }
  // The message is ours, never a file path or URL to fetch.
  settings.disableFileAccess = true;
  settings.disableUrlAccess = true;
  try {
    return loadNodemailer().createTransport(settings as SMTPPoolOptions & { pool: true });
  } catch (error) {
    throw new TypeError(`smtpNotifier: url is not usable (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
}

// The URL carries the password: never repeat it in an error message.
function checkUrl(value: unknown): void {
  let url: URL | null = null;
  try {
    url = typeof value === 'string' ? new URL(value) : null;
  } catch {}
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')) {
    throw new TypeError('smtpNotifier: url must be an smtp:// or smtps:// URL');
  }
  if (!url.hostname) throw new TypeError('smtpNotifier: url must name a host');
}
