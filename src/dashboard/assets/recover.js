/**
 * Recover failed since…: queues again every failed delivery of this webhook whose event came at
 * or after the chosen time, then says how many.
 */
/** @import { ViewContext } from './api.js' */
import { h, replace, uid } from './dom.js';
import { explain, plural, t } from './words.js';

/**
 * @param {ViewContext} context
 * @param {string} webhookId
 * @param {() => void} onRecovered
 */
export function recoverForm(context, webhookId, onRecovered) {
  const formId = uid('recover');
  const inputId = uid('since');
  const input = h('input', { id: inputId, type: 'datetime-local', step: 1, value: localValue(Date.now() - 24 * 3600_000) });
  const result = h('div', { class: 'result', role: 'status' });
  const opener = h(
    'button',
    {
      type: 'button',
      'data-write': '',
      'aria-expanded': 'false',
      'aria-controls': formId,
      onclick: () => show(opener.getAttribute('aria-expanded') !== 'true'),
    },
    t('recover.open'),
  );
  const form = h(
    'form',
    { class: 'inline-form recover', id: formId, hidden: true, novalidate: true, onsubmit: recover },
    h('p', { class: 'hint' }, t('recover.hint')),
    h('div', { class: 'field' }, h('label', { for: inputId }, t('recover.since')), input),
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'submit' }, t('recover.submit')),
      h('button', { type: 'button', onclick: cancel }, t('common.cancel')),
    ),
  );
  return h('div', { class: 'recover-area' }, opener, form, result);

  function cancel() {
    show(false);
    opener.focus();
  }

  /** @param {boolean} open */
  function show(open) {
    opener.setAttribute('aria-expanded', String(open));
    form.hidden = !open;
    if (open) input.focus();
  }

  /** @param {SubmitEvent} event */
  async function recover(event) {
    event.preventDefault();
    const since = new Date(input.value); // datetime-local: the reader's own time zone
    if (Number.isNaN(since.getTime())) {
      replace(result, h('span', { class: 'error', role: 'alert' }, explain({ code: 'INVALID_SINCE' }).text));
      return;
    }
    replace(result, t('recover.running'));
    try {
      const { recovered } = await context.api.recover(webhookId, since.toISOString());
      replace(result, recovered === 0 ? t('recover.none') : plural(recovered, 'count.recovered'));
      show(false);
      opener.focus();
      onRecovered();
    } catch (error) {
      replace(result, h('span', { class: 'error', role: 'alert' }, explain(error).text));
    }
  }
}

/**
 * `yyyy-mm-ddThh:mm:ss` in local time, as a datetime-local input wants it.
 *
 * @param {number} ms
 */
function localValue(ms) {
  const d = new Date(ms);
  /** @param {number} n */
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
