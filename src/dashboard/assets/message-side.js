/** @import { Delivery, ViewContext } from './api.js' */
import { h, replace, uid } from './dom.js';
import { messageSections } from './message-view.js';
import { explain, t } from './words.js';

/**
 * The side panel: one delivery's message (as its receiver got it) beside the log, along the
 * window's right edge, so the log stays where it was. A non-modal dialog in the top layer (a
 * popover, where the browser has them), so no transform or stacking of a host page that embeds
 * the element can clip or cover it. Opening moves focus to its heading; Close or Escape closes it
 * and gives focus back to the button that opened it (or, when the log was redrawn meanwhile, that
 * delivery's button now, else `fallback`). "Open as a page" goes to the message's own view, whose
 * address can be shared.
 *
 * @param {ViewContext} context
 * @param {string} webhookId
 * @param {{ list: HTMLElement, fallback: HTMLElement }} where The log's rows, and where focus goes when neither button is there.
 */
export function messageSide(context, webhookId, { list, fallback }) {
  const headingId = uid('message-side');
  const heading = h('h3', { id: headingId, tabindex: -1 });
  const body = h('div', { class: 'message-side-body' });
  /** @type {HTMLElement | null} */
  let opener = null;
  let opened = 0;
  /** @type {Delivery | null} */
  let shown = null;
  const close = () => {
    if (element.matches(':popover-open')) element.hidePopover();
    element.hidden = true;
    body.replaceChildren();
    const again = shown && /** @type {HTMLElement | null} */ (list.querySelector(`[data-view="${CSS.escape(shown.id)}"]`));
    (opener?.isConnected ? opener : (again ?? fallback)).focus();
  };
  const element = h(
    'div',
    {
      class: 'message-side',
      role: 'dialog',
      hidden: true,
      'aria-labelledby': headingId,
      onkeydown: (/** @type {KeyboardEvent} */ e) => {
        if (e.key === 'Escape') {
          // this panel's, not also a host's dialog around the element
          e.preventDefault();
          e.stopPropagation();
          close();
        }
      },
    },
    h(
      'div',
      { class: 'bar' },
      heading,
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'link',
            onclick: () => shown && context.navigate({ name: 'message', id: webhookId, deliveryId: shown.id }),
          },
          t('log.openPage'),
        ),
        h('button', { type: 'button', onclick: close }, t('log.close')),
      ),
    ),
    body,
  );
  const popover = typeof element.showPopover === 'function';
  if (popover) element.setAttribute('popover', 'manual');
  return {
    element,
    /**
     * @param {Delivery} delivery
     * @param {HTMLElement} from
     */
    async open(delivery, from) {
      const mine = ++opened;
      opener = from;
      shown = delivery;
      heading.textContent = delivery.event_type;
      replace(body, h('p', { class: 'hint' }, t('shell.loading')));
      body.setAttribute('aria-busy', 'true');
      element.hidden = false;
      if (popover && !element.matches(':popover-open')) element.showPopover();
      heading.focus();
      try {
        const message = await context.api.message(webhookId, delivery.id);
        if (mine === opened) replace(body, ...messageSections(context, message, 'h4'));
      } catch (error) {
        if (mine === opened) replace(body, h('p', { class: 'error', role: 'alert' }, explain(error).text));
      } finally {
        if (mine === opened) body.removeAttribute('aria-busy');
      }
    },
  };
}
