/**
 * A webhook's overview: delivered and failed attempts over 24 hours, 7 or 30 days (from the
 * hourly counters), success rate, requests, and median and 95th percentile durations.
 */
/** @import { ViewContext } from './api.js' */
import { count, overviewChart, percent } from './chart.js';
import { h, replace } from './dom.js';
import { explain } from './words.js';

/** @type {Readonly<Record<string, string>>} */
export const RANGES = { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' };

/**
 * @param {ViewContext} context
 * @param {string} webhookId
 */
export function overviewPanel(context, webhookId) {
  let range = '24h';
  const body = h('div', { 'aria-live': 'polite', 'aria-busy': 'true' });
  const buttons = Object.entries(RANGES).map(([value, label]) =>
    h('button', { type: 'button', 'aria-pressed': String(value === range), 'data-range': value, onclick: () => show(value) }, label),
  );
  void show(range);
  return h('div', { class: 'overview' }, h('div', { class: 'ranges', role: 'group', 'aria-label': 'Overview period' }, buttons), body);

  /** @param {string} value */
  async function show(value) {
    range = value;
    for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.range === value));
    body.setAttribute('aria-busy', 'true');
    try {
      const o = await context.api.overview(webhookId, value);
      if (range !== value) return;
      const ms = (/** @type {number | null} */ n) => (n === null ? '–' : `${count(n)} ms`);
      replace(
        body,
        h(
          'p',
          { class: 'figures' },
          h('span', {}, h('span', { class: 'label' }, 'Success rate '), h('strong', {}, percent(o.success_rate))),
          h('span', {}, h('span', { class: 'label' }, 'Requests '), h('strong', {}, count(o.attempts))),
          h('span', {}, h('span', { class: 'label' }, 'Delivered '), h('strong', {}, count(o.succeeded))),
          h('span', {}, h('span', { class: 'label' }, 'Failed '), h('strong', {}, count(o.failed))),
          h('span', {}, h('span', { class: 'label' }, 'Median duration '), h('strong', {}, ms(o.median_ms))),
          h('span', {}, h('span', { class: 'label' }, '95th percentile '), h('strong', {}, ms(o.p95_ms))),
        ),
        overviewChart(o, RANGES[value] ?? value),
        h(
          'p',
          { class: 'chart-legend', 'aria-hidden': 'true' },
          h('span', { class: 'ok' }, 'Delivered'),
          h('span', { class: 'bad' }, 'Failed'),
        ),
      );
    } catch (error) {
      replace(body, h('p', { class: 'error', role: 'alert' }, explain(error).text));
    }
    body.removeAttribute('aria-busy');
  }
}
