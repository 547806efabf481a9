/**
 * A webhook's delivery log: newest first, 20 a page, filtered by status; a delivery expands to its
 * attempts; Resend queues one new attempt with the same webhook-id; Recover failed since… queues
 * the failed deliveries of events since a time again.
 */
/** @import { Attempt, Delivery, ViewContext } from './api.js' */
import { excerpt, h, replace, time, uid } from './dom.js';
import { recoverForm } from './recover.js';
import { DELIVERY_STATUS, explain, plural } from './words.js';

const PAGE_SIZE = 20;

/**
 * Where focus goes once the log is redrawn: the pager button that was pressed, or the row of a
 * resent delivery (by id, else by its place in the list).
 *
 * @typedef {'previous' | 'next' | { resent: string, index: number } | null | undefined} LogFocus
 */

/**
 * @param {ViewContext} context
 * @param {string} webhookId
 */
export function deliveryLog(context, webhookId) {
  // Page tokens seen so far: tokens[i] opens page i (page 0 needs none), so Previous needs no API.
  /** @type {(string | null)[]} */
  let tokens = [null];
  let page = 0;
  let loads = 0;
  const filterId = uid('status-filter');
  const filter = h(
    'select',
    { id: filterId, onchange: () => go(0, null, true) },
    h('option', { value: '' }, 'All'),
    Object.entries(DELIVERY_STATUS).map(([value, label]) => h('option', { value }, label)),
  );
  const list = h('div', { class: 'log-list', 'aria-live': 'polite', 'aria-busy': 'true' });
  const previous = h('button', { type: 'button', onclick: () => go(page - 1, 'previous') }, 'Previous page');
  const next = h('button', { type: 'button', onclick: () => go(page + 1, 'next') }, 'Next page');
  const pager = h('nav', { class: 'pager', 'aria-label': 'Delivery log pages' }, previous, next);
  const element = h(
    'div',
    { class: 'log' },
    h(
      'div',
      { class: 'log-tools' },
      h('div', { class: 'field inline' }, h('label', { for: filterId }, 'Status'), filter),
      h('button', { type: 'button', onclick: () => load() }, 'Refresh'),
    ),
    recoverForm(context, webhookId, () => load()),
    list,
    pager,
  );
  void load();
  return { element, refresh: () => void load() };

  /**
   * Shows page `to`; a new filter starts the paging over.
   *
   * @param {number} to
   * @param {LogFocus} focus
   */
  function go(to, focus, restart = false) {
    if (restart) tokens = [null];
    page = to;
    void load(focus);
  }

  /**
   * Loads the current page; `focus` names the control to keep focus on once it is redrawn.
   *
   * @param {LogFocus} [focus]
   */
  async function load(focus) {
    const mine = ++loads;
    list.setAttribute('aria-busy', 'true');
    let answer;
    try {
      answer = await context.api.deliveries(webhookId, { status: filter.value, pageSize: PAGE_SIZE, nextToken: tokens[page] });
    } catch (error) {
      if (mine !== loads) return;
      replace(list, h('p', { class: 'error', role: 'alert' }, explain(error).text));
      list.removeAttribute('aria-busy');
      previous.hidden = next.hidden = true;
      // The control that was used is gone or hidden: keep focus in the log.
      if (focus) filter.focus();
      return;
    }
    if (mine !== loads) return; // a newer load (filter changed, Refresh) answers instead
    tokens[page + 1] = answer.next_token ?? null;
    tokens = tokens.slice(0, page + 2);
    const deliveries = answer.deliveries ?? [];
    replace(
      list,
      deliveries.length === 0
        ? h(
            'p',
            { class: 'hint' },
            filter.value ? 'No deliveries with this status.' : 'No deliveries yet. Send a test event to see one here.',
          )
        : h(
            'ul',
            { class: 'deliveries', 'aria-label': 'Deliveries' },
            deliveries.map((d) => row(d)),
          ),
    );
    list.removeAttribute('aria-busy');
    previous.hidden = page === 0 && !answer.next_token;
    next.hidden = previous.hidden;
    previous.disabled = page === 0;
    next.disabled = !answer.next_token;
    // The button that was pressed may now be disabled: keep focus in the log, not on <body>.
    if (focus === 'next') (next.disabled ? previous : next).focus();
    if (focus === 'previous') (previous.disabled ? next : previous).focus();
    if (typeof focus === 'object' && focus) {
      // The resent delivery may have left the list (filtered to failed, it is pending now): then
      // the Resend of the row that took its place, else the last row's, else the filter. Never
      // <body>, where the next Tab would start again from the top of the page.
      const buttons = [.../** @type {NodeListOf<HTMLElement>} */ (list.querySelectorAll('[data-delivery]'))];
      const target =
        buttons.find((b) => b.dataset.delivery === focus.resent) ?? buttons[Math.min(focus.index, buttons.length - 1)] ?? filter;
      target.focus();
    }
  }

  /** @param {Delivery} delivery */
  function row(delivery) {
    const panelId = uid('attempts');
    const panel = h('div', { class: 'attempts', id: panelId, hidden: true });
    const expand = h(
      'button',
      {
        type: 'button',
        class: 'expand',
        'aria-expanded': 'false',
        'aria-controls': panelId,
        onclick: () => toggle(expand, panel, delivery),
      },
      'Attempts',
    );
    const slot = h('div', { class: 'slot' });
    const resend = h(
      'button',
      { type: 'button', 'data-delivery': delivery.id, 'data-write': '', onclick: () => doResend(delivery, slot) },
      'Resend',
    );
    const last = delivery.last_status_code ? `HTTP ${delivery.last_status_code}` : delivery.last_error;
    return h(
      'li',
      { class: 'delivery' },
      h(
        'div',
        { class: 'delivery-main' },
        h('span', { class: 'code' }, delivery.event_type),
        time(delivery.created_on),
        h('span', { class: `badge badge-${delivery.status}` }, DELIVERY_STATUS[delivery.status] ?? delivery.status),
        h('span', { class: 'hint' }, plural(delivery.attempt_count, 'attempt', 'attempts'), last ? `, last: ${last}` : ''),
      ),
      h('div', { class: 'delivery-actions' }, expand, resend),
      slot,
      panel,
    );
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {HTMLElement} panel
   * @param {Delivery} delivery
   */
  async function toggle(button, panel, delivery) {
    const open = button.getAttribute('aria-expanded') !== 'true';
    button.setAttribute('aria-expanded', String(open));
    panel.hidden = !open;
    if (!open) return;
    replace(panel, h('p', { class: 'hint' }, 'Loading attempts…'));
    try {
      const attempts = await context.api.attempts(webhookId, delivery.id);
      replace(panel, attempts.length === 0 ? h('p', { class: 'hint' }, 'No attempt yet.') : h('ol', {}, attempts.map(attemptItem)));
    } catch (error) {
      replace(panel, h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
  }

  /**
   * @param {Delivery} delivery
   * @param {HTMLElement} slot
   */
  async function doResend(delivery, slot) {
    slot.replaceChildren();
    try {
      await context.api.resend(webhookId, delivery.id);
      context.notify(`Delivery of ${delivery.event_type} queued to be sent again.`);
      const index = [.../** @type {NodeListOf<HTMLElement>} */ (list.querySelectorAll('[data-delivery]'))].findIndex(
        (b) => b.dataset.delivery === delivery.id,
      );
      await load({ resent: delivery.id, index: Math.max(0, index) });
    } catch (error) {
      slot.append(h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
  }
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
    attempt.response_excerpt ? excerpt(attempt.response_excerpt) : null,
  );
}
