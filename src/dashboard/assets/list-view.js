/**
 * The environment's webhooks, or an empty state that says what to do. What needs the reader
 * comes first: a summary line ("2 of 20 failing"), the failing and disabled webhooks at the top,
 * and a search by name or URL.
 */
/** @import { Activity, ViewContext, Webhook } from './api.js' */
import { sparkline } from './chart.js';
import { formatRelative, formatTime, h, uid, urlText } from './dom.js';
import { subjectSearch } from './subject-view.js';
import { formatNumber, formatPercent, t, webhookStatus } from './words.js';

/** How many event codes a card lists before "and N more". */
const SHOWN_EVENTS = 4;

/** @param {ViewContext} context */
export async function renderList(context) {
  // The stats are a glance, not the list: without them (an older server, a failed read) the
  // list still shows.
  const [webhooks, stats] = await Promise.all([context.api.listWebhooks(), context.api.stats().catch(() => [])]);
  const byId = new Map(stats.map((s) => [s.webhook_id, s]));
  const header = h(
    'div',
    { class: 'bar' },
    h('h2', { tabindex: -1 }, t('shell.title')),
    h('button', { type: 'button', class: 'primary', 'data-write': '', onclick: () => context.navigate({ name: 'new' }) }, t('webhook.add')),
  );
  if (webhooks.length === 0) {
    return h(
      'section',
      { class: 'view' },
      header,
      h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, t('list.emptyTitle')), h('p', {}, t('list.emptyText'))),
    );
  }
  // Failing first, then disabled, then the rest, each group in the order they were created.
  const rank = (/** @type {Webhook} */ w) => (w.status === 'enabled' ? (w.failing_since ? 0 : 2) : 1);
  const ordered = webhooks.map((w, i) => ({ w, i })).sort((a, b) => rank(a.w) - rank(b.w) || a.i - b.i);
  const cards = ordered.map(({ w }) => ({ webhook: w, element: card(context, w, byId.get(w.id)) }));
  const failing = webhooks.filter((w) => rank(w) === 0).length;
  const disabled = webhooks.filter((w) => rank(w) === 1).length;
  const total = formatNumber(webhooks.length);
  const summary = [
    failing > 0 ? t('list.failing', { count: formatNumber(failing), total }) : t('list.allWorking', { total }),
    disabled > 0 ? t('list.disabled', { count: formatNumber(disabled) }) : null,
  ]
    .filter(Boolean)
    .join(' · ');
  const searchId = uid('search');
  const none = h('p', { class: 'hint', hidden: true }, t('list.noMatch'));
  const list = h(
    'ul',
    { class: 'cards', 'aria-label': t('list.label') },
    cards.map((c) => c.element),
  );
  const search = h('input', {
    id: searchId,
    type: 'search',
    autocomplete: 'off',
    oninput: () => {
      const words = /** @type {HTMLInputElement} */ (search).value.trim().toLowerCase();
      let shown = 0;
      for (const c of cards) {
        const hit = !words || `${c.webhook.name}\n${c.webhook.endpoint}`.toLowerCase().includes(words);
        c.element.hidden = !hit;
        if (hit) shown++;
      }
      none.hidden = shown > 0;
    },
  });
  return h(
    'section',
    { class: 'view' },
    header,
    h('p', { class: `summary${failing > 0 ? ' summary-failing' : ''}` }, summary),
    h('div', { class: 'field inline list-search' }, h('label', { for: searchId }, t('list.search')), search),
    none,
    list,
    // Across the webhooks: what was sent about a user or an organization.
    subjectSearch(context),
  );
}

/**
 * @param {ViewContext} context
 * @param {Webhook} webhook
 * @param {Activity | undefined} activity
 */
function card(context, webhook, activity) {
  // Since when, relative ("2 hours ago"); the exact time on hover.
  const status = webhookStatus(webhook, formatRelative, true);
  const since = webhook.failing_since ?? webhook.disabled_on;
  const codes = webhook.event_types;
  const more = codes.length - SHOWN_EVENTS;
  return h(
    'li',
    { class: 'card' },
    h(
      'h3',
      { class: 'card-title' },
      h('button', { type: 'button', class: 'link', onclick: () => context.navigate({ name: 'webhook', id: webhook.id }) }, webhook.name),
    ),
    h('p', { class: `status status-${status.kind}`, title: since && status.kind !== 'enabled' ? formatTime(since) : null }, status.text),
    activity ? activityLine(activity) : null,
    h('p', { class: 'endpoint' }, h('span', { class: 'label' }, `${t('webhook.endpoint')} `), ...urlText(webhook.endpoint)),
    h(
      'p',
      { class: 'events' },
      h('span', { class: 'label' }, `${t('webhook.events')} `),
      codes.slice(0, SHOWN_EVENTS).join(', '),
      more > 0 ? ` ${t('list.more', { count: formatNumber(more) })}` : '',
    ),
  );
}

/**
 * Success rate and requests over the last 24 hours, and the hourly chart.
 *
 * @param {Activity} activity
 */
function activityLine(activity) {
  return h(
    'div',
    { class: 'activity' },
    h(
      'p',
      { class: 'figures' },
      h('span', {}, h('span', { class: 'label' }, `${t('stats.rate24')} `), h('strong', {}, formatPercent(activity.success_rate))),
      h('span', {}, h('span', { class: 'label' }, `${t('stats.requests24')} `), h('strong', {}, formatNumber(activity.attempts))),
      // Failures at a glance: their number, marked when there are any.
      h(
        'span',
        {},
        h('span', { class: 'label' }, `${t('stats.failed24')} `),
        h('strong', { class: activity.failed > 0 ? 'bad' : null }, formatNumber(activity.failed)),
      ),
    ),
    sparkline(activity),
  );
}
