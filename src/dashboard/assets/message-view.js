/**
 * One delivery as its receiver got it: the payload (the token's claims, pretty-printed, with a
 * copy button), the request headers we sent (credential values masked by the server), and every
 * attempt: time, duration, status or error, response excerpt.
 */
/** @import { Attempt, ViewContext } from './api.js' */
import { excerpt, h, time, uid } from './dom.js';
import { DELIVERY_STATUS, plural } from './words.js';

/**
 * @param {ViewContext} context
 * @param {string} webhookId
 * @param {string} deliveryId
 */
export async function renderMessage(context, webhookId, deliveryId) {
  const message = await context.api.message(webhookId, deliveryId);
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
          copied.textContent = 'Payload copied.';
        } catch {
          copied.textContent = 'Could not copy: select the payload and copy it instead.';
        }
      },
    },
    'Copy payload',
  );
  const headers = Object.entries(message.headers);
  return h(
    'section',
    { class: 'view message' },
    h(
      'button',
      { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'webhook', id: webhookId }) },
      'Back to the webhook',
    ),
    h('div', { class: 'bar' }, h('h2', { tabindex: -1 }, delivery.event_type)),
    h(
      'p',
      {},
      h('span', { class: `badge badge-${delivery.status}` }, DELIVERY_STATUS[delivery.status] ?? delivery.status),
      ' ',
      time(delivery.created_on),
      ' · ',
      plural(delivery.attempt_count, 'attempt', 'attempts'),
    ),
    h('p', { class: 'hint' }, 'Delivery id (webhook-id) ', h('code', {}, delivery.id), ' · event ', h('code', {}, delivery.event_id)),
    panel(
      'Payload',
      h(
        'p',
        { class: 'hint' },
        'The claims of the signed token your endpoint received (a JWT, verified with the public keys). timestamp and iat are those of the last attempt.',
      ),
      h('pre', { class: 'payload', tabindex: 0, 'aria-label': 'Payload' }, payload),
      h('div', { class: 'buttons' }, copy, copied),
    ),
    panel(
      'Request headers',
      h(
        'table',
        { class: 'headers' },
        h('caption', { class: 'hint' }, 'Sent with every attempt; credential values are hidden.'),
        h(
          'tbody',
          {},
          headers.map(([name, value]) => h('tr', {}, h('th', { scope: 'row' }, name), h('td', {}, value))),
        ),
      ),
    ),
    panel(
      'Attempts',
      message.attempts.length === 0 ? h('p', { class: 'hint' }, 'No attempt yet.') : h('ol', {}, message.attempts.map(attemptItem)),
    ),
  );
}

/**
 * @param {string} title
 * @param {...HTMLElement} content
 */
function panel(title, ...content) {
  const id = uid('section');
  return h('section', { class: 'panel', 'aria-labelledby': id }, h('h3', { id }, title), ...content);
}

/** @param {Attempt} attempt */
function attemptItem(attempt) {
  const outcome = attempt.status_code ? `HTTP ${attempt.status_code}` : `${attempt.error_kind ?? 'error'}: ${attempt.error ?? ''}`;
  return h(
    'li',
    { class: 'attempt' },
    h(
      'p',
      {},
      time(attempt.started_on),
      ' · ',
      h('span', { class: attempt.success ? 'ok' : 'bad' }, attempt.success ? 'Succeeded' : 'Failed'),
      ` · ${outcome} · ${attempt.duration_ms} ms`,
    ),
    attempt.error && attempt.status_code ? h('p', { class: 'hint' }, attempt.error) : null,
    attempt.response_excerpt ? excerpt(attempt.response_excerpt) : null,
  );
}
