/** The environment's webhooks, or an empty state that says what to do. */
/** @import { Activity, ViewContext, Webhook } from './api.js' */
import { sparkline } from './chart.js';
import { formatTime, h } from './dom.js';
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
  return h(
    'section',
    { class: 'view' },
    header,
    h(
      'ul',
      { class: 'cards', 'aria-label': t('list.label') },
      webhooks.map((webhook) => card(context, webhook, byId.get(webhook.id))),
    ),
  );
}

/**
 * @param {ViewContext} context
 * @param {Webhook} webhook
 * @param {Activity | undefined} activity
 */
function card(context, webhook, activity) {
  const status = webhookStatus(webhook, formatTime);
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
    h('p', { class: `status status-${status.kind}` }, status.text),
    activity ? activityLine(activity) : null,
    h('p', { class: 'endpoint' }, h('span', { class: 'label' }, `${t('webhook.endpoint')} `), webhook.endpoint),
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
    ),
    sparkline(activity),
  );
}
