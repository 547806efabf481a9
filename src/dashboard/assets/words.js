/**
 * What the page says, in words a person understands: statuses, and the API's error codes mapped
 * to the form field they belong to. Every code the server answers with has words here; only a
 * code we cannot know (a host's own, from in front of the API) shows the server's message.
 */

/** @import { HttpErrorCode } from '../../http/errors.js' */
/** @import { Webhook } from './api.js' */

/**
 * @typedef {object} ApiFailure What `explain` reads from an error: an ApiError (api.js), or anything.
 * @property {number} [status] The HTTP status; 0 or absent when there was no answer.
 * @property {string} [code] The `code` of the answer's first error.
 * @property {string} [message] The server's own message.
 */

/** Said when this page and the server disagree on a request's shape: only a reload can help. */
const RELOAD = 'This page is out of date with the server. Reload the page and try again.';
const OUR_SIDE = 'Something went wrong on our side. Try again in a moment.';

/**
 * Error code → [field or null, words]: one entry for every code the server answers with
 * (`HTTP_ERROR_CODES`; type-checked, and test/dashboard/words.test.ts checks it too), and
 * `NETWORK` for no answer at all.
 *
 * @type {Readonly<Record<HttpErrorCode | 'NETWORK', readonly [field: string | null, words: string]>>}
 */
export const ERROR_WORDS = Object.freeze({
  INVALID_NAME: ['name', 'Enter a name of up to 255 characters, without line breaks.'],
  INVALID_DESCRIPTION: ['description', 'The description can be up to 1000 characters.'],
  INVALID_ENDPOINT: ['endpoint', 'Enter the full address of your endpoint, starting with https://, like https://example.com/webhooks.'],
  ENDPOINT_NOT_ALLOWED: [
    'endpoint',
    'This address is on a private or reserved network that webhooks may not reach. Use your endpoint’s public address.',
  ],
  SECRETS_KEY_REQUIRED: [
    null,
    'This option needs secrets stored encrypted, and this server has no key to encrypt them with. Ask its administrator to set one.',
  ],
  INVALID_HEADERS: [
    'headers',
    'Check the headers: at most 20, names of letters, digits and dashes (not Content-Type, Host, User-Agent or webhook-…), values of plain text without line breaks.',
  ],
  INVALID_TIMEOUT_MS: ['timeout_ms', 'Enter a timeout from 1 to 30 seconds.'],
  INVALID_RATE_LIMIT_PER_SECOND: ['rate_limit_per_second', 'Enter a rate limit from 1 to 1000 requests per second.'],
  INVALID_ORDERING: ['ordering', 'Choose the delivery order: none, or per subject.'],
  // Signing formats and endpoint auth
  INVALID_FORMAT: ['format', 'Choose how deliveries are signed: JWT or Standard Webhooks.'],
  INVALID_AUTH: ['auth', 'Check the endpoint authentication: every field it asks for, and a certificate with its own private key.'],
  INVALID_GRACE_MS: [null, 'The old secret can keep signing for at most 7 days.'],
  INVALID_EVENT_TYPES: ['event_types', 'Choose at least one event (at most 50).'],
  UNKNOWN_EVENT_TYPE: ['event_types', 'One of the chosen events is not offered any more. Remove it and try again.'],
  WEBHOOK_LIMIT_REACHED: [
    null,
    'You have reached the number of webhooks your plan allows. Delete one you no longer need, or upgrade your plan.',
  ],
  INVALID_SINCE: ['since', 'Enter a date and time.'],
  INVALID_UNTIL: ['until', 'Enter a date and time.'],
  INVALID_SEARCH: ['search', 'Enter an event id or a delivery id, as the log shows them.'],
  INVALID_SUBJECT: ['subject', 'Enter a user id, an organization code or an email.'],
  INVALID_RANGE: [null, RELOAD],
  INVALID_EVENT_TYPE: ['event_type', 'That event is not offered any more. Reload the page and choose another one.'],
  INVALID_STATUS: [null, 'That status is not offered any more. Reload the page and choose another one.'],
  INVALID_PAGE_SIZE: [null, RELOAD],
  INVALID_NEXT_TOKEN: [null, 'That page of the delivery log is out of date. Refresh the log and try again.'],
  INVALID_RESUME_HELD: [null, RELOAD],
  INVALID_REQUEST: [null, 'One of the values was refused. Check them and try again.'],
  INVALID_JSON: [null, RELOAD],
  INVALID_BODY: [null, RELOAD],
  UNKNOWN_FIELD: [null, RELOAD],
  UNKNOWN_PARAMETER: [null, RELOAD],
  INVALID_HOST: [null, RELOAD],
  INVALID_REQUEST_TARGET: [null, RELOAD],
  UNSUPPORTED_MEDIA_TYPE: [null, RELOAD],
  WEBHOOK_NOT_FOUND: [null, 'This webhook no longer exists. It may have been deleted.'],
  EVENT_NOT_FOUND: [null, 'This event is no longer kept. Old events are removed after a while.'],
  DELIVERY_NOT_FOUND: [null, 'This delivery is no longer kept. Old deliveries are removed after a while. Refresh the log.'],
  NOT_FOUND: [null, 'This no longer exists. Reload the page.'],
  ASSET_NOT_FOUND: [null, RELOAD],
  WEBHOOK_DISABLED: [null, 'This webhook is disabled. Enable it first, then try again.'],
  INVALID_CREDENTIALS: [null, 'You are not signed in, or not allowed to manage webhooks here. Sign in again and reload the page.'],
  // Not a wire code: INVALID_CREDENTIALS as a page opened from a link says it (setLinkSession).
  LINK_ENDED: [
    null,
    'Your session from a dashboard link has ended. Open the dashboard again from where you found the link, or ask for a new one.',
  ],
  READ_ONLY_ACCESS: [
    null,
    'You can look but not change anything here: this link gives read-only access. Ask for a link that lets you manage webhooks.',
  ],
  CROSS_SITE_REQUEST: [null, 'This change was refused because it did not come from this page. Reload the page and try again.'],
  PAYLOAD_TOO_LARGE: [null, 'That is too much text. Shorten the description and try again.'],
  SERVICE_UNAVAILABLE: [null, 'The service is restarting. Try again in a moment.'],
  ROUTE_NOT_FOUND: [null, 'This server does not offer this yet. Ask the service to update.'],
  METHOD_NOT_ALLOWED: [null, 'This server does not offer this yet. Ask the service to update.'],
  INTERNAL_ERROR: [null, OUR_SIDE],
  NETWORK: [null, 'Could not reach the server. Check your connection and try again.'],
});

let linkSession = false;
/** The page was opened from a dashboard link (its element has `session="link"`). @param {boolean} on */
export function setLinkSession(on) {
  linkSession = on;
}

/**
 * `{ field, text }` for an ApiError (field is null when the error belongs to the whole form).
 *
 * @param {unknown} error
 * @returns {{ field: string | null, text: string }}
 */
export function explain(error) {
  const failure = /** @type {ApiFailure | null | undefined} */ (error);
  // A link's session has no sign-in to go back to: what ended is the link's session.
  const code = failure?.code === 'INVALID_CREDENTIALS' && linkSession ? 'LINK_ENDED' : failure?.code;
  if (code !== undefined && Object.hasOwn(ERROR_WORDS, code)) {
    const [field, text] = ERROR_WORDS[/** @type {keyof typeof ERROR_WORDS} */ (code)];
    return { field, text: current.errors[code] ?? text };
  }
  const status = failure?.status ?? 0;
  if (status >= 500 || !status) return { field: null, text: current.errors.INTERNAL_ERROR ?? OUR_SIDE };
  // A 4xx of the host's own (a 429 in front of the API): its message is the best we have.
  return { field: null, text: failure?.message || t('error.refused') };
}

/**
 * The status line of a webhook.
 *
 * @param {Pick<Webhook, 'status' | 'disabled_reason' | 'disabled_on' | 'failing_since'>} webhook
 * @param {(iso: string | null) => string} formatTime
 * @param {boolean} [ago] `formatTime` says how long ago ("2 hours ago"), not when.
 * @returns {{ kind: 'enabled' | 'warning' | 'disabled' | 'failing', text: string }}
 */
export function webhookStatus(webhook, formatTime, ago = false) {
  if (webhook.status === 'disabled') {
    if (webhook.disabled_reason === 'failing') {
      const since = formatTime(webhook.failing_since ?? webhook.disabled_on);
      return { kind: 'failing', text: t(ago ? 'status.disabledFailingAgo' : 'status.disabledFailing', { since }) };
    }
    if (webhook.disabled_reason === 'gone') return { kind: 'failing', text: t('status.disabledGone') };
    return { kind: 'disabled', text: t('status.disabled') };
  }
  if (webhook.failing_since)
    return { kind: 'warning', text: t(ago ? 'status.failingAgo' : 'status.failing', { since: formatTime(webhook.failing_since) }) };
  return { kind: 'enabled', text: t('status.enabled') };
}

/**
 * Delivery statuses in words; the current locale's replace these when it loads (useLocale), so
 * views that read it after that speak the locale.
 *
 * @type {Record<string, string>}
 */
export const DELIVERY_STATUS = {
  pending: 'Pending',
  held: 'Held (webhook disabled)',
  delivered: 'Delivered',
  failed: 'Failed',
};

/**
 * "user.created" → "User" ("Utilisateur" in French): the table's `resource.*`, else, for a
 * host's own resource, words made from the code: "billing_run.done" → "Billing run".
 *
 * @param {string} code
 */
export function resourceLabel(code) {
  const resource = code.includes('.') ? code.slice(0, code.indexOf('.')) : code;
  const words = resource.replace(/[_-]+/g, ' ');
  return current.ui[`resource.${resource}`] ?? words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * An event type's name: a built-in's from the table (`event.user.created`), a host's own as the
 * catalog has it (a host's type may not take a built-in's code).
 *
 * @param {{ code: string, name: string, origin: string }} type
 */
export const eventName = (type) => (BUILT_IN.has(type.origin) && current.ui[`event.${type.code}`]) || type.name;

/** The origins of the built-in types (Kinde's, and the engine's own: memberships, invitations). */
const BUILT_IN = new Set(['kinde', 'identity-webhooks']);

/**
 * `n` things in the current locale's words and plural form: the table's `{key}.one` or
 * `{key}.other`, by `Intl.PluralRules` (French says "0 tentative", English "0 attempts").
 *
 * @param {number} n
 * @param {'count.attempts' | 'count.recovered' | 'count.waiting' | 'count.sent' | 'count.held'} key
 */
export const plural = (n, key) =>
  t(/** @type {UiKey} */ (`${key}.${plurals().select(n) === 'one' ? 'one' : 'other'}`), {
    count: formatNumber(n),
  });

/** @type {Map<string, Intl.NumberFormat>} */
const numberFormats = new Map();
/** @type {Intl.PluralRules | undefined} */
let pluralRules;
/**
 * One number format per locale and options, made once: making one is far dearer than using it,
 * and a list of webhooks formats a few numbers per card.
 *
 * @param {Intl.NumberFormatOptions} options
 */
function numberFormat(options) {
  const key = `${current.locale} ${JSON.stringify(options)}`;
  let format = numberFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(current.locale, options);
    numberFormats.set(key, format);
  }
  return format;
}
/** The current locale's plural rules, made once per locale. */
function plurals() {
  if (pluralRules?.resolvedOptions().locale !== current.locale) pluralRules = new Intl.PluralRules(current.locale);
  return pluralRules;
}

/** @typedef {keyof typeof import('./words-en.js').default.ui} UiKey */

/**
 * A locale's table (words-en.js, words-fr.js, words-de.js): its UI strings, and for a locale
 * other than English its error texts (by wire code) and delivery statuses.
 *
 * @typedef {object} LocaleTable
 * @property {Partial<Record<string, string>>} ui
 * @property {Partial<Record<string, string>>} [errors]
 * @property {Partial<Record<string, string>>} [statuses]
 */

/** The locales with a table. */
export const LOCALES = /** @type {const} */ (['en', 'fr', 'de']);
const ENGLISH_STATUS = { ...DELIVERY_STATUS };
/** @type {{ locale: string, ui: Partial<Record<string, string>>, errors: Partial<Record<string, string>> }} */
let current = { locale: 'en', ui: {}, errors: {} };

/**
 * Loads the table of the best locale we have for `tag` (`fr-CA` → fr; anything else: English).
 * Call before rendering; every element on the page shares the locale.
 *
 * @param {string | null | undefined} tag
 * @returns {Promise<string>} The locale now in use.
 */
export async function useLocale(tag) {
  const base = (tag ?? '').toLowerCase().split(/[-_]/, 1)[0] ?? '';
  const locale = base === 'fr' || base === 'de' ? base : 'en';
  // One table per reader: the other locales' are never fetched.
  /** @type {LocaleTable} */
  const table = (await (locale === 'fr' ? import('./words-fr.js') : locale === 'de' ? import('./words-de.js') : import('./words-en.js')))
    .default;
  current = { locale, ui: table.ui, errors: table.errors ?? {} };
  Object.assign(DELIVERY_STATUS, ENGLISH_STATUS, table.statuses ?? {});
  // The browser's first Intl formatter loads its locale data, which takes a while: done in the
  // next task, while the view's first API calls (started once this returns) are on the wire.
  setTimeout(() => formatNumber(0));
  return locale;
}

/** The locale in use (`en`, `fr`, `de`), for Intl formatting. */
export const locale = () => current.locale;

/**
 * The current locale's words for `key`, with `{name}` filled in from `values`.
 *
 * @param {UiKey} key
 * @param {Record<string, string | number>} [values]
 */
export function t(key, values) {
  const text = current.ui[key] ?? key;
  return values ? text.replace(/\{(\w+)\}/g, (m, name) => (name in values ? String(values[name]) : m)) : text;
}

/**
 * Like `t`, for words with elements in them: the text split at its `{name}` placeholders, each
 * replaced by its value as it is (a node stays a node), for `h` to append.
 *
 * @template V
 * @param {UiKey} key
 * @param {Record<string, V>} values
 * @returns {(string | V)[]}
 */
export function tParts(key, values) {
  const text = current.ui[key] ?? key;
  return text.split(/\{(\w+)\}/).map((part, i) => (i % 2 && part in values ? /** @type {V} */ (values[part]) : part));
}

/** @param {number} n */
export const formatNumber = (n) => numberFormat({}).format(n);

/** A duration in milliseconds, in the locale's words and digits. @param {number} ms */
export const formatMs = (ms) => numberFormat({ style: 'unit', unit: 'millisecond' }).format(ms);

/** `0.987` → "98.7%" ("98,7 %" in French); null → "–". @param {number | null} rate */
export function formatPercent(rate) {
  if (rate === null) return '–';
  return numberFormat({ style: 'percent', maximumFractionDigits: rate > 0.99 && rate < 1 ? 1 : 0 }).format(rate);
}
