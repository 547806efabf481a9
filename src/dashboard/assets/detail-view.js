/**
 * One webhook: its status and actions (Disable / Enable, Delete with a confirmation), what to do
 * when it fails (fix-it.js), Send test event, its settings (the same form as Add webhook), and
 * its delivery log. A disabled webhook offers nothing that needs it enabled.
 */
/** @import { ViewContext, WebhookFields } from './api.js' */
import { deliveryLog } from './delivery-log.js';
import { confirmDanger, formatTime, h, uid } from './dom.js';
import { confirmEnable, fixItPanel, plainError } from './fix-it.js';
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
  // What waits is for the fix-it panel and Enable's question: the page shows without it.
  const [webhook, waiting] = await Promise.all([context.api.getWebhook(id), context.api.waiting(id).catch(() => null)]);
  const status = webhookStatus(webhook, formatTime);
  const heading = h('h2', { tabindex: -1 }, webhook.name);
  const actionSlot = h('div', { class: 'slot' });
  const enabled = webhook.status === 'enabled';
  const toggle = h(
    'button',
    {
      type: 'button',
      'data-focus': 'toggle',
      'data-write': '',
      // Enabling what held deliveries asks first: send them, or drop them.
      onclick: () =>
        !enabled && waiting && waiting.held > 0
          ? confirmEnable(context, toggle, webhook, waiting.held, (resume) => setEnabled(true, resume, true))
          : setEnabled(!enabled),
    },
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

  // What a person comes here for most, health first: is it working (overview, log, a test); the
  // settings change rarely. A test event needs it enabled: not offered while it is disabled.
  const sections = [
    section(t('detail.overview'), overviewPanel(context, webhook.id)),
    section(t('detail.log'), log.element),
    enabled
      ? section(
          t('detail.test'),
          testEventPanel(context, webhook, () => log.refresh()),
          true,
        )
      : null,
    section(t('verify.title'), verifyPanel(context, webhook)),
    // The signing secret's reveal and rotation: not for a read-only session (its server refuses both).
    webhook.format === 'standard-webhooks' ? section(t('detail.secret'), signingPanel(context, webhook), true) : null,
    section(t('detail.settings'), settings, true),
  ].filter((s) => s !== null);

  return h(
    'section',
    { class: 'view' },
    h('button', { type: 'button', class: 'link back', onclick: () => context.navigate({ name: 'list' }) }, t('nav.all')),
    h('div', { class: 'bar' }, heading, h('div', { class: 'actions' }, toggle, remove)),
    h('p', { class: `status status-${status.kind}` }, status.text),
    webhook.last_error && !enabled
      ? h('p', { class: 'hint' }, t('detail.lastError', { error: plainError(webhook.last_error) ?? '' }))
      : null,
    actionSlot,
    // A failing webhook: what went wrong, and how to get what waits delivered, before anything else.
    enabled && webhook.failing_since && waiting
      ? fixItPanel(context, webhook, waiting, () => {
          log.refresh();
          context.reload('toggle');
        })
      : null,
    jump(sections),
    ...sections,
  );

  /**
   * Enabling sends what was held unless `resumeHeld` is false (then it is dropped).
   *
   * @param {boolean} on
   * @param {boolean} [resumeHeld]
   * @param {boolean} [rethrow] A dialog asked: its refusal shows there.
   */
  async function setEnabled(on, resumeHeld = true, rethrow = false) {
    actionSlot.replaceChildren();
    try {
      await (on ? context.api.enable(webhook.id, resumeHeld) : context.api.disable(webhook.id));
      const said = !on
        ? 'notice.disabled'
        : !waiting || waiting.held === 0
          ? 'notice.enabledNone'
          : resumeHeld
            ? 'notice.enabled'
            : 'notice.enabledDropped';
      context.notify(t(said));
      context.reload('toggle');
    } catch (error) {
      if (rethrow) throw error;
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
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': id, 'data-write': write ? '' : null },
    h('h3', { id, tabindex: -1 }, title),
    content,
  );
}

/**
 * "On this page": a button per section that brings it into view and moves focus to its heading
 * (the address's #fragment is the view's, so these are not links).
 *
 * @param {HTMLElement[]} sections
 */
function jump(sections) {
  return h(
    'nav',
    { class: 'jump', 'aria-label': t('detail.jump') },
    sections.map((s) => {
      const heading = /** @type {HTMLElement} */ (s.querySelector('h3'));
      return h(
        'button',
        {
          type: 'button',
          class: 'link',
          'data-write': s.hasAttribute('data-write') ? '' : null,
          onclick: () => {
            heading.focus({ preventScroll: true });
            s.scrollIntoView({ block: 'start' });
          },
        },
        heading.textContent ?? '',
      );
    }),
  );
}
