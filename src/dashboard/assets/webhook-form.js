/**
 * The webhook form, for Add webhook and for a webhook's settings: Name, Description, Endpoint URL,
 * and the events, chosen in the Add event dialog and shown as removable chips. The server judges
 * every value (the browser's own validation is off), so its errors appear next to their field,
 * as alerts, in plain words.
 */
/** @import { ViewContext, Webhook, WebhookFields } from './api.js' */

import { advancedSection } from './advanced.js';
import { h, replace, uid } from './dom.js';
import { chooseEvents } from './event-dialog.js';
import { explain, t } from './words.js';

/**
 * @param {ViewContext} context
 * @param {object} options
 * @param {Webhook | null} options.webhook The webhook whose settings these are; null for a new one.
 * @param {(fields: WebhookFields) => Promise<void>} options.onSave Throws the server's refusal.
 * @param {() => void} [options.onCancel] Absent: no Cancel button.
 */
export function webhookForm(context, { webhook, onSave, onCancel }) {
  const selected = [...(webhook?.event_types ?? [])];
  const name = field(t('form.name'), h('input', { name: 'name', autocomplete: 'off', maxlength: 255, value: webhook?.name ?? '' }));
  const description = field(
    t('form.description'),
    h('textarea', { name: 'description', rows: 2, maxlength: 1000, value: webhook?.description ?? '' }),
    t('form.descriptionHint'),
  );
  const endpoint = field(
    t('form.endpoint'),
    h('input', {
      name: 'endpoint',
      type: 'url',
      inputmode: 'url',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'https://example.com/webhooks',
      value: webhook?.endpoint ?? '',
    }),
    t('form.endpointHint'),
  );
  const chips = h('div', { class: 'chips-area' });
  const addEvent = h('button', { type: 'button', onclick: () => pickEvents() }, t('form.addEvent'));
  const eventsSlot = h('div', { class: 'slot' });
  const legendId = uid('events');
  const events = h(
    'div',
    { class: 'field', role: 'group', 'aria-labelledby': legendId },
    h('span', { class: 'field-label', id: legendId }, t('webhook.events')),
    chips,
    addEvent,
    eventsSlot,
  );
  const advanced = advancedSection(webhook);
  const formSlot = h('div', { class: 'slot' });
  let busy = false;
  const form = h(
    'form',
    { class: 'webhook-form', novalidate: true, onsubmit: submit },
    name.wrap,
    description.wrap,
    endpoint.wrap,
    events,
    advanced.element,
    formSlot,
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'submit', class: 'primary' }, t('common.save')),
      onCancel ? h('button', { type: 'button', onclick: onCancel }, t('common.cancel')) : null,
    ),
  );
  renderChips();
  return form;

  /** @param {number} [focusAt] The index of the chip whose Remove button gets focus. */
  function renderChips(focusAt) {
    if (selected.length === 0) {
      replace(chips, h('p', { class: 'hint' }, t('form.noEvents')));
      return;
    }
    const list = h(
      'ul',
      { class: 'chips', 'aria-label': t('form.chosen') },
      selected.map((code, index) =>
        h(
          'li',
          { class: 'chip' },
          h('span', { class: 'code' }, code),
          h(
            'button',
            { type: 'button', class: 'chip-remove', 'aria-label': t('form.remove', { code }), onclick: () => remove(index) },
            h('span', { 'aria-hidden': 'true' }, '×'),
          ),
        ),
      ),
    );
    replace(chips, list);
    if (focusAt !== undefined) list.querySelectorAll('button')[Math.min(focusAt, selected.length - 1)]?.focus();
  }

  /** @param {number} index */
  function remove(index) {
    selected.splice(index, 1);
    renderChips(index);
    if (selected.length === 0) addEvent.focus(); // the chip that had focus is gone
  }

  async function pickEvents() {
    clear(eventsSlot);
    try {
      const chosen = await chooseEvents(context, selected, addEvent);
      if (chosen) {
        selected.splice(0, selected.length, ...chosen);
        renderChips();
      }
    } catch (error) {
      alertIn(eventsSlot, explain(error).text);
    }
  }

  /** @param {SubmitEvent} event */
  async function submit(event) {
    event.preventDefault();
    if (busy) return; // a double click must not create two webhooks
    busy = true;
    const optionSlots = Object.values(advanced.targets).map((t) => t.slot);
    for (const slot of [name.slot, description.slot, endpoint.slot, eventsSlot, formSlot, ...optionSlots]) clear(slot);
    try {
      await onSave({
        name: name.control.value,
        description: description.control.value,
        endpoint: endpoint.control.value.trim(),
        event_types: [...selected],
        ...advanced.values(),
      });
    } catch (error) {
      const { field: which, text } = explain(error);
      const target = which === 'name' ? name : which === 'description' ? description : which === 'endpoint' ? endpoint : null;
      if (target) {
        alertIn(target.slot, text, target.control);
        target.control.focus();
      } else if (which === 'event_types') {
        alertIn(eventsSlot, text);
        addEvent.focus();
      } else if (which !== null && advanced.targets[which] !== undefined) {
        // An option of the Advanced section: opened, so its error and field show.
        const option = /** @type {{ slot: HTMLElement, control: HTMLElement }} */ (advanced.targets[which]);
        advanced.element.open = true;
        alertIn(option.slot, server(error, text), option.control);
        option.control.focus();
      } else {
        alertIn(formSlot, text);
      }
    } finally {
      busy = false;
    }
  }
}

/**
 * A labelled control with an optional hint and a slot for its error.
 *
 * @template {HTMLInputElement | HTMLTextAreaElement} C
 * @param {string} label
 * @param {C} control
 * @param {string} [hint]
 */
function field(label, control, hint) {
  const id = uid('field');
  control.id = id;
  const slot = h('div', { class: 'slot' });
  const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  const wrap = h('div', { class: 'field' }, h('label', { for: id }, label), hintEl, control, slot);
  return { wrap, control, slot };
}

/**
 * Shows `text` as an alert in `slot`; the control it is about is marked invalid and described by it.
 *
 * @param {HTMLElement} slot
 * @param {string} text
 * @param {HTMLElement} [control]
 */
function alertIn(slot, text, control) {
  const id = uid('error');
  replace(slot, h('p', { class: 'error', role: 'alert', id }, text));
  if (control) {
    control.setAttribute('aria-invalid', 'true');
    control.setAttribute('aria-describedby', [control.getAttribute('aria-describedby'), id].filter(Boolean).join(' '));
    slot.dataset.describes = id;
  }
}

/**
 * The words for a refused option, and for a refused header the server's own sentence too, which
 * names the header.
 *
 * @param {unknown} error
 * @param {string} text
 */
function server(error, text) {
  const failure = /** @type {{ code?: string, message?: string } | null} */ (error);
  return failure?.code === 'INVALID_HEADERS' && failure.message ? `${text} (${failure.message})` : text;
}

/** @param {HTMLElement} slot */
function clear(slot) {
  const control = slot.parentElement?.querySelector('input, textarea, select');
  if (slot.dataset.describes && control) {
    control.removeAttribute('aria-invalid');
    const rest = (control.getAttribute('aria-describedby') ?? '').split(' ').filter((t) => t && t !== slot.dataset.describes);
    if (rest.length) control.setAttribute('aria-describedby', rest.join(' '));
    else control.removeAttribute('aria-describedby');
    delete slot.dataset.describes;
  }
  slot.replaceChildren();
}
