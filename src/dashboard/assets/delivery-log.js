/**
 * A webhook's delivery log: newest first, 20 a page, one dense row per delivery (event type, a
 * test event marked, subject, status, attempts, last response, time, and its actions), filtered
 * by status, event type, period (presets or a custom range) and an event or delivery id, the
 * filters kept in the address (so a filtered log can be linked); a delivery expands to its
 * attempts, or opens its message in a side panel beside the log; Resend queues one new attempt
 * with the same webhook-id; Recover failed since… queues the failed deliveries of events since a
 * time again.
 */
/** @import { Delivery, LogFilter, ViewContext, Webhook } from './api.js' */
import { h, relative, replace, uid } from './dom.js';
import { messageSide } from './message-side.js';
import { attemptItem } from './message-view.js';
import { recoverForm } from './recover.js';
import { DELIVERY_STATUS, explain, formatNumber, t, tParts } from './words.js';

const PAGE_SIZE = 20;

/**
 * Where focus goes once the log is redrawn: the pager button that was pressed, or the row of a
 * resent delivery (by id, else by its place in the list).
 *
 * @typedef {'previous' | 'next' | { resent: string, index: number } | null | undefined} LogFocus
 */

/** What an empty page says, by the filters the address keeps. @param {string} kept */
const emptyWords = (kept) => t(!kept ? 'log.empty' : /^status=[^&]*$/.test(kept) ? 'log.emptyStatus' : 'log.emptyFilters');

/** The period presets: their length, and the key of their words. */
const PERIODS = /** @type {const} */ ({
  '': [0, 'range.any'],
  '1h': [3_600_000, 'range.1h'],
  '24h': [86_400_000, 'range.24h'],
  '7d': [7 * 86_400_000, 'range.7d'],
  '30d': [30 * 86_400_000, 'range.30d'],
  custom: [0, 'range.custom'],
});

/**
 * @param {ViewContext} context
 * @param {Webhook} webhook
 * @param {string} [query] The filters as the address keeps them (`status`, `type`, `period`, `since`, `until`, `q`).
 */
export function deliveryLog(context, webhook, query = '') {
  const webhookId = webhook.id;
  const enabled = webhook.status === 'enabled';
  const initial = new URLSearchParams(query);
  // Page tokens seen so far: tokens[i] opens page i (page 0 needs none), so Previous needs no API.
  /** @type {(string | null)[]} */
  let tokens = [null];
  let page = 0;
  let loads = 0;
  const restart = () => go(0, null, true);
  const filterId = uid('status-filter');
  const filter = h(
    'select',
    { id: filterId, onchange: restart },
    h('option', { value: '' }, t('log.all')),
    Object.entries(DELIVERY_STATUS).map(([value, label]) => h('option', { value, selected: initial.get('status') === value }, label)),
  );
  const typeId = uid('type-filter');
  const typeFilter = h(
    'select',
    { id: typeId, onchange: restart },
    h('option', { value: '' }, t('log.allEvents')),
    webhook.event_types.map((code) => h('option', { value: code, selected: initial.get('type') === code }, code)),
  );
  const periodId = uid('period-filter');
  const period = h(
    'select',
    { id: periodId, onchange: () => showCustom() || restart() },
    Object.entries(PERIODS).map(([value, [, key]]) => h('option', { value, selected: (initial.get('period') ?? '') === value }, t(key))),
  );
  const sinceId = uid('since');
  const untilId = uid('until');
  const localValue = (/** @type {string | null} */ iso) => {
    if (!iso || Number.isNaN(Date.parse(iso))) return '';
    const d = new Date(iso);
    return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  };
  const sinceInput = h('input', { id: sinceId, type: 'datetime-local', value: localValue(initial.get('since')), onchange: restart });
  const untilInput = h('input', { id: untilId, type: 'datetime-local', value: localValue(initial.get('until')), onchange: restart });
  const custom = h(
    'div',
    { class: 'log-filters', hidden: period.value !== 'custom' },
    h('div', { class: 'field inline' }, h('label', { for: sinceId }, t('log.start')), sinceInput),
    h('div', { class: 'field inline' }, h('label', { for: untilId }, t('log.end')), untilInput),
  );
  const searchId = uid('search');
  const search = h('input', {
    id: searchId,
    type: 'search',
    value: initial.get('q') ?? '',
    placeholder: t('log.searchPlaceholder'),
    spellcheck: 'false',
    autocomplete: 'off',
  });
  /** Shows the custom range's fields for `custom`; true when that is all a change does (nothing chosen yet). */
  function showCustom() {
    custom.hidden = period.value !== 'custom';
    return period.value === 'custom' && !sinceInput.value && !untilInput.value;
  }
  const list = h('div', { class: 'log-list', 'aria-live': 'polite', 'aria-busy': 'true' });
  const side = messageSide(context, webhookId, { list, fallback: filter });
  const previous = h('button', { type: 'button', onclick: () => go(page - 1, 'previous') }, t('log.previous'));
  const next = h('button', { type: 'button', onclick: () => go(page + 1, 'next') }, t('log.next'));
  const pager = h('nav', { class: 'pager', 'aria-label': t('log.pages') }, previous, next);
  const element = h(
    'div',
    { class: 'log' },
    h(
      'form',
      {
        class: 'log-filters',
        role: 'search',
        'aria-label': t('log.filter'),
        onsubmit: (/** @type {Event} */ e) => {
          e.preventDefault();
          restart();
        },
      },
      h('div', { class: 'field inline' }, h('label', { for: filterId }, t('log.status')), filter),
      h('div', { class: 'field inline' }, h('label', { for: typeId }, t('log.event')), typeFilter),
      h('div', { class: 'field inline' }, h('label', { for: periodId }, t('log.period')), period),
      h('div', { class: 'field inline' }, h('label', { for: searchId }, t('log.search')), search),
      h('button', { type: 'submit' }, t('log.searchButton')),
      h('button', { type: 'button', onclick: () => load() }, t('log.refresh')),
    ),
    custom,
    // Recover and Resend need the webhook enabled: not offered while it is disabled.
    enabled ? recoverForm(context, webhookId, () => load()) : null,
    list,
    pager,
    side.element,
  );
  void load();
  return { element, refresh: () => void load() };

  /** The filters as the API takes them (a preset counts back from now), and as the address keeps them. */
  function filters() {
    /** @type {LogFilter} */
    const api = {};
    const kept = new URLSearchParams();
    if (filter.value) api.status = filter.value;
    if (typeFilter.value) api.eventType = typeFilter.value;
    const preset = /** @type {keyof typeof PERIODS} */ (period.value);
    if (preset === 'custom') {
      const iso = (/** @type {string} */ v) => (v && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : '');
      if (iso(sinceInput.value)) api.since = iso(sinceInput.value);
      if (iso(untilInput.value)) api.until = iso(untilInput.value);
    } else if (preset) api.since = new Date(Date.now() - PERIODS[preset][0]).toISOString();
    const q = search.value.trim();
    if (q) api.search = q;
    // The address keeps the preset, not its times, so a linked "last 24 hours" means the last 24 hours when opened.
    for (const [key, value] of [
      ['status', api.status],
      ['type', api.eventType],
      ['period', preset],
      ['since', preset === 'custom' ? api.since : undefined],
      ['until', api.until],
      ['q', api.search],
    ])
      if (key && value) kept.set(key, value);
    return { api, kept: kept.toString() };
  }

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
      const { api, kept } = filters();
      context.keepQuery(kept);
      answer = await context.api.deliveries(webhookId, { ...api, pageSize: PAGE_SIZE, nextToken: tokens[page] });
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
        ? h('p', { class: 'hint' }, emptyWords(filters().kept))
        : h(
            'div',
            { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': t('log.deliveries') },
            h(
              'table',
              { class: 'deliveries' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['log.colEvent', 'log.colSubject', 'log.colStatus', 'log.colAttempts', 'log.colLast', 'log.colTime'].map((key) =>
                    h('th', { scope: 'col' }, t(/** @type {import('./words.js').UiKey} */ (key))),
                  ),
                  h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('log.colActions'))),
                ),
              ),
              deliveries.map((d) => row(d)),
            ),
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

  /**
   * One delivery: a row of what happened and its actions, and under it a row (hidden until used)
   * for its attempts and what an action says.
   *
   * @param {Delivery} delivery
   */
  function row(delivery) {
    const panelId = uid('attempts');
    const panel = h('div', { class: 'attempts', id: panelId, hidden: true });
    const slot = h('div', { class: 'slot' });
    const detail = h('tr', { class: 'delivery-detail', hidden: true }, h('td', { colspan: 7 }, slot, panel));
    const expand = h(
      'button',
      {
        type: 'button',
        class: 'expand',
        'aria-expanded': 'false',
        'aria-controls': panelId,
        onclick: () => toggle(expand, panel, detail, delivery),
      },
      t('log.attempts'),
    );
    const resend = enabled
      ? h(
          'button',
          { type: 'button', 'data-delivery': delivery.id, 'data-write': '', onclick: () => doResend(delivery, slot, detail) },
          t('log.resend'),
        )
      : null;
    const view = h('button', { type: 'button', 'data-view': delivery.id, onclick: () => side.open(delivery, view) }, t('log.view'));
    const last = delivery.last_status_code ? `HTTP ${delivery.last_status_code}` : delivery.last_error;
    return h(
      'tbody',
      { class: 'delivery' },
      h(
        'tr',
        {},
        h(
          'th',
          { scope: 'row' },
          h('span', { class: 'code' }, delivery.event_type),
          // A test event (Send test event) is marked: it is not something a user did.
          delivery.test ? [' ', h('span', { class: 'badge badge-test' }, t('log.test'))] : null,
        ),
        h(
          'td',
          { class: 'subject' },
          delivery.subject ? h('span', { class: 'code' }, delivery.subject) : h('span', { class: 'hint' }, '–'),
        ),
        h(
          'td',
          {},
          h('span', { class: `badge badge-${delivery.status}` }, DELIVERY_STATUS[delivery.status] ?? delivery.status),
          // When it is tried next: relative, the exact time on hover.
          delivery.status === 'pending' && delivery.next_attempt_on
            ? h('span', { class: 'hint next' }, ...tParts('log.nextAttempt', { when: relative(delivery.next_attempt_on) ?? '' }))
            : null,
        ),
        h('td', { class: 'number' }, formatNumber(delivery.attempt_count)),
        h('td', { class: 'last', title: last && last.length > 40 ? last : null }, last ?? h('span', { class: 'hint' }, '–')),
        h('td', { class: 'when' }, relative(delivery.created_on)),
        h('td', {}, h('div', { class: 'delivery-actions' }, expand, resend, view)),
      ),
      detail,
    );
  }

  /**
   * @param {HTMLButtonElement} button
   * @param {HTMLElement} panel
   * @param {HTMLElement} detail The row that holds it.
   * @param {Delivery} delivery
   */
  async function toggle(button, panel, detail, delivery) {
    const open = button.getAttribute('aria-expanded') !== 'true';
    button.setAttribute('aria-expanded', String(open));
    panel.hidden = !open;
    detail.hidden = !open && !detail.querySelector('.slot')?.hasChildNodes();
    if (!open) return;
    replace(panel, h('p', { class: 'hint' }, t('log.loadingAttempts')));
    try {
      const attempts = await context.api.attempts(webhookId, delivery.id);
      replace(
        panel,
        attempts.length === 0
          ? h('p', { class: 'hint' }, t('attempt.none'))
          : h(
              'ol',
              {},
              attempts.map((a) => attemptItem(a)),
            ),
      );
    } catch (error) {
      replace(panel, h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
  }

  /**
   * @param {Delivery} delivery
   * @param {HTMLElement} slot
   * @param {HTMLElement} detail The row that holds it.
   */
  async function doResend(delivery, slot, detail) {
    slot.replaceChildren();
    try {
      await context.api.resend(webhookId, delivery.id);
      context.notify(t('notice.resent', { type: delivery.event_type }));
      const index = [.../** @type {NodeListOf<HTMLElement>} */ (list.querySelectorAll('[data-delivery]'))].findIndex(
        (b) => b.dataset.delivery === delivery.id,
      );
      await load({ resent: delivery.id, index: Math.max(0, index) });
    } catch (error) {
      slot.append(h('p', { class: 'error', role: 'alert' }, explain(error).text));
      detail.hidden = false;
    }
  }
}
