// Prints a results JSON (default: the newest full run in the results directory) as the markdown the
// README's Results section holds: node bench/report-md.mjs [file]

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs, resultsDir } from './lib/args.mjs';
import { FIGURE_HEADER, figureRows, markdownTable, TARGET_HEADER, targetRows } from './lib/report.mjs';

const dir = resultsDir();
const file =
  benchArgs(import.meta.url, {}, { positionals: true }).positionals[0] ??
  join(
    dir,
    readdirSync(dir)
      .filter((f) => f.endsWith('.json') && !f.includes('quick'))
      .sort()
      .at(-1),
  );
const r = JSON.parse(readFileSync(file, 'utf8'));
const m = r.machine;
console.log(
  `Run of ${r.startedAt} (${r.profile}, ${r.seconds} s): ${m.nproc} cores, ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}; load average at the start ${m.loadAverageAtStart.join(' / ')}.\n`,
);
console.log(markdownTable(TARGET_HEADER, targetRows(r.targets)));
console.log('');
console.log(markdownTable(FIGURE_HEADER, figureRows(r.plan, r.results, r.derived)));
