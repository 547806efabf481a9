/**
 * DOM building without HTML strings: the page runs under Trusted Types with no policy, so
 * `innerHTML` would throw, and text from the server (names, URLs, response excerpts) can only
 * ever become text nodes.
 *
 * h('button', { type: 'button', class: 'primary', onclick: save }, 'Save')
 * Props: `on*` are listeners; `value`, `checked`, `disabled`, `hidden` and `open` are set as
 * properties; `null`, `undefined` and `false` are left out; the rest are attributes.
 */
import { explain, locale, t } from './words.js';

const PROPERTIES = new Set(['value', 'checked', 'disabled', 'hidden', 'selected']);

/**
 * @typedef {Node | string | number | boolean | null | undefined} Leaf
 * @typedef {Leaf | readonly Leaf[]} Child A node, text, or a list of them; null, undefined and false add nothing.
 * @typedef {Record<string, unknown>} Props
 */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (PROPERTIES.has(key)) /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (el))[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/**
 * Appends strings as text and nodes as they are; arrays are flattened, null/false skipped.
 *
 * @template {ParentNode} P
 * @param {P} parent
 * @param {Child[]} children
 * @returns {P}
 */
export function append(parent, children) {
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
  return parent;
}

/**
 * Replaces everything inside `parent`.
 *
 * @template {ParentNode} P
 * @param {P} parent
 * @param {...Child} children
 * @returns {P}
 */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

let nextId = 0;
/** A unique id inside the shadow root, for label/aria wiring. @param {string} stem */
export const uid = (stem) => `${stem}-${++nextId}`;

/**
 * A URL as text that wraps between its parts, never inside a word: a break opportunity (`<wbr>`)
 * after each `/`, `.`, `?`, `&`, `=`, `-` and `_` (with `overflow-wrap: break-word`, a part longer
 * than the line still breaks rather than overflows).
 *
 * @param {string} url
 */
export function urlText(url) {
  return url.split(/(?<=[/.?&=_-])/).flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), part]));
}

/** @type {Intl.DateTimeFormat | undefined} */
let dateTimeFormat;
let dateTimeLocale = '';
/** Dates and times in the page's locale (words.js `useLocale`), in the reader's own zone. */
const dateTime = {
  /** @param {Date} date */
  format(date) {
    if (!dateTimeFormat || dateTimeLocale !== locale()) {
      dateTimeLocale = locale();
      dateTimeFormat = new Intl.DateTimeFormat(dateTimeLocale, { dateStyle: 'medium', timeStyle: 'medium' });
    }
    return dateTimeFormat.format(date);
  },
};

/**
 * An ISO time as a `<time>` in the reader's locale and zone.
 *
 * @param {string | null | undefined} iso
 */
export function time(iso) {
  if (!iso) return null;
  return h('time', { datetime: iso }, dateTime.format(new Date(iso)));
}

/** @type {Intl.RelativeTimeFormat | undefined} */
let relativeFormat;
let relativeLocale = '';
const UNITS = /** @type {const} */ ([
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
]);

/**
 * An ISO time as "in 5 minutes" / "3 hours ago" (the reader's locale), the exact time on hover.
 *
 * @param {string | null | undefined} iso
 * @param {number} [now]
 */
export function relative(iso, now = Date.now()) {
  if (!iso) return null;
  if (!relativeFormat || relativeLocale !== locale()) {
    relativeLocale = locale();
    relativeFormat = new Intl.RelativeTimeFormat(relativeLocale, { numeric: 'auto' });
  }
  const delta = Date.parse(iso) - now;
  const [unit, ms] = UNITS.find(([, size]) => Math.abs(delta) >= size) ?? UNITS[3];
  const text = relativeFormat.format(Math.round(delta / ms), unit);
  const exact = dateTime.format(new Date(iso));
  return h('time', { datetime: iso, title: exact }, text);
}

/**
 * An ISO time as text: "3 hours ago" (the reader's locale).
 *
 * @param {string | null | undefined} iso
 */
export function formatRelative(iso) {
  return relative(iso)?.textContent ?? '';
}

/**
 * A button that copies `text`, named for screen readers by what it copies (`label`: "Copy the
 * event id"); says in the notice line whether it worked.
 *
 * @param {{ notify(text: string): void }} context
 * @param {string} text
 * @param {string} label
 */
export function copyButton(context, text, label) {
  return h(
    'button',
    {
      type: 'button',
      class: 'copy',
      'aria-label': label,
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(text);
          context.notify(t('copy.done'));
        } catch {
          context.notify(t('copy.failed'));
        }
      },
    },
    t('copy.button'),
  );
}

/** @param {string | null | undefined} iso */
export function formatTime(iso) {
  return iso ? dateTime.format(new Date(iso)) : '';
}

/**
 * A receiver's response body, as text. It scrolls past a few lines (up to 4 KiB of it), so it
 * takes focus: a keyboard user scrolls it with the arrow keys, as a mouse user does with the wheel.
 */
/** @param {string} text */
export function excerpt(text) {
  return h('pre', { class: 'excerpt', tabindex: 0, 'aria-label': t('attempt.response') }, text);
}

/**
 * A modal `<dialog>`: focus moves into it, Tab stays in it, Escape closes it (the browser does all
 * three for `showModal`); on close, focus goes back to whatever opened it.
 */
/**
 * @param {ShadowRoot} root
 * @param {HTMLDialogElement} dialog
 * @param {HTMLElement | null} [opener]
 */
export function openModal(root, dialog, opener) {
  root.append(dialog);
  dialog.addEventListener('close', () => {
    // The browser already gave focus back to the opener as the dialog closed; this event comes
    // as a later task, by when the person may have moved on (Tab, Tab, Enter on Save): only
    // focus left nowhere, or inside the closing dialog, goes back to the opener.
    const active = root.activeElement;
    const lost = !active || dialog.contains(active);
    dialog.remove();
    if (lost) opener?.focus();
  });
  dialog.showModal();
}

/**
 * A confirmation before a destructive action (delete a webhook, rotate its secret): an
 * alertdialog with the action's button and Cancel, which has focus so that Enter on a stray key
 * press does nothing. `action` runs on confirm and closes the dialog (`close`) once it succeeded,
 * before whatever it does next; its refusal shows in the dialog.
 *
 * @param {ShadowRoot} root
 * @param {HTMLElement | null} opener
 * @param {{ title: string, text: string, confirm: string, action: (close: () => void) => Promise<void> }} what
 */
export function confirmDanger(root, opener, { title, text, confirm, action }) {
  const titleId = uid('confirm-title');
  const textId = uid('confirm-text');
  const slot = h('div', { class: 'slot' });
  const run = async () => {
    slot.replaceChildren();
    try {
      await action(() => dialog.close());
    } catch (error) {
      slot.append(h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
  };
  const dialog = /** @type {HTMLDialogElement} */ (
    h(
      'dialog',
      { class: 'dialog confirm', role: 'alertdialog', 'aria-labelledby': titleId, 'aria-describedby': textId },
      h(
        'div',
        { class: 'dialog-body' },
        h('h2', { id: titleId }, title),
        h('p', { id: textId }, text),
        slot,
        h(
          'div',
          { class: 'buttons' },
          h('button', { type: 'button', class: 'danger', onclick: run }, confirm),
          h('button', { type: 'button', autofocus: true, onclick: () => dialog.close() }, t('common.cancel')),
        ),
      ),
    )
  );
  openModal(root, dialog, opener);
}
