/**
 * Signing formats and endpoint auth in the dashboard: the form's fields (how deliveries
 * are signed, how the engine authenticates to the endpoint), and the webhook's "Signing secret"
 * panel (reveal, and rotate with a confirmation). Secrets are write-only: a field left empty
 * keeps the stored secret.
 */
/** @import { ViewContext, Webhook } from './api.js' */
import { confirmDanger, copyButton, formatTime, h, uid } from './dom.js';
import { explain, t } from './words.js';

/** What the server answers for a stored secret, and takes back as "keep it". */
const MASK = '********';

/**
 * The webhook form's group of Advanced options for signing and endpoint auth: one fieldset of the
 * Advanced section (advanced.js), whose refusals by the server appear next to their field.
 *
 * @param {Webhook | null} webhook
 * @returns {{ element: HTMLFieldSetElement, set: boolean, values: () => Record<string, unknown>, targets: Record<string, { slot: HTMLElement, control: HTMLElement }> }}
 */
export function signingGroup(webhook) {
  const auth = /** @type {Record<string, any> | null} */ (webhook?.auth ?? null);
  const format = select(t('signing.format'), 'format', webhook?.format ?? 'jwt', [
    ['jwt', t('signing.jwt')],
    ['standard-webhooks', t('signing.standard')],
  ]);
  const type = select(t('auth.type'), 'auth_type', auth?.type ?? 'none', [
    ['none', t('auth.none')],
    ['oauth2_client_credentials', t('auth.oauth')],
    ['mtls', t('auth.mtls')],
  ]);
  const keep = t('auth.keep');
  const optional = t('common.optional');
  const oauth = {
    token_url: input(t('auth.tokenUrl'), 'token_url', auth?.token_url),
    client_id: input(t('auth.clientId'), 'client_id', auth?.client_id),
    client_secret: input(
      t('auth.clientSecret'),
      'client_secret',
      '',
      'password',
      auth?.type === 'oauth2_client_credentials' ? keep : undefined,
    ),
    scope: input(t('auth.scope'), 'scope', auth?.scope, 'text', optional),
    audience: input(t('auth.audience'), 'audience', auth?.audience, 'text', optional),
  };
  const mtls = {
    certificate: area(t('auth.certificate'), 'certificate', auth?.certificate),
    private_key: area(t('auth.privateKey'), 'private_key', '', auth?.type === 'mtls' ? keep : undefined),
    ca: area(t('auth.ca'), 'ca', auth?.ca, t('auth.caHint')),
  };
  const oauthGroup = h(
    'div',
    { class: 'auth-fields' },
    Object.values(oauth).map((f) => f.wrap),
  );
  const mtlsGroup = h(
    'div',
    { class: 'auth-fields' },
    Object.values(mtls).map((f) => f.wrap),
  );
  const show = () => {
    oauthGroup.hidden = type.control.value !== 'oauth2_client_credentials';
    mtlsGroup.hidden = type.control.value !== 'mtls';
  };
  type.control.addEventListener('change', show);
  show();
  const authSlot = h('div', { class: 'slot' });
  const element = /** @type {HTMLFieldSetElement} */ (
    h(
      'fieldset',
      { class: 'option-group signing-fields' },
      h('legend', {}, t('signing.legend')),
      format.wrap,
      type.wrap,
      oauthGroup,
      mtlsGroup,
      authSlot,
    )
  );
  return {
    element,
    set: webhook !== null && (webhook.format === 'standard-webhooks' || auth !== null),
    targets: {
      format: { slot: format.slot, control: format.control },
      auth: { slot: authSlot, control: type.control },
    },
    values() {
      /** @type {Record<string, unknown>} */
      const out = { format: format.control.value };
      const chosen = type.control.value;
      if (chosen === 'none') {
        if (auth) out.auth = null;
      } else if (chosen === 'oauth2_client_credentials') {
        out.auth = {
          type: chosen,
          token_url: oauth.token_url.control.value.trim(),
          client_id: oauth.client_id.control.value,
          client_secret: oauth.client_secret.control.value || MASK,
          scope: oauth.scope.control.value || null,
          audience: oauth.audience.control.value || null,
        };
      } else {
        out.auth = {
          type: chosen,
          certificate: mtls.certificate.control.value,
          private_key: mtls.private_key.control.value || MASK,
          ca: mtls.ca.control.value || null,
        };
      }
      return out;
    },
  };
}

/**
 * The "Signing secret" panel of a standard-webhooks webhook: Reveal, and Rotate with a confirmation.
 *
 * @param {ViewContext} context
 * @param {Webhook} webhook
 */
export function signingPanel(context, webhook) {
  const out = h('div', { class: 'slot' });
  const reveal = h('button', { type: 'button', onclick: () => show() }, t('secret.reveal'));
  const rotate = h('button', { type: 'button', onclick: () => confirmRotate() }, t('secret.rotate'));
  const publicKey = webhook.signing?.public_key;
  return h(
    'div',
    { class: 'signing-panel' },
    h('p', { class: 'hint' }, t('secret.hint')),
    webhook.signing?.previous_secret_until
      ? h('p', { class: 'hint' }, t('secret.previous', { until: formatTime(webhook.signing.previous_secret_until) }))
      : null,
    publicKey ? h('p', {}, `${t('secret.publicKey')} `, h('code', {}, publicKey)) : null,
    h('div', { class: 'buttons' }, reveal, rotate),
    out,
  );

  async function show() {
    out.replaceChildren();
    try {
      const secret = await context.api.secret(webhook.id);
      out.append(h('p', {}, h('code', { class: 'secret' }, secret.secret), ' ', copyButton(context, secret.secret, t('copy.secret'))));
    } catch (error) {
      out.append(h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
  }

  function confirmRotate() {
    confirmDanger(context.root, rotate, {
      title: t('secret.rotateTitle'),
      text: t('secret.rotateText'),
      confirm: t('secret.rotateConfirm'),
      async action(close) {
        const secret = await context.api.rotateSecret(webhook.id);
        close();
        out.replaceChildren(
          h(
            'p',
            {},
            `${t('secret.new')} `,
            h('code', { class: 'secret' }, secret.secret),
            ' ',
            copyButton(context, secret.secret, t('copy.secret')),
          ),
        );
        context.notify(t('secret.rotated'));
      },
    });
  }
}

/**
 * @param {string} label
 * @param {string} name
 * @param {string} value
 * @param {Array<[string, string]>} options
 */
function select(label, name, value, options) {
  const id = uid('field');
  const control = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id, name },
      options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
    )
  );
  const slot = h('div', { class: 'slot' });
  return { wrap: h('div', { class: 'field' }, h('label', { for: id }, label), control, slot), control, slot };
}

/**
 * @param {string} label
 * @param {string} name
 * @param {string | null | undefined} value
 * @param {string} [type]
 * @param {string} [hint]
 */
function input(label, name, value, type = 'text', hint) {
  const id = uid('field');
  const control = /** @type {HTMLInputElement} */ (h('input', { id, name, type, autocomplete: 'off', value: value ?? '' }));
  return {
    wrap: h('div', { class: 'field' }, h('label', { for: id }, label), hint ? h('p', { class: 'hint' }, hint) : null, control),
    control,
  };
}

/**
 * @param {string} label
 * @param {string} name
 * @param {string | null | undefined} value
 * @param {string} [hint]
 */
function area(label, name, value, hint) {
  const id = uid('field');
  const control = /** @type {HTMLTextAreaElement} */ (h('textarea', { id, name, rows: 4, spellcheck: 'false', value: value ?? '' }));
  return {
    wrap: h('div', { class: 'field' }, h('label', { for: id }, label), hint ? h('p', { class: 'hint' }, hint) : null, control),
    control,
  };
}
