/** Add webhook: the form, and Save creates it. */
/** @import { ViewContext } from './api.js' */
import { h } from './dom.js';
import { webhookForm } from './webhook-form.js';
import { t } from './words.js';

/** @param {ViewContext} context */
export async function renderNew(context) {
  const form = webhookForm(context, {
    webhook: null,
    onCancel: () => context.navigate({ name: 'list' }),
    onSave: async (fields) => {
      const { description, ...rest } = fields;
      const created = await context.api.createWebhook(description ? fields : rest);
      context.navigate({ name: 'webhook', id: created.id }, { notice: t('notice.created', { name: fields.name }), replace: true });
    },
  });
  return h(
    'section',
    { class: 'view' },
    h('button', { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'list' }) }, t('nav.all')),
    h('h2', { tabindex: -1 }, t('webhook.add')),
    h('p', { class: 'hint' }, t('new.intro')),
    form,
  );
}
