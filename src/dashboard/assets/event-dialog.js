/**
 * The Add event dialog: the catalog's event types grouped by resource, a checkbox each (named by
 * its code and description), Save keeps the selection, Cancel or Escape drops it. A modal
 * `<dialog>`: the browser moves focus in, keeps Tab inside and closes it on Escape; focus goes
 * back to the Add event button when it closes.
 */
/** @import { EventType, ViewContext } from './api.js' */
import { h, openModal, uid } from './dom.js';
import { eventName, resourceLabel, t } from './words.js';

/**
 * Resolves with the chosen codes (catalog order), or null when the dialog was dismissed.
 *
 * @param {ViewContext} context
 * @param {readonly string[]} selected
 * @param {HTMLElement} opener
 * @returns {Promise<string[] | null>}
 */
export async function chooseEvents(context, selected, opener) {
  const types = await context.api.eventTypes();
  /** @type {Map<string, EventType[]>} */
  const groups = new Map();
  for (const type of types) {
    const label = resourceLabel(type.code);
    if (!groups.has(label)) groups.set(label, []);
    groups.get(label)?.push(type);
  }
  const chosen = new Set(selected);
  /** @type {HTMLInputElement[]} */
  const boxes = [];
  const titleId = uid('dialog-title');
  const hintId = uid('dialog-hint');
  const form = h(
    'form',
    { class: 'dialog-body' },
    h('h2', { id: titleId }, t('dialog.title')),
    h('p', { class: 'hint', id: hintId }, t('dialog.hint')),
    // In a new tab: the choice being made here stays as it is.
    h('p', {}, h('a', { href: '#/catalog', target: '_blank', rel: 'noopener' }, t('dialog.catalogLink'))),
    h(
      'div',
      { class: 'groups' },
      [...groups].map(([label, entries]) =>
        h(
          'fieldset',
          { class: 'group' },
          h('legend', {}, label),
          entries.map((type) => {
            // autofocus: else showModal focuses the scrolling list itself (Chrome makes scrollers focusable).
            const box = h('input', { type: 'checkbox', value: type.code, checked: chosen.has(type.code), autofocus: boxes.length === 0 });
            boxes.push(box);
            // The space keeps code and description apart in the checkbox's name whatever the layout.
            return h(
              'label',
              { class: 'check' },
              box,
              h('span', { class: 'code' }, type.code),
              ' ',
              h('span', { class: 'description' }, eventName(type)),
            );
          }),
        ),
      ),
    ),
    h(
      'div',
      { class: 'buttons' },
      h('button', { type: 'submit', class: 'primary' }, t('common.save')),
      h('button', { type: 'button', onclick: () => dialog.close() }, t('common.cancel')),
    ),
  );
  const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': titleId, 'aria-describedby': hintId }, form);
  return new Promise((resolve) => {
    /** @type {string[] | null} */
    let result = null;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      // Codes the catalog no longer lists stay chosen (only the server may refuse them).
      const known = new Set(types.map((t) => t.code));
      result = [...[...chosen].filter((code) => !known.has(code)), ...boxes.filter((b) => b.checked).map((b) => b.value)];
      // Now, not on the dialog's 'close' event: that comes as a later task, after focus is
      // already back on Add event, and a quick Tab and Enter on the form's Save could land
      // before it and save the events as they were.
      resolve(result);
      dialog.close();
    });
    dialog.addEventListener('close', () => resolve(result));
    openModal(context.root, dialog, opener);
  });
}
