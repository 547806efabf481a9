/**
 * `identity-webhooks/email`: the account holder's email when a webhook is disabled.
 *
 * @example
 * ```ts
 * import { smtpNotifier } from 'identity-webhooks/email';
 * createWebhooks({ store, keys, issuer, notifier: smtpNotifier({ url, from, to: (info) => ownerOf(info.environment) }) });
 * ```
 */

export type { Recipients } from './addresses.js';
export type { SmtpNotifier, SmtpNotifierOptions, SmtpTransportOptions } from './notifier.js';
export { smtpNotifier } from './notifier.js';
export type { DisabledEmail, RenderDisabledEmailOptions } from './render.js';
export { renderDisabledEmail } from './render.js';
