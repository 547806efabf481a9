/**
 * The webhook form's Advanced section: a closed <details> holding groups of options, each a
 * fieldset of its own: how the endpoint is called (custom headers, timeout, rate limit:
 * docs/endpoint-options.md) and how deliveries are signed and the endpoint authenticated
 * (signing-fields.js: docs/signatures.md); another group slots in by being added to {@link GROUPS}.
 * The server judges every value: what the form sends is what was typed, and the server's
 * refusal appears next to its field, in the words of words.js.
 */
/** @import { Webhook, WebhookFields } from './api.js' */

import { h, uid } from './dom.js';
import { orderingGroup } from './ordering-fields.js';
import { signingGroup } from './signing-fields.js';
import { locale, t } from './words.js';

/** Read for every credential value the server holds; sent back unchanged, it keeps the value. */
export const HEADER_MASK = '••••••••';

/**
 * @typedef {object} OptionGroup One fieldset of the Advanced section.
 * @property {HTMLFieldSetElement} element
 * @property {boolean} set Whether the webhook has anything in this group other than the defaults.
 * @property {() => Partial<WebhookFields>} values The group's fields as the API takes them.
 * @property {Record<string, { slot: HTMLElement, control: HTMLElement }>} targets Where the
 *   server's refusal of each of its wire fields goes (`explain(error).field`).
 */

/** @type {ReadonlyArray<(webhook: Webhook | null) => OptionGroup>} */
export const GROUPS = [endpointOptions, signingGroup, orderingGroup];

/**
 * @param {Webhook | null} webhook
 * @returns {{ element: HTMLDetailsElement, values: () => Partial<WebhookFields>, targets: OptionGroup['targets'] }}
 */
export function advancedSection(webhook) {
  const groups = GROUPS.map((make) => make(webhook));
  const element = /** @type {HTMLDetailsElement} */ (
    h(
      'details',
      { class: 'advanced' },
      h('summary', {}, t('advanced.title')),
      groups.map((g) => g.element),
    )
  );
  // Open from the start when something in it is set, so nothing set is hidden.
  if (groups.some((g) => g.set)) element.open = true;
  return {
    element,
    values: () => Object.assign({}, ...groups.map((g) => g.values())),
    targets: Object.assign({}, ...groups.map((g) => g.targets)),
  };
}

/**
 * How the endpoint is called: custom headers (rows of name and value, added and removed; a
 * credential value shows masked once saved), the timeout in seconds and the rate limit.
 *
 * @param {Webhook | null} webhook
 * @returns {OptionGroup}
 */
function endpointOptions(webhook) {
  const rows = h('ul', { class: 'header-rows', 'aria-label': t('advanced.headers') });
  const addHeader = h('button', { type: 'button', onclick: () => addRow('', '', true) }, t('advanced.addHeader'));
  const headersSlot = h('div', { class: 'slot' });
  const headersLabel = uid('headers');
  const headers = h(
    'div',
    { class: 'field', role: 'group', 'aria-labelledby': headersLabel },
    h('span', { class: 'field-label', id: headersLabel }, t('advanced.headers')),
    h('p', { class: 'hint' }, t('advanced.headersHint')),
    rows,
    addHeader,
    headersSlot,
  );
  for (const [name, value] of Object.entries(webhook?.headers ?? {})) addRow(name, value, false);

  const timeoutMs = webhook?.timeout_ms ?? null;
  const timeout = numberField(
    t('advanced.timeout'),
    'timeout',
    // In the locale's digits (1,5 in French), read back either way.
    timeoutMs === null ? '' : new Intl.NumberFormat(locale(), { useGrouping: false, maximumFractionDigits: 3 }).format(timeoutMs / 1000),
    t('advanced.timeoutHint'),
  );
  const rateValue = webhook?.rate_limit_per_second ?? null;
  const rate = numberField(t('advanced.rate'), 'rate_limit', rateValue === null ? '' : String(rateValue), t('advanced.rateHint'));

  const element = /** @type {HTMLFieldSetElement} */ (
    h('fieldset', { class: 'option-group' }, h('legend', {}, t('webhook.endpoint')), headers, timeout.wrap, rate.wrap)
  );
  return {
    element,
    set: Object.keys(webhook?.headers ?? {}).length > 0 || timeoutMs !== null || rateValue !== null,
    values() {
      /** @type {Record<string, string>} */
      const set = {};
      for (const row of rows.querySelectorAll('li')) {
        const [name, value] = /** @type {NodeListOf<HTMLInputElement>} */ (row.querySelectorAll('input'));
        if (!name || !value || (name.value === '' && value.value === '')) continue;
        set[name.value.trim()] = value.value;
      }
      return {
        headers: set,
        timeout_ms: seconds(timeout.control.value),
        rate_limit_per_second: whole(rate.control.value),
      };
    },
    targets: {
      headers: { slot: headersSlot, control: addHeader },
      timeout_ms: { slot: timeout.slot, control: timeout.control },
      rate_limit_per_second: { slot: rate.slot, control: rate.control },
    },
  };

  /**
   * @param {string} name
   * @param {string} value
   * @param {boolean} focus
   */
  function addRow(name, value, focus) {
    const masked = value === HEADER_MASK;
    const nameInput = h('input', {
      name: 'header-name',
      autocomplete: 'off',
      spellcheck: 'false',
      maxlength: 64,
      value: name,
      'aria-label': t('advanced.headerName'),
      placeholder: 'X-Header-Name',
    });
    const valueInput = h('input', {
      name: 'header-value',
      autocomplete: 'off',
      spellcheck: 'false',
      maxlength: 1024,
      value,
      'aria-label': masked ? t('advanced.hiddenValue', { name }) : t('advanced.headerValue'),
      placeholder: t('advanced.valuePlaceholder'),
    });
    // A hidden value is replaced whole: focusing it selects the mask, so typing replaces it.
    if (masked) valueInput.addEventListener('focus', () => /** @type {HTMLInputElement} */ (valueInput).select());
    const row = h(
      'li',
      { class: 'header-row' },
      nameInput,
      valueInput,
      h(
        'button',
        {
          type: 'button',
          class: 'chip-remove',
          onclick: () => {
            const next = row.nextElementSibling ?? row.previousElementSibling;
            row.remove();
            /** @type {HTMLElement} */ (next?.querySelector('input') ?? addHeader).focus();
          },
        },
        h('span', { 'aria-hidden': 'true' }, '×'),
      ),
    );
    const remove = /** @type {HTMLButtonElement} */ (row.querySelector('button'));
    const removeLabel = (/** @type {string} */ named) => (named ? t('advanced.removeNamed', { name: named }) : t('advanced.removeHeader'));
    remove.setAttribute('aria-label', removeLabel(name));
    nameInput.addEventListener('input', () =>
      remove.setAttribute('aria-label', removeLabel(/** @type {HTMLInputElement} */ (nameInput).value)),
    );
    rows.append(row);
    if (focus) nameInput.focus();
  }
}

/**
 * @param {string} label
 * @param {string} name
 * @param {string} value
 * @param {string} hint
 */
function numberField(label, name, value, hint) {
  const id = uid('field');
  const control = /** @type {HTMLInputElement} */ (
    h('input', { id, name, inputmode: 'numeric', autocomplete: 'off', value, 'aria-describedby': `${id}-hint`, class: 'short' })
  );
  const slot = h('div', { class: 'slot' });
  const wrap = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    h('p', { class: 'hint', id: `${id}-hint` }, hint),
    control,
    slot,
  );
  return { wrap, control, slot };
}

/**
 * Seconds as typed (a decimal point or comma), in milliseconds; empty is null; anything else is
 * sent as typed, for the server to refuse in its own words.
 *
 * @param {string} text
 * @returns {number | string | null}
 */
function seconds(text) {
  const t = text.trim().replace(',', '.');
  if (t === '') return null;
  return /^\d+(\.\d+)?$/.test(t) ? Math.round(Number(t) * 1000) : t;
}

/**
 * @param {string} text
 * @returns {number | string | null}
 */
function whole(text) {
  const t = text.trim();
  if (t === '') return null;
  return /^\d+$/.test(t) ? Number(t) : t;
}
