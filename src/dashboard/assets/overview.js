/**
 * A webhook's overview: delivered and failed attempts over 24 hours, 7 or 30 days (from the
 * hourly counters), success rate, requests, and median and 95th percentile durations.
 */
/** @import { ViewContext } from './api.js' */
import { errorRate, overviewChart } from './chart.js';
import { h, replace } from './dom.js';
import { explain, formatMs, formatNumber, formatPercent, t } from './words.js';

/** The periods, by the words of their `range.*` keys. */
export const RANGES = /** @type {const} */ (['24h', '7d', '30d']);

/**
 * @param {ViewContext} context
 * @param {string} webhookId
 */
export function overviewPanel(context, webhookId) {
  let range = '24h';
  const body = h('div', { 'aria-live': 'polite', 'aria-busy': 'true' });
  const buttons = RANGES.map((value) =>
    h(
      'button',
      { type: 'button', 'aria-pressed': String(value === range), 'data-range': value, onclick: () => show(value) },
      t(`range.${value}`),
    ),
  );
  void show(range);
  return h('div', { class: 'overview' }, h('div', { class: 'ranges', role: 'group', 'aria-label': t('stats.period') }, buttons), body);

  /** @param {string} value */
  async function show(value) {
    range = value;
    for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.range === value));
    body.setAttribute('aria-busy', 'true');
    try {
      const o = await context.api.overview(webhookId, value);
      if (range !== value) return;
      const ms = (/** @type {number | null} */ n) => (n === null ? '–' : formatMs(n));
      /** @param {import('./words.js').UiKey} key @param {string} value */
      const figure = (key, value) => h('span', {}, h('span', { class: 'label' }, `${t(key)} `), h('strong', {}, value));
      replace(
        body,
        h(
          'p',
          { class: 'figures' },
          figure('stats.rate', formatPercent(o.success_rate)),
          figure('stats.errorRate', errorRate(o)),
          figure('stats.requests', formatNumber(o.attempts)),
          figure('stats.delivered', formatNumber(o.succeeded)),
          figure('stats.failed', formatNumber(o.failed)),
          figure('stats.median', ms(o.median_ms)),
          figure('stats.p95', ms(o.p95_ms)),
        ),
        overviewChart(o, t(/** @type {import('./words.js').UiKey} */ (`range.${value}`))),
        h(
          'p',
          { class: 'chart-legend', 'aria-hidden': 'true' },
          h('span', { class: 'ok' }, t('stats.delivered')),
          h('span', { class: 'bad' }, t('stats.failed')),
        ),
      );
    } catch (error) {
      replace(body, h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
    body.removeAttribute('aria-busy');
  }
}
