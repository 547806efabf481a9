/**
 * What an account holder with a problem needs first: for a failing webhook, the last error in
 * plain words, since when, the date it will be disabled, and Send waiting now (every pending
 * delivery sent now, once the endpoint is fixed); for a disabled one, an Enable that says how many
 * deliveries were held and asks whether to send or drop them.
 */
/** @import { ViewContext, Webhook } from './api.js' */
import { formatTime, h, openModal, relative, uid } from './dom.js';
import { explain, plural, t, tParts } from './words.js';

/**
 * The engine's last error (`last_error`, as the attempt's record words it) in plain words.
 *
 * @param {string | null | undefined} error
 * @returns {string | null}
 */
export function plainError(error) {
  if (!error) return null;
  const status = /^expected HTTP 200, got (\d{3})/.exec(error);
  const code = status?.[1];
  if (code) return t(code.startsWith('3') ? 'plain.redirect' : 'plain.status', { code });
  const [, kind = '', detail = ''] = /^(\w+): ([\s\S]*)$/.exec(error) ?? [];
  if (kind === 'timeout') {
    const ms = /within (\d+) ms/.exec(detail) ?? /\((\d+) ms\)/.exec(detail);
    return t('plain.timeout', { seconds: ms ? String(Math.round(Number(ms[1]) / 100) / 10) : '?' });
  }
  if (kind === 'network') {
    const tls = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/i.test(detail);
    return t(tls ? 'plain.tls' : 'plain.connect', { detail: detail.replace(/\.$/, '') });
  }
  if (kind === 'dns') return t('plain.dns');
  if (kind === 'blocked') return t('plain.blocked');
  if (kind === 'internal') return t('plain.internal');
  if (kind === 'auth') return t('plain.auth', { detail: detail.replace(/\.$/, '') });
  return error;
}

/**
 * The panel at the top of a failing webhook's page.
 *
 * @param {ViewContext} context
 * @param {Webhook} webhook
 * @param {{ pending: number, held: number, sendable: number, disables_on: string | null }} waiting
 * @param {() => void} onSent
 */
export function fixItPanel(context, webhook, waiting, onSent) {
  const titleId = uid('fix');
  const slot = h('div', { class: 'slot' });
  // What Send would send: waiting for a later attempt (not in flight, not behind another of its subject).
  const count = h('span', { class: 'hint' }, waiting.sendable > 0 ? plural(waiting.sendable, 'count.waiting') : t('fix.nothing'));
  const send = h(
    'button',
    { type: 'button', class: 'primary', 'data-write': '', disabled: waiting.sendable === 0, onclick: () => run() },
    t('fix.send'),
  );
  return h(
    'section',
    { class: 'panel fix-it', 'aria-labelledby': titleId },
    h('h3', { id: titleId }, t('fix.title')),
    h('p', { class: 'fix-error' }, plainError(webhook.last_error) ?? ''),
    h('p', {}, tParts('fix.since', { since: relative(webhook.failing_since) ?? '' })),
    waiting.disables_on
      ? h('p', {}, tParts('fix.disablesOn', { date: h('time', { datetime: waiting.disables_on }, formatTime(waiting.disables_on)) }))
      : null,
    h('p', { class: 'hint', 'data-write': '' }, t('fix.steps')),
    h('div', { class: 'buttons', 'data-write': '' }, send, count),
    slot,
  );

  async function run() {
    slot.replaceChildren();
    send.disabled = true;
    try {
      const { sent } = await context.api.sendWaiting(webhook.id);
      context.notify(plural(sent, 'count.sent'));
      count.textContent = t('fix.nothing');
      onSent();
    } catch (error) {
      send.disabled = false;
      slot.append(h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
  }
}

/**
 * Enable a disabled webhook that held deliveries: how many, and send or drop them.
 *
 * @param {ViewContext} context
 * @param {HTMLElement} opener
 * @param {Webhook} webhook
 * @param {number} held
 * @param {(resumeHeld: boolean) => Promise<void>} enable
 */
export function confirmEnable(context, opener, webhook, held, enable) {
  const titleId = uid('enable-title');
  const textId = uid('enable-text');
  const slot = h('div', { class: 'slot' });
  /** @param {boolean} resume */
  const choose = async (resume) => {
    slot.replaceChildren();
    // One answer at a time: a second click must not drop what the first is sending.
    for (const b of dialog.querySelectorAll('button')) b.disabled = true;
    try {
      await enable(resume);
      dialog.close();
    } catch (error) {
      slot.append(h('p', { class: 'error', role: 'alert' }, explain(error).text));
      for (const b of dialog.querySelectorAll('button')) b.disabled = false;
    }
  };
  const dialog = /** @type {HTMLDialogElement} */ (
    h(
      'dialog',
      { class: 'dialog confirm', role: 'alertdialog', 'aria-labelledby': titleId, 'aria-describedby': textId },
      h(
        'div',
        { class: 'dialog-body' },
        h('h2', { id: titleId }, t('enable.title', { name: webhook.name })),
        h('p', { id: textId }, plural(held, 'count.held'), ' ', t('enable.ask')),
        slot,
        h(
          'div',
          { class: 'buttons' },
          h('button', { type: 'button', class: 'primary', onclick: () => choose(true) }, t('enable.send')),
          h('button', { type: 'button', onclick: () => choose(false) }, t('enable.drop')),
          h('button', { type: 'button', autofocus: true, onclick: () => dialog.close() }, t('common.cancel')),
        ),
      ),
    )
  );
  openModal(context.root, dialog, opener);
}
