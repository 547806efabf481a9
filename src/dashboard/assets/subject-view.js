/**
 * What was sent about a user or an organization, across every webhook of the environment: the
 * events whose subject (a user's id, an organization's code) or user's email is what the reader
 * typed, newest first, each with its delivery to each webhook (status, attempts, last response)
 * and the way to its message. The answer of `GET /api/v1/events?subject=`.
 */
/** @import { FoundEvent, ViewContext } from './api.js' */
import { h, relative, replace, uid } from './dom.js';
import { DELIVERY_STATUS, explain, formatNumber, t } from './words.js';

/**
 * The search form (the list's, and this view's own): a subject or an email, then its view.
 *
 * @param {ViewContext} context
 * @param {string} [value]
 */
export function subjectSearch(context, value = '') {
  const inputId = uid('subject');
  const input = h('input', {
    id: inputId,
    type: 'search',
    value,
    maxlength: 255,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: t('subject.placeholder'),
  });
  return h(
    'form',
    {
      class: 'subject-search',
      role: 'search',
      'aria-label': t('subject.label'),
      onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        const subject = /** @type {HTMLInputElement} */ (input).value.trim();
        if (subject) context.navigate({ name: 'subject', subject });
      },
    },
    h('div', { class: 'field inline' }, h('label', { for: inputId }, t('subject.label')), input),
    h('button', { type: 'submit' }, t('subject.find')),
  );
}

/**
 * @param {ViewContext} context
 * @param {string} subject
 */
export async function renderSubject(context, subject) {
  // The webhooks' names (the answer names them by id); without them, the ids.
  const [first, webhooks] = await Promise.all([context.api.eventsAbout(subject), context.api.listWebhooks().catch(() => [])]);
  const names = new Map(webhooks.map((w) => [w.id, w.name]));
  const list = h('ol', { class: 'found', 'aria-label': t('subject.events') });
  const more = h('button', { type: 'button', hidden: true }, t('subject.more'));
  const status = h('p', { class: 'hint', role: 'status' });
  /** @type {string | null} */
  let token = null;
  /** @param {{ events?: FoundEvent[], next_token?: string | null }} page */
  const show = (page) => {
    for (const event of page.events ?? []) list.append(eventItem(context, event, names));
    token = page.next_token ?? null;
    more.hidden = !token;
  };
  show(first);
  more.onclick = async () => {
    more.disabled = true;
    try {
      const before = list.children.length;
      show(await context.api.eventsAbout(subject, token));
      /** @type {HTMLElement | null} */ (list.children[before]?.querySelector('h3') ?? null)?.focus();
    } catch (error) {
      replace(status, h('span', { class: 'error', role: 'alert' }, explain(error).text));
    } finally {
      more.disabled = false;
    }
  };
  const found = (first.events ?? []).length > 0;
  return h(
    'section',
    { class: 'view' },
    h('button', { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'list' }) }, t('shell.back')),
    h('div', { class: 'bar' }, h('h2', { tabindex: -1 }, t('subject.title', { subject }))),
    h('p', { class: 'hint' }, t('subject.hint')),
    subjectSearch(context, subject),
    found ? list : h('p', { class: 'empty' }, t('subject.none', { subject })),
    h('div', { class: 'pager' }, more, status),
  );
}

/**
 * One event: its type (a test event marked), when, and a row per webhook it was owed to.
 *
 * @param {ViewContext} context
 * @param {FoundEvent} event
 * @param {Map<string, string>} names
 */
function eventItem(context, event, names) {
  const headingId = uid('found');
  return h(
    'li',
    { class: 'panel found-event', 'aria-labelledby': headingId },
    h(
      'h3',
      { id: headingId, tabindex: -1 },
      h('span', { class: 'code' }, event.type),
      event.test ? [' ', h('span', { class: 'badge badge-test' }, t('log.test'))] : null,
      ' ',
      h('span', { class: 'hint' }, relative(event.created_on)),
    ),
    event.deliveries.length === 0
      ? h('p', { class: 'hint' }, t('subject.noDeliveries'))
      : h(
          'div',
          { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-labelledby': headingId },
          h(
            'table',
            { class: 'deliveries' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['subject.webhook', 'log.colStatus', 'log.colAttempts', 'log.colLast'].map((key) =>
                  h('th', { scope: 'col' }, t(/** @type {import('./words.js').UiKey} */ (key))),
                ),
                h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, t('log.colActions'))),
              ),
            ),
            h(
              'tbody',
              {},
              event.deliveries.map((d) => {
                const last = d.last_status_code ? `HTTP ${d.last_status_code}` : d.last_error;
                return h(
                  'tr',
                  {},
                  h(
                    'th',
                    { scope: 'row' },
                    h(
                      'button',
                      { type: 'button', class: 'link', onclick: () => context.navigate({ name: 'webhook', id: d.webhook_id }) },
                      names.get(d.webhook_id) ?? d.webhook_id,
                    ),
                  ),
                  h('td', {}, h('span', { class: `badge badge-${d.status}` }, DELIVERY_STATUS[d.status] ?? d.status)),
                  h('td', { class: 'number' }, formatNumber(d.attempt_count)),
                  h('td', { class: 'last', title: last && last.length > 40 ? last : null }, last ?? h('span', { class: 'hint' }, '–')),
                  h(
                    'td',
                    {},
                    h(
                      'button',
                      { type: 'button', onclick: () => context.navigate({ name: 'message', id: d.webhook_id, deliveryId: d.id }) },
                      t('log.view'),
                    ),
                  ),
                );
              }),
            ),
          ),
        ),
  );
}
