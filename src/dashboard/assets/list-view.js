/** The environment's webhooks, or an empty state that says what to do. */
/** @import { ViewContext, Webhook } from './api.js' */
import { formatTime, h } from './dom.js';
import { webhookStatus } from './words.js';

/** How many event codes a card lists before "and N more". */
const SHOWN_EVENTS = 4;

/** @param {ViewContext} context */
export async function renderList(context) {
  const webhooks = await context.api.listWebhooks();
  const header = h(
    'div',
    { class: 'bar' },
    h('h2', { tabindex: -1 }, 'Webhooks'),
    h('button', { type: 'button', class: 'primary', 'data-write': '', onclick: () => context.navigate({ name: 'new' }) }, 'Add webhook'),
  );
  if (webhooks.length === 0) {
    return h(
      'section',
      { class: 'view' },
      header,
      h(
        'div',
        { class: 'empty' },
        h('p', { class: 'empty-title' }, 'No webhooks yet'),
        h(
          'p',
          {},
          'A webhook sends a signed message to your server whenever something happens here, such as a user signing up. ',
          'Select Add webhook, enter the URL of your endpoint and choose the events to send.',
        ),
      ),
    );
  }
  return h(
    'section',
    { class: 'view' },
    header,
    h(
      'ul',
      { class: 'cards', 'aria-label': 'Your webhooks' },
      webhooks.map((webhook) => card(context, webhook)),
    ),
  );
}

/**
 * @param {ViewContext} context
 * @param {Webhook} webhook
 */
function card(context, webhook) {
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
    h('p', { class: 'endpoint' }, h('span', { class: 'label' }, 'Endpoint '), webhook.endpoint),
    h(
      'p',
      { class: 'events' },
      h('span', { class: 'label' }, 'Events '),
      codes.slice(0, SHOWN_EVENTS).join(', '),
      more > 0 ? ` and ${more} more` : '',
    ),
  );
}
