// Reads a V8 CPU profile (BENCH_WINDOW_PROF or BENCH_CPU_PROF) and prints where the samples fell:
// self time by file and by function, in µs per delivery when --deliveries says how many the
// window made; with --callers=NAME, who called the native function NAME (better-sqlite3's `run`
// and `all` are where SQLite's own time shows up, under the JavaScript that called them).
//
//   node bench/studies/profile-summary.mjs /tmp/prof/engine-123.cpuprofile --deliveries=32000 [--top=40] [--callers=run]

import { readFileSync } from 'node:fs';
import { benchArgs, numberArg } from '../lib/args.mjs';

const { values, positionals } = benchArgs(
  import.meta.url,
  { deliveries: { type: 'string' }, top: { type: 'string' }, callers: { type: 'string', default: '' } },
  { positionals: true },
);
const file = positionals[0];
if (!file) throw new TypeError('usage: node bench/studies/profile-summary.mjs FILE.cpuprofile [--deliveries=N] [--top=N] [--callers=NAME]');
const deliveries = numberArg('deliveries', values.deliveries, 0, { min: 0 });
const top = numberArg('top', values.top, 30, { min: 1, integer: true });
const callersOf = values.callers;

const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  self.set(id, (self.get(id) ?? 0) + dt);
  total += dt;
});

const where = (frame) => (frame.url || '(native)').replace(/^file:\/\/.*?\/(?=(node_modules|dist|bench)\/)/, '');
const show = (us) => (deliveries ? `${(us / deliveries).toFixed(2).padStart(8)} µs/d` : `${(us / 1000).toFixed(1).padStart(8)} ms`);
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${show(us)} ${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`);
};

const byFile = new Map();
const byFunction = new Map();
const callers = new Map();
for (const [id, us] of self) {
  const frame = byId.get(id).callFrame;
  const file = where(frame);
  byFile.set(file, (byFile.get(file) ?? 0) + us);
  const fn = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  if (callersOf && frame.functionName === callersOf) {
    const chain = [];
    for (let up = parent.get(id); up !== undefined && chain.length < 3; up = parent.get(up)) {
      const f = byId.get(up).callFrame;
      chain.push(`${f.functionName || '(anonymous)'} ${where(f)}:${f.lineNumber + 1}`);
    }
    const key = chain.join(' < ');
    callers.set(key, (callers.get(key) ?? 0) + us);
  }
}

console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled${deliveries ? ` for ${deliveries} deliveries` : ''}`);
print('self time by file', byFile);
print('self time by function', byFunction);
if (callersOf) print(`callers of ${callersOf}`, callers);
