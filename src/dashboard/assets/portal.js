/**
 * <webhooks-portal>: the customer's webhooks page as one custom element, in plain JavaScript with
 * no framework and no build step. The full page is this element in a minimal document; a host can
 * also place it in its own layout with one script tag:
 *
 *   <script type="module" src="/settings/webhooks/assets/portal.js"></script>
 *   <webhooks-portal></webhooks-portal>
 *
 * Attributes: `api` (the management API's base, default: `api/v1` beside the `assets/` folder this
 * script came from); `history` (keep the view in the address's #fragment, so Back works; the full
 * page sets it). Properties: `headers` and `fetch` (see api.js). Themed with `--wp-*` custom
 * properties (see portal.css).
 */
import { createClient } from './api.js';
import { h, replace } from './dom.js';
import { renderList } from './list-view.js';
import { explain } from './words.js';

const STYLESHEET = new URL('./portal.css', import.meta.url).href;
const DEFAULT_API = new URL('../api/v1', import.meta.url).href;
// The list is what a first load shows, so only it is in the static graph (and preloaded by the
// page); the other views load on first use, or when the browser is idle after the first render.
const detailView = () => import('./detail-view.js');
const newView = () => import('./new-view.js');

class WebhooksPortal extends HTMLElement {
  #headers;
  #fetch;
  #root;
  #main;
  #notice;
  #styled;
  #client;
  #route = { name: 'list' };
  #renders = 0;
  #onHash = () => this.#show(routeFromHash(), { focus: 'heading' });

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
    // A host may set these before this script has loaded; they are then plain properties on the
    // element that would hide the accessors above.
    for (const name of ['headers', 'fetch']) {
      if (Object.hasOwn(this, name)) {
        const value = this[name];
        delete this[name];
        this[name] = value;
      }
    }
    if (!this.#root) this.#setUp();
    if (this.hasAttribute('history')) {
      window.addEventListener('hashchange', this.#onHash);
      this.#route = routeFromHash();
    }
    this.#show(this.#route, { focus: false });
  }

  disconnectedCallback() {
    window.removeEventListener('hashchange', this.#onHash);
  }

  #setUp() {
    this.#root = this.attachShadow({ mode: 'open' });
    const link = h('link', { rel: 'stylesheet', href: STYLESHEET });
    // Nothing is shown before the styles apply (no flash of unstyled markup); data loads meanwhile.
    this.#styled = new Promise((resolve) => {
      link.addEventListener('load', resolve, { once: true });
      link.addEventListener('error', resolve, { once: true });
    });
    this.#notice = h('p', { class: 'notice', role: 'status' });
    this.#main = h('div', { class: 'portal', 'aria-busy': 'true' }, h('p', { class: 'loading' }, 'Loading…'));
    this.#root.append(link, this.#notice, this.#main);
    this.#client = createClient(this);
  }

  /** What views may do: call the API, go elsewhere, say something, open dialogs in this root. */
  #context() {
    return {
      api: this.#client,
      root: this.#root,
      navigate: (route, options) => this.#navigate(route, options),
      reload: (focus) => this.#show(this.#route, { focus }),
      notify: (text) => {
        this.#notice.textContent = text;
      },
    };
  }

  /** `replace`: the view left behind is gone (a created or deleted webhook): Back must skip it. */
  #navigate(route, { notice, replace: replacing } = {}) {
    this.#notice.textContent = notice ?? '';
    if (this.hasAttribute('history')) {
      const hash = hashFromRoute(route);
      if (location.hash !== hash) {
        // hashchange shows it
        if (replacing) location.replace(hash);
        else location.hash = hash;
        return;
      }
    }
    this.#show(route, { focus: 'heading' });
  }

  /**
   * Renders a view. `focus`: false (first load: the page keeps its own focus), 'heading' (a new
   * view: its heading, so a screen reader says where we are), or a `data-focus` key to put focus
   * back on the control that was used.
   */
  async #show(route, { focus }) {
    const render = ++this.#renders;
    this.#route = route;
    const context = this.#context();
    let view;
    try {
      if (route.name === 'webhook') view = await (await detailView()).renderDetail(context, route.id);
      else if (route.name === 'new') view = await (await newView()).renderNew(context);
      else view = await renderList(context);
    } catch (error) {
      view = errorView(context, error);
    }
    await this.#styled;
    if (render !== this.#renders) return; // a later navigation won
    replace(this.#main, view);
    this.#main.removeAttribute('aria-busy');
    // For the host's own timing (and bench/dashboard-load.mjs): when each view was on screen.
    performance.mark('webhooks-portal:render', { detail: route.name });
    if (render === 1) (window.requestIdleCallback ?? setTimeout)(() => Promise.all([detailView(), newView()]).catch(() => {}));
    if (focus === 'heading') view.querySelector('h2')?.focus();
    else if (focus) view.querySelector(`[data-focus="${focus}"]`)?.focus();
  }
}

function errorView(context, error) {
  return h(
    'section',
    { class: 'view' },
    h('h2', { tabindex: -1 }, 'Webhooks'),
    h('p', { class: 'error', role: 'alert' }, explain(error).text),
    h('button', { type: 'button', onclick: () => context.navigate({ name: 'list' }) }, 'Back to all webhooks'),
  );
}

function routeFromHash() {
  const match = /^#\/webhooks\/([^/]+)$/.exec(location.hash);
  if (match) return { name: 'webhook', id: decodeURIComponent(match[1]) };
  return location.hash === '#/new' ? { name: 'new' } : { name: 'list' };
}

function hashFromRoute(route) {
  if (route.name === 'webhook') return `#/webhooks/${encodeURIComponent(route.id)}`;
  return route.name === 'new' ? '#/new' : '#/';
}

// Twice on one page (the full page's hashed URL and an embedder's stable URL) must not throw.
if (!customElements.get('webhooks-portal')) customElements.define('webhooks-portal', WebhooksPortal);
