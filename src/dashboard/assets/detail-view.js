/**
 * One webhook: its status and actions (Disable / Enable, Delete with a confirmation), Send test
 * event, its settings (the same form as Add webhook), and its delivery log.
 */
/** @import { ViewContext, WebhookFields } from './api.js' */
import { deliveryLog } from './delivery-log.js';
import { confirmDanger, formatTime, h, uid } from './dom.js';
import { overviewPanel } from './overview.js';
import { signingPanel } from './signing-fields.js';
import { testEventPanel } from './test-event.js';
import { verifyPanel } from './verify-panel.js';
import { webhookForm } from './webhook-form.js';
import { explain, t, webhookStatus } from './words.js';

/**
 * @param {ViewContext} context
 * @param {string} id
 * @param {string} [query] The log's filters, as the address keeps them.
 */
export async function renderDetail(context, id, query = '') {
  const webhook = await context.api.getWebhook(id);
  const status = webhookStatus(webhook, formatTime);
  const heading = h('h2', { tabindex: -1 }, webhook.name);
  const actionSlot = h('div', { class: 'slot' });
  const enabled = webhook.status === 'enabled';
  const toggle = h(
    'button',
    { type: 'button', 'data-focus': 'toggle', 'data-write': '', onclick: () => setEnabled(!enabled) },
    t(enabled ? 'detail.disable' : 'detail.enable'),
  );
  const remove = h(
    'button',
    { type: 'button', class: 'danger', 'data-write': '', onclick: () => confirmDelete(remove) },
    t('detail.delete'),
  );
  const log = deliveryLog(context, webhook, query);

  const settings = webhookForm(context, {
    webhook,
    /** @param {WebhookFields} fields */
    onSave: async (fields) => {
      await context.api.updateWebhook(webhook.id, { ...fields, description: fields.description || null });
      heading.textContent = fields.name;
      webhook.name = fields.name;
      context.notify(t('notice.saved'));
    },
  });

  return h(
    'section',
    { class: 'view' },
    h('button', { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'list' }) }, t('nav.all')),
    h('div', { class: 'bar' }, heading, h('div', { class: 'actions' }, toggle, remove)),
    h('p', { class: `status status-${status.kind}` }, status.text),
    webhook.last_error && !enabled ? h('p', { class: 'hint' }, t('detail.lastError', { error: webhook.last_error })) : null,
    actionSlot,
    // What a person comes here for most: is it working (test, log); the settings change rarely.
    section(
      t('detail.test'),
      testEventPanel(context, webhook, () => log.refresh()),
      true,
    ),
    section(t('detail.overview'), overviewPanel(context, webhook.id)),
    section(t('detail.log'), log.element),
    section(t('verify.title'), verifyPanel(context, webhook)),
    // The signing secret's reveal and rotation: not for a read-only session (its server refuses both).
    webhook.format === 'standard-webhooks' ? section(t('detail.secret'), signingPanel(context, webhook), true) : null,
    section(t('detail.settings'), settings, true),
  );

  /** @param {boolean} on */
  async function setEnabled(on) {
    actionSlot.replaceChildren();
    try {
      await (on ? context.api.enable(webhook.id) : context.api.disable(webhook.id));
      context.notify(t(on ? 'notice.enabled' : 'notice.disabled'));
      context.reload('toggle');
    } catch (error) {
      actionSlot.append(h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
  }

  /** @param {HTMLElement} opener */
  function confirmDelete(opener) {
    confirmDanger(context.root, opener, {
      title: t('delete.title', { name: webhook.name }),
      text: t('delete.text'),
      confirm: t('delete.confirm'),
      async action(close) {
        await context.api.deleteWebhook(webhook.id);
        close();
        context.navigate({ name: 'list' }, { notice: t('notice.deleted', { name: webhook.name }), replace: true });
      },
    });
  }
}

/**
 * @param {string} title
 * @param {HTMLElement} content
 * @param {boolean} [write] Only for those who may change things: hidden from a read-only session.
 */
function section(title, content, write = false) {
  const id = uid('section');
  return h('section', { class: 'panel', 'aria-labelledby': id, 'data-write': write ? '' : null }, h('h3', { id }, title), content);
}
