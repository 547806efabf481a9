/**
 * Ordered delivery per subject in the dashboard (docs/ordering.md): one group of the
 * webhook form's Advanced section (advanced.js), a choice between no order and per subject. The
 * server judges the value; its refusal appears next to the field.
 */
/** @import { Webhook } from './api.js' */
import { h, uid } from './dom.js';
import { t } from './words.js';

/**
 * @param {Webhook | null} webhook
 * @returns {{ element: HTMLFieldSetElement, set: boolean, values: () => Record<string, unknown>, targets: Record<string, { slot: HTMLElement, control: HTMLElement }> }}
 */
export function orderingGroup(webhook) {
  const id = uid('field');
  const hint = uid('hint');
  const value = webhook?.ordering ?? 'none';
  const control = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id, name: 'ordering', 'aria-describedby': hint },
      [
        ['none', t('ordering.none')],
        ['per-subject', t('ordering.perSubject')],
      ].map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
    )
  );
  const slot = h('div', { class: 'slot' });
  const element = /** @type {HTMLFieldSetElement} */ (
    h(
      'fieldset',
      { class: 'option-group ordering-fields' },
      h('legend', {}, t('ordering.legend')),
      h(
        'div',
        { class: 'field' },
        h('label', { for: id }, t('ordering.label')),
        h('p', { class: 'hint', id: hint }, t('ordering.hint')),
        control,
        slot,
      ),
    )
  );
  return {
    element,
    set: value !== 'none',
    targets: { ordering: { slot, control } },
    values: () => ({ ordering: control.value }),
  };
}
