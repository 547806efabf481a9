/**
 * Activity charts as inline SVG, built with DOM calls (no markup strings, no styles in
 * attributes: the page's CSP allows neither): a small one per webhook on the list, and the
 * overview's bars of delivered and failed attempts. Each is an image with a text alternative
 * that says what it shows; the figures beside it carry the same facts as text.
 */
/** @import { Activity, Overview } from './api.js' */
import { formatTime, h } from './dom.js';
import { formatNumber, formatPercent, t } from './words.js';

const SVG = 'http://www.w3.org/2000/svg';

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attributes
 * @param {...Element} children
 */
function svg(tag, attributes, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

/**
 * Stacked bars, delivered under failed, scaled to the busiest point (at least 1, so an idle
 * period draws flat); `width` × `height` in the SVG's own units, stretched to its box by CSS.
 * Each point is a group with its own tooltip (its start, what was delivered and what failed),
 * over the whole height so that hovering anywhere in its column shows it.
 *
 * @param {{ at: string, succeeded: number, failed: number }[]} points
 * @param {{ width: number, height: number, label: string, className: string }} options
 */
export function bars(points, { width, height, label, className }) {
  const max = Math.max(1, ...points.map((p) => p.succeeded + p.failed));
  const step = width / Math.max(1, points.length);
  const gap = step > 6 ? 1 : 0.5;
  /** @type {Element[]} */
  const rects = [];
  points.forEach((p, i) => {
    const x = i * step + gap / 2;
    const w = Math.max(0.5, step - gap);
    const ok = (p.succeeded / max) * (height - 1);
    const bad = (p.failed / max) * (height - 1);
    const tip = svg('title', {});
    tip.textContent = t('chart.point', { at: formatTime(p.at), delivered: formatNumber(p.succeeded), failed: formatNumber(p.failed) });
    const column = [tip, svg('rect', { class: 'bar-hit', x: i * step, y: 0, width: step, height })];
    column.push(svg('rect', { class: 'bar-base', x, y: height - 1, width: w, height: 1 }));
    if (ok > 0) column.push(svg('rect', { class: 'bar-ok', x, y: height - ok, width: w, height: ok }));
    if (bad > 0) column.push(svg('rect', { class: 'bar-bad', x, y: height - ok - bad, width: w, height: bad }));
    rects.push(svg('g', { class: 'bar' }, ...column));
  });
  const title = svg('title', {});
  title.textContent = label;
  return svg(
    'svg',
    {
      class: className,
      viewBox: `0 0 ${width} ${height}`,
      preserveAspectRatio: 'none',
      role: 'img',
      'aria-label': label,
      focusable: 'false',
    },
    title,
    ...rects,
  );
}

/**
 * The list's small chart: 24 hourly bars.
 *
 * @param {Activity} activity
 */
export function sparkline(activity) {
  const label = t('chart.day', { delivered: formatNumber(activity.succeeded), failed: formatNumber(activity.failed) });
  return bars(activity.series, { width: 96, height: 24, label, className: 'sparkline' });
}

/**
 * The overview's chart.
 *
 * @param {Overview} overview
 * @param {string} rangeLabel
 */
export function overviewChart(overview, rangeLabel) {
  const label = t('chart.range', { range: rangeLabel, delivered: formatNumber(overview.succeeded), failed: formatNumber(overview.failed) });
  const points = overview.points;
  const max = Math.max(1, ...points.map((p) => p.succeeded + p.failed));
  // Axes as text beside the drawing (the SVG stretches, its own text would too): the scale's top
  // and bottom on the left, the period's first and last points below.
  return h(
    'div',
    { class: 'chart-frame' },
    h('div', { class: 'y-axis', 'aria-hidden': 'true' }, h('span', {}, t('chart.max', { count: formatNumber(max) })), h('span', {}, '0')),
    bars(points, { width: 300, height: 80, label, className: 'overview-chart' }),
    h(
      'div',
      { class: 'x-axis', 'aria-hidden': 'true' },
      h('span', {}, formatTime(points[0]?.at)),
      h('span', {}, formatTime(points.at(-1)?.at)),
    ),
  );
}

/**
 * The share of attempts that failed: `failed / attempts`, null with none.
 *
 * @param {{ attempts: number, failed: number }} counts
 */
export function errorRate(counts) {
  return formatPercent(counts.attempts === 0 ? null : counts.failed / counts.attempts);
}
