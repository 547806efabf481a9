/** Add webhook: the form, and Save creates it. */
/** @import { ViewContext } from './api.js' */
import { h } from './dom.js';
import { webhookForm } from './webhook-form.js';

/** @param {ViewContext} context */
export async function renderNew(context) {
  const form = webhookForm(context, {
    webhook: null,
    onCancel: () => context.navigate({ name: 'list' }),
    onSave: async (fields) => {
      const { description, ...rest } = fields;
      const created = await context.api.createWebhook(description ? fields : rest);
      context.navigate({ name: 'webhook', id: created.id }, { notice: `Webhook “${fields.name}” created.`, replace: true });
    },
  });
  return h(
    'section',
    { class: 'view' },
    h('button', { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'list' }) }, 'All webhooks'),
    h('h2', { tabindex: -1 }, 'Add webhook'),
    h('p', { class: 'hint' }, 'We send each chosen event to your endpoint as an HTTP POST whose body is a signed token (JWT).'),
    form,
  );
}
