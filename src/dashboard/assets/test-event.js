/**
 * Send test event: one event of a chosen type (a subscribed one by default) to this webhook only;
 * then the outcome of its first attempt, read from the delivery's attempts as soon as it exists.
 */
/** @import { Attempt, ViewContext, Webhook } from './api.js' */
import { excerpt, h, replace, uid } from './dom.js';
import { explain, formatMs, t } from './words.js';

/** How long to wait for the first attempt before saying it will show in the log. */
const WAIT_MS = 15_000;
const POLL_MS = 300;

/**
 * @param {ViewContext} context
 * @param {Webhook} webhook
 * @param {() => void} onSent
 */
export function testEventPanel(context, webhook, onSent) {
  const id = uid('test-type');
  const select = h(
    'select',
    { id, name: 'event_type' },
    webhook.event_types.map((code) => h('option', { value: code }, code)),
  );
  // The rest of the catalog, after the subscribed types (a test may use any type).
  context.api.eventTypes().then(
    (types) => {
      const others = types.filter((t) => !webhook.event_types.includes(t.code));
      if (others.length)
        select.append(
          h(
            'optgroup',
            { label: t('test.others') },
            others.map((t) => h('option', { value: t.code }, t.code)),
          ),
        );
    },
    () => {}, // the subscribed types are still there to choose from
  );
  const result = h('div', { class: 'result', role: 'status' });
  let busy = false;
  return h(
    'form',
    { class: 'inline-form test-event', novalidate: true, onsubmit: send },
    h('div', { class: 'field' }, h('label', { for: id }, t('test.type')), select),
    h('div', { class: 'buttons' }, h('button', { type: 'submit' }, t('test.send'))),
    result,
  );

  /** @param {SubmitEvent} event */
  async function send(event) {
    event.preventDefault();
    if (busy) return;
    busy = true;
    replace(result, t('test.sending'));
    try {
      const sent = await context.api.sendTest(webhook.id, select.value);
      replace(result, t('test.sent'));
      const attempt = await firstAttempt(context, webhook.id, sent.delivery_id);
      replace(result, attempt ? describe(attempt) : t('test.queued'));
      onSent();
    } catch (error) {
      replace(result, h('span', { class: 'error', role: 'alert' }, explain(error).text));
    } finally {
      busy = false;
    }
  }
}

/**
 * @param {ViewContext} context
 * @param {string} webhookId
 * @param {string} deliveryId
 * @returns {Promise<Attempt | null>}
 */
async function firstAttempt(context, webhookId, deliveryId) {
  const end = Date.now() + WAIT_MS;
  while (Date.now() < end) {
    const attempts = await context.api.attempts(webhookId, deliveryId);
    if (attempts[0]) return attempts[0];
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return null;
}

/** @param {Attempt} attempt */
function describe(attempt) {
  const duration = formatMs(attempt.duration_ms);
  if (attempt.success) return h('p', { class: 'ok' }, t('test.delivered', { status: attempt.status_code ?? '', duration }));
  const why = attempt.status_code
    ? t('test.answered', { status: attempt.status_code })
    : (attempt.error ?? attempt.error_kind ?? t('test.noAnswer'));
  return h(
    'div',
    {},
    h('p', { class: 'bad' }, t('test.failed', { why, duration })),
    attempt.response_excerpt ? excerpt(attempt.response_excerpt) : null,
  );
}
