/**
 * <webhooks-dashboard>: the account holder's webhooks page as one custom element, in plain
 * JavaScript with no framework and no build step. The full page is this element in a minimal document; a host can
 * also place it in its own layout with one script tag:
 *
 *   <script type="module" src="/settings/webhooks/assets/dashboard.js"></script>
 *   <webhooks-dashboard></webhooks-dashboard>
 *
 * Attributes: `api` (the management API's base, default: `api/v1` beside the `assets/` folder this
 * script came from); `history` (keep the view in the address's #fragment, so Back works; the full
 * page sets it); `locale` (`en`, `fr`, `de`; default: the page's `lang`, then the browser's
 * language); `theme` (`light` or `dark` forces one; default: the reader's `prefers-color-scheme`);
 * `accent` (a CSS colour); `capabilities="read"` (hides every control that would change
 * something: a read-only link's session); `session="link"` (the page was opened from a link: an
 * ended session says so, not "sign in again"). Properties: `headers` and `fetch` (see api.js). Themed
 * with `--wd-*` custom properties (see dashboard.css).
 */
/** @import { Client, FetchOption, HeadersOption, Route, ViewContext } from './api.js' */
import { createClient } from './api.js';
import { h, replace } from './dom.js';
import { renderList } from './list-view.js';
import { explain, setLinkSession, t, useLocale } from './words.js';

const STYLESHEET = new URL('./dashboard.css', import.meta.url).href;
const DEFAULT_API = new URL('../api/v1', import.meta.url).href;
// The list is what a first load shows, so only it is in the static graph (and preloaded by the
// page); the other views load on first use, or when the browser is idle after the first render.
const detailView = () => import('./detail-view.js');
const newView = () => import('./new-view.js');
const catalogView = () => import('./catalog-view.js');
const messageView = () => import('./message-view.js');
const subjectView = () => import('./subject-view.js');

/**
 * How a view gets focus once shown: false (first load: the page keeps its own focus), 'heading'
 * (a new view: its heading, so a screen reader says where we are), or a `data-focus` key to put
 * focus back on the control that was used.
 *
 * @typedef {false | 'heading' | string | undefined} Focus
 */

class WebhooksDashboard extends HTMLElement {
  /** @type {HeadersOption} */
  #headers;
  /** @type {FetchOption | undefined} */
  #fetch;
  /** @type {Shell | undefined} Built on first connection. */
  #shell;
  /** @type {Route} */
  #route = { name: 'list' };
  #renders = 0;
  /** The view the notice line speaks of: another view shows none (Back from where it was raised). */
  #noticeOf = '';
  /** @type {Promise<string> | undefined} The locale's table, loaded once before the first render. */
  #locale;
  #onHash = () => void this.#show(routeFromHash(), { focus: 'heading' });

  /** Headers for every API call: an object, or a function returning one (or a promise of one). */
  get headers() {
    return this.#headers;
  }
  set headers(value) {
    this.#headers = value;
  }
  /** A replacement for `fetch`, used for every API call (same arguments, must return a Response). */
  get fetch() {
    return this.#fetch;
  }
  set fetch(value) {
    this.#fetch = value;
  }
  get apiBase() {
    return (this.getAttribute('api') ?? DEFAULT_API).replace(/\/+$/, '');
  }

  connectedCallback() {
    if (Object.hasOwn(this, 'headers')) {
      const value = this.headers;
      delete this.headers;
      this.headers = value;
    }
    if (Object.hasOwn(this, 'fetch')) {
      const value = this.fetch;
      delete this.fetch;
      this.fetch = value;
    }
    if (this.hasAttribute('history')) {
      window.addEventListener('hashchange', this.#onHash);
      this.#route = routeFromHash();
    }
    setLinkSession(this.getAttribute('session') === 'link');
    this.#locale ??= useLocale(this.getAttribute('locale') || document.documentElement.lang || navigator.language);
    // Set through the CSSOM (the page's CSP allows no style attribute): it crosses into the shadow root.
    const accent = this.getAttribute('accent');
    if (accent) this.style.setProperty('--wd-accent', accent);
    void this.#show(this.#route, { focus: false });
  }

  disconnectedCallback() {
    window.removeEventListener('hashchange', this.#onHash);
  }

  /** The shadow root and what lives in it, built once (a re-connected element keeps them). */
  #setUp() {
    if (this.#shell) return this.#shell;
    const root = this.attachShadow({ mode: 'open' });
    const link = h('link', { rel: 'stylesheet', href: STYLESHEET });
    // Nothing is shown before the styles apply (no flash of unstyled markup); data loads meanwhile.
    const styled = new Promise((resolve) => {
      link.addEventListener('load', resolve, { once: true });
      link.addEventListener('error', resolve, { once: true });
    });
    const notice = h('p', { class: 'notice', role: 'status' });
    const main = h('div', { class: 'dashboard', 'aria-busy': 'true' }, h('p', { class: 'loading' }));
    const nav = h('nav', { class: 'shell-nav' });
    root.append(link, notice, nav, main);
    this.#shell = { root, main, notice, nav, styled, client: createClient(this) };
    return this.#shell;
  }

  /**
   * What views may do: call the API, go elsewhere, say something, open dialogs in this root.
   *
   * @param {Shell} shell
   * @returns {ViewContext}
   */
  #context(shell) {
    return {
      api: shell.client,
      root: shell.root,
      navigate: (route, options) => this.#navigate(route, options),
      reload: (focus) => void this.#show(this.#route, { focus }),
      notify: (text) => {
        shell.notice.textContent = text;
        this.#noticeOf = viewKey(this.#route);
      },
      keepQuery: (query) => {
        const route = this.#route;
        if (route.name !== 'webhook') return;
        this.#route = { ...route, query };
        if (this.hasAttribute('history')) history.replaceState(history.state, '', hashFromRoute(this.#route));
      },
    };
  }

  /**
   * `replace`: the view left behind is gone (a created or deleted webhook): Back must skip it.
   *
   * @param {Route} route
   * @param {{ notice?: string, replace?: boolean }} [options]
   */
  #navigate(route, { notice, replace: replacing } = {}) {
    this.#setUp().notice.textContent = notice ?? '';
    this.#noticeOf = viewKey(route);
    if (this.hasAttribute('history')) {
      const hash = hashFromRoute(route);
      if (location.hash !== hash) {
        // hashchange shows it
        if (replacing) location.replace(hash);
        else location.hash = hash;
        return;
      }
    }
    void this.#show(route, { focus: 'heading' });
  }

  /**
   * Renders a view, and puts focus where `focus` says.
   *
   * @param {Route} route
   * @param {{ focus: Focus }} options
   */
  async #show(route, { focus }) {
    const render = ++this.#renders;
    this.#route = route;
    const shell = this.#setUp();
    if (viewKey(route) !== this.#noticeOf) shell.notice.textContent = '';
    const context = this.#context(shell);
    /** @type {HTMLElement} */
    let view;
    try {
      await this.#locale;
      shell.main.querySelector('.loading')?.replaceChildren(t('shell.loading')); // once its words are here
      if (route.name === 'webhook') view = await (await detailView()).renderDetail(context, route.id, route.query ?? '');
      else if (route.name === 'message') view = await (await messageView()).renderMessage(context, route.id, route.deliveryId);
      else if (route.name === 'new') view = await (await newView()).renderNew(context);
      else if (route.name === 'catalog') view = await (await catalogView()).renderCatalog(context);
      else if (route.name === 'subject') view = await (await subjectView()).renderSubject(context, route.subject);
      else view = await renderList(context);
    } catch (error) {
      view = errorView(context, error);
    }
    await shell.styled;
    if (render !== this.#renders) return; // a later navigation won
    replace(shell.main, view);
    shell.main.removeAttribute('aria-busy');
    replace(
      shell.nav,
      this.getAttribute('capabilities') === 'read' ? h('p', { class: 'read-only' }, t('shell.readOnly')) : null,
      // On the list only: the other views keep their own order of stops for the keyboard.
      route.name === 'list'
        ? h('button', { type: 'button', class: 'link', onclick: () => this.#navigate({ name: 'catalog' }) }, t('nav.catalog'))
        : null,
    );
    // For the host's own timing (and bench/dashboard-load.mjs): when each view was on screen.
    performance.mark('webhooks-dashboard:render', { detail: route.name });
    if (render === 1)
      (window.requestIdleCallback ?? setTimeout)(() => Promise.all([detailView(), newView(), messageView()]).catch(() => {}));
    if (focus === 'heading') view.querySelector('h2')?.focus();
    else if (focus) /** @type {HTMLElement | null} */ (view.querySelector(`[data-focus="${focus}"]`))?.focus();
  }
}

/**
 * @typedef {object} Shell
 * @property {ShadowRoot} root
 * @property {HTMLElement} main Where views are shown.
 * @property {HTMLElement} notice The live status line.
 * @property {HTMLElement} nav Above every view: a read-only session's note; on the list, the way to the event catalog.
 * @property {Promise<unknown>} styled Settles once the stylesheet loaded (or failed to).
 * @property {Client} client
 */

/**
 * @param {ViewContext} context
 * @param {unknown} error
 */
function errorView(context, error) {
  return h(
    'section',
    { class: 'view' },
    h('h2', { tabindex: -1 }, t('shell.title')),
    h('p', { class: 'error', role: 'alert' }, explain(error).text),
    h('button', { type: 'button', onclick: () => context.navigate({ name: 'list' }) }, t('shell.back')),
  );
}

/** @returns {Route} */
function routeFromHash() {
  const message = /^#\/webhooks\/([^/?]+)\/deliveries\/([^/?]+)$/.exec(location.hash);
  if (message?.[1] !== undefined && message[2] !== undefined)
    return { name: 'message', id: decodeURIComponent(message[1]), deliveryId: decodeURIComponent(message[2]) };
  // `?…`: the log's filters (delivery-log.js), so a filtered log can be linked.
  const match = /^#\/webhooks\/([^/?]+)(?:\?(.*))?$/.exec(location.hash);
  if (match?.[1] !== undefined) return { name: 'webhook', id: decodeURIComponent(match[1]), query: match[2] ?? '' };
  if (location.hash === '#/catalog') return { name: 'catalog' };
  const about = /^#\/about\/(.+)$/.exec(location.hash);
  if (about?.[1]) return { name: 'subject', subject: decodeURIComponent(about[1]) };
  return location.hash === '#/new' ? { name: 'new' } : { name: 'list' };
}

/** @param {Route} route */
function hashFromRoute(route) {
  if (route.name === 'webhook') return `#/webhooks/${encodeURIComponent(route.id)}${route.query ? `?${route.query}` : ''}`;
  if (route.name === 'message') return `#/webhooks/${encodeURIComponent(route.id)}/deliveries/${encodeURIComponent(route.deliveryId)}`;
  if (route.name === 'catalog') return '#/catalog';
  if (route.name === 'subject') return `#/about/${encodeURIComponent(route.subject)}`;
  return route.name === 'new' ? '#/new' : '#/';
}

// Twice on one page (the full page's hashed URL and an embedder's stable URL) must not throw.
if (!customElements.get('webhooks-dashboard')) customElements.define('webhooks-dashboard', WebhooksDashboard);

/** Which view a route shows (its log filters aside): a notice belongs to one. @param {Route} route */
function viewKey(route) {
  return `${route.name}:${'id' in route ? route.id : 'subject' in route ? route.subject : ''}:${'deliveryId' in route ? route.deliveryId : ''}`;
}
