/**
 * Ordered delivery per subject in the dashboard (issue 40, docs/ordering.md): one group of the
 * webhook form's Advanced section (advanced.js), a choice between no order and per subject. The
 * server judges the value; its refusal appears next to the field.
 */
/** @import { Webhook } from './api.js' */
import { h, uid } from './dom.js';

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
        ['none', 'None: each delivery on its own schedule'],
        ['per-subject', 'Per subject: a user’s events in the order they happened'],
      ].map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
    )
  );
  const slot = h('div', { class: 'slot' });
  const element = /** @type {HTMLFieldSetElement} */ (
    h(
      'fieldset',
      { class: 'option-group ordering-fields' },
      h('legend', {}, 'Delivery order'),
      h(
        'div',
        { class: 'field' },
        h('label', { for: id }, 'Order'),
        h(
          'p',
          { class: 'hint', id: hint },
          'Per subject, a delivery waits while an earlier one about the same user (or organization, role, …) is still pending; other subjects are not held up. Receivers should still drop repeats by webhook-id.',
        ),
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
