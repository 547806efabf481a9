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
  return {
    median: median(xs),
    min: xs.length ? Math.min(...xs) : null,
    max: xs.length ? Math.max(...xs) : null,
    runs: runs.map((x) => (Number.isFinite(x) ? round(x) : x)),
  };
}

export function round(x, digits = 3) {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Milliseconds since an arbitrary origin, from CLOCK_MONOTONIC: comparable across processes of one machine. */
export const monoMs = () => Number(process.hrtime.bigint()) / 1e6;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The engine process's CPU (user + system, all threads, ms) sampled every `intervalMs` against
 * CLOCK_MONOTONIC, so a window cut afterwards from the receiver's arrival times can be given its
 * own CPU. stop() takes a last sample and returns them all.
 */
export function cpuSampler(intervalMs = 50) {
  const samples = [];
  const take = () => {
    const u = process.cpuUsage();
    samples.push({ t: monoMs(), ms: (u.user + u.system) / 1000 });
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** CPU ms used by time t (CLOCK_MONOTONIC ms), interpolated between the samples around it. */
export function cpuAt(samples, t) {
  if (t <= samples[0].t) return samples[0].ms;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    if (t <= b.t) return a.ms + ((b.ms - a.ms) * (t - a.t)) / Math.max(1e-9, b.t - a.t);
  }
  return samples.at(-1).ms;
}

/**
 * Cuts one sustained run into `count` consecutive windows of (nearly) equal numbers of
 * deliveries. `t0` is when the run started (CLOCK_MONOTONIC ms), `arrivals` the time each
 * delivery was answered, in order. Window k runs from the end of window k-1 (t0 for the first,
 * so it carries the start-up) to its last delivery. With `cpu` samples (cpuSampler), each window
 * also gets the CPU spent in it.
 * @returns {{ deliveries: number, seconds: number, perSec: number, cpuMs?: number }[]}
 */
export function cutWindows(t0, arrivals, count, cpu) {
  const n = arrivals.length;
  const out = [];
  let from = t0;
  let done = 0;
  for (let k = 1; k <= count; k++) {
    const upTo = Math.round((k * n) / count);
    if (upTo <= done) continue;
    const to = arrivals[upTo - 1];
    const seconds = (to - from) / 1000;
    const w = { deliveries: upTo - done, seconds, perSec: (upTo - done) / seconds };
    if (cpu) w.cpuMs = cpuAt(cpu, to) - cpuAt(cpu, from);
    out.push(w);
    from = to;
    done = upTo;
  }
  return out;
}
