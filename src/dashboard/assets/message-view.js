/**
 * One delivery as its receiver got it: the payload (the token's claims, pretty-printed, with a
 * copy button), the request headers we sent (credential values masked by the server), and every
 * attempt: time, duration, status or error, response excerpt.
 */
/** @import { Attempt, Message, ViewContext } from './api.js' */
import { copyButton, excerpt, h, time, uid } from './dom.js';
import { DELIVERY_STATUS, formatMs, plural, t, tParts } from './words.js';

/**
 * @param {ViewContext} context
 * @param {string} webhookId
 * @param {string} deliveryId
 */
export async function renderMessage(context, webhookId, deliveryId) {
  const message = await context.api.message(webhookId, deliveryId);
  return h(
    'section',
    { class: 'view message' },
    h(
      'button',
      { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'webhook', id: webhookId }) },
      t('message.back'),
    ),
    h('div', { class: 'bar' }, h('h2', { tabindex: -1 }, message.delivery.event_type)),
    ...messageSections(context, message, 'h3'),
  );
}

/**
 * What the message view shows under its heading (status, ids, payload, headers, attempts): the
 * page's, and the log's side panel's, whose sections are a level down (`h4`).
 *
 * @param {ViewContext} context
 * @param {Message} message
 * @param {'h3' | 'h4'} level The sections' heading.
 */
export function messageSections(context, message, level) {
  const { delivery } = message;
  const payload = JSON.stringify(message.payload, null, 2);
  const copied = h('span', { class: 'hint', role: 'status' });
  const copy = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(payload);
          copied.textContent = t('message.copied');
        } catch {
          copied.textContent = t('message.copyFailed');
        }
      },
    },
    t('message.copy'),
  );
  const headers = Object.entries(message.headers);
  return [
    h(
      'p',
      {},
      h('span', { class: `badge badge-${delivery.status}` }, DELIVERY_STATUS[delivery.status] ?? delivery.status),
      ' ',
      time(delivery.created_on),
      ' · ',
      plural(delivery.attempt_count, 'count.attempts'),
    ),
    h(
      'p',
      { class: 'hint ids' },
      tParts('message.ids', {
        delivery: h('span', {}, h('code', {}, delivery.id), ' ', copyButton(context, delivery.id, t('copy.deliveryId'))),
        event: h('span', {}, h('code', {}, delivery.event_id), ' ', copyButton(context, delivery.event_id, t('copy.eventId'))),
      }),
    ),
    panel(
      level,
      t('message.payload'),
      h('p', { class: 'hint' }, t(message.format === 'standard-webhooks' ? 'message.payloadHintStandard' : 'message.payloadHint')),
      h('pre', { class: 'payload', tabindex: 0, 'aria-label': t('message.payload') }, payload),
      h('div', { class: 'buttons' }, copy, copied),
    ),
    panel(
      level,
      t('message.headers'),
      h(
        'table',
        { class: 'headers' },
        h('caption', { class: 'hint' }, t('message.headersHint')),
        h(
          'tbody',
          {},
          headers.map(([name, value]) => h('tr', {}, h('th', { scope: 'row' }, name), h('td', {}, value))),
        ),
      ),
    ),
    panel(
      level,
      t('log.attempts'),
      message.attempts.length === 0
        ? h('p', { class: 'hint' }, t('attempt.none'))
        : h(
            'ol',
            {},
            message.attempts.map((a) => attemptItem(a, true)),
          ),
    ),
  ];
}

/**
 * @param {'h3' | 'h4'} level
 * @param {string} title
 * @param {...HTMLElement} content
 */
function panel(level, title, ...content) {
  const id = uid('section');
  return h('section', { class: 'panel', 'aria-labelledby': id }, h(level, { id }, title), ...content);
}

/**
 * One attempt: when, its outcome, how long it took, and the response's excerpt (the log's
 * attempts and the message view's, which also shows the error beside an HTTP status).
 *
 * @param {Attempt} attempt
 * @param {boolean} [withError]
 */
export function attemptItem(attempt, withError = false) {
  const outcome = attempt.status_code
    ? `HTTP ${attempt.status_code}`
    : `${attempt.error_kind ?? t('attempt.error')}: ${attempt.error ?? ''}`;
  return h(
    'li',
    { class: 'attempt' },
    h(
      'p',
      {},
      time(attempt.started_on),
      ' · ',
      h('span', { class: attempt.success ? 'ok' : 'bad' }, t(attempt.success ? 'attempt.ok' : 'attempt.failed')),
      ` · ${outcome} · ${formatMs(attempt.duration_ms)}`,
    ),
    withError && attempt.error && attempt.status_code ? h('p', { class: 'hint' }, attempt.error) : null,
    attempt.response_excerpt ? excerpt(attempt.response_excerpt) : null,
  );
}
