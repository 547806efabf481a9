// Renders the results as plain-text tables (stdout) and as markdown (for the README).

const UNITS = {
  signaturesPerSec: '/s',
  oneCoreSyncPerSec: '/s',
  deliveriesPerSec: '/s',
  directPerSec: '/s',
  pgbouncerPerSec: '/s',
  wholeRunPerSec: '/s',
  jobsPerSec: '/s',
  healthyPerSec: '/s',
  soloPerSec: '/s',
  signaturesPerDelivery: '',
  healthyRatio: '×',
  ratio: '×',
  engineCpuPct: '%',
  workerCpuPct: '%',
  idleCpuPct: '%',
  rssGrowthMB: 'MB',
  rssEmptyMB: 'MB',
  rssBacklogMB: 'MB',
  insertSeconds: 's',
  seconds: 's',
  deliveries: '',
  jobs: '',
};
const unitOf = (name) => UNITS[name] ?? (/^p\d|P\d\d|Ms$|^p50|^p99|^max|MsPerDelivery$/.test(name) ? 'ms' : '');

export function fmt(x) {
  if (x === null || x === undefined) return '-';
  if (typeof x !== 'number') return String(x);
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString('en-US');
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

/** One line per (scenario, store, metric): median, [min .. max], and the ratio to the ceiling for rates. */
export function figureRows(plan, results, derived) {
  const rows = [];
  for (const step of plan) {
    for (const kind of step.kinds) {
      const r = results[step.id]?.[kind ?? 'any'];
      const store = kind ?? '-';
      if (!r) continue;
      if (r.status !== 'ok') {
        rows.push([step.id, store, r.status, r.reason ?? '', '', '']);
        continue;
      }
      for (const [name, s] of Object.entries(r.metrics)) {
        const unit = unitOf(name);
        const perSec = unit === '/s' && name !== 'signaturesPerSec' && derived.ceiling;
        rows.push([
          step.id,
          store,
          name,
          `${fmt(s.median)}${unit === '/s' ? '/s' : ` ${unit}`}`.trim(),
          `${fmt(s.min)} .. ${fmt(s.max)}`,
          perSec ? `${fmt(s.median / derived.ceiling)} × ceiling` : '',
        ]);
      }
    }
  }
  return rows;
}

export function textTable(header, rows) {
  const all = [header, ...rows].map((r) => r.map(String));
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r) =>
    r
      .map((c, i) => (c ?? '').padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(all[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

export function markdownTable(header, rows) {
  const esc = (c) => String(c ?? '').replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

export const FIGURE_HEADER = ['scenario', 'store', 'figure', 'median', 'min .. max', 'vs ceiling'];
export const TARGET_HEADER = ['target', 'measured', 'goal', 'verdict'];

export function targetRows(verdicts) {
  return verdicts.map((v) => [
    v.label,
    v.value === null ? '-' : `${fmt(v.value)} ${v.unit}`.trim(),
    `${v.op} ${v.threshold} ${v.unit}`.trim(),
    v.verdict,
  ]);
}
