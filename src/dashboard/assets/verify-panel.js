/**
 * How to verify: what an endpoint's developer needs to check this webhook's deliveries: the JWKS
 * URL and the issuer, and receiver programs that work as pasted (snippets.js, the same strings a
 * test runs). By the webhook's format: a webhook in the Standard Webhooks format (`format:
 * 'standard-webhooks'`) gets the standardwebhooks snippets instead.
 */
/** @import { ViewContext, Webhook } from './api.js' */
import { h, replace, uid } from './dom.js';
import { verifySnippets } from './snippets.js';
import { explain, t } from './words.js';

/**
 * @param {ViewContext} context
 * @param {Webhook} webhook
 */
export function verifyPanel(context, webhook) {
  const panel = h('div', { class: 'verify', 'aria-busy': 'true' }, h('p', { class: 'loading' }, t('shell.loading')));
  const format = /** @type {{ format?: string | null }} */ (webhook).format ?? null;
  context.api.verification().then(
    ({ issuer, jwks_url: jwksUrl }) => {
      const standard = format === 'standard-webhooks';
      replace(
        panel,
        h('p', { class: 'hint' }, t(standard ? 'verify.introStandard' : 'verify.intro')),
        standard
          ? null
          : h(
              'dl',
              { class: 'facts' },
              h('dt', {}, t('verify.jwks')),
              h('dd', {}, h('code', { class: 'code' }, jwksUrl)),
              h('dt', {}, t('verify.issuer')),
              h('dd', {}, h('code', { class: 'code' }, issuer)),
            ),
        verifySnippets({ issuer, jwksUrl, format }).map((snippet) => codeBlock(context, snippet.label, snippet.code, snippet.install)),
      );
      panel.removeAttribute('aria-busy');
    },
    (error) => {
      panel.replaceChildren(h('p', { class: 'error', role: 'alert' }, explain(error).text));
      panel.removeAttribute('aria-busy');
    },
  );
  return panel;
}

/**
 * A disclosure with a program (or a document) and a Copy button: closed, so a panel of several
 * stays short; its `<summary>` is reachable by Tab and opens with Enter or Space.
 *
 * @param {ViewContext} context
 * @param {string} label
 * @param {string} code
 * @param {string} [install]
 */
export function codeBlock(context, label, code, install) {
  const id = uid('code');
  return h(
    'details',
    { class: 'snippet' },
    h('summary', {}, label),
    install ? h('p', { class: 'hint' }, t('verify.install', { command: install })) : null,
    h('pre', { class: 'excerpt code-block', id, tabindex: 0, 'aria-label': t('verify.snippet', { label }) }, code),
    h('button', { type: 'button', 'aria-describedby': id, onclick: () => copy(context, code) }, t('copy.button')),
  );
}

/**
 * @param {ViewContext} context
 * @param {string} text
 */
async function copy(context, text) {
  try {
    await navigator.clipboard.writeText(text);
    context.notify(t('copy.done'));
  } catch {
    context.notify(t('copy.failed'));
  }
}
