// Small statistics helpers: every figure the bench prints is a median of runs with min/max.

/** Median of numbers (mean of the middle two for an even count); null for none. */
export function median(xs) {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile of numbers, p in [0, 100]. */
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return null;
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1];
}

/** One run's latency samples (ms) as p50/p99/max. */
export function latency(samplesMs) {
  return { p50: percentile(samplesMs, 50), p99: percentile(samplesMs, 99), max: percentile(samplesMs, 100), n: samplesMs.length };
}

/** Several runs of one figure: the median is what we report, min/max show the spread. */
export function summarize(runs) {
  const xs = runs.filter(Number.isFinite);
  return { median: median(xs), min: xs.length ? Math.min(...xs) : null, max: xs.length ? Math.max(...xs) : null, runs: runs.map((x) => (Number.isFinite(x) ? round(x) : x)) };
}

export function round(x, digits = 3) {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Milliseconds since an arbitrary origin, from CLOCK_MONOTONIC: comparable across processes of one machine. */
export const monoMs = () => Number(process.hrtime.bigint()) / 1e6;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
