// Every bench script's options, read one way: node:util's parseArgs, strict. `--name=value` or
// `--name value`; a flag is `--name`. An unknown option or a stray argument stops the script with
// its usage, which is the script's own leading comment (one text, never out of step with a copy).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The leading `//` comment of the script at `url`, as text. */
function usageOf(url) {
  const lines = readFileSync(fileURLToPath(url), 'utf8').split('\n');
  const comment = [];
  for (const line of lines) {
    if (!line.startsWith('//')) break;
    comment.push(line.replace(/^\/\/ ?/, ''));
  }
  return comment.join('\n');
}

/**
 * The options of the script at `url` (pass `import.meta.url`). `options` is parseArgs's own shape:
 * `{ name: { type: 'string' | 'boolean', default?, multiple? } }`. With `positionals: true` the
 * answer is `{ values, positionals }`, otherwise the values alone. `--help` prints the usage.
 */
export function benchArgs(url, options, { positionals = false, args = process.argv.slice(2) } = {}) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean' } }, allowPositionals: positionals, strict: true });
  } catch (error) {
    console.error(`${error.message}\n\n${usageOf(url)}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    console.log(usageOf(url));
    process.exit(0);
  }
  return positionals ? parsed : parsed.values;
}

/**
 * A number option's value: `text` read as a number (or `fallback` when it was not given), which
 * must lie in [min, max] and, with `integer`, be whole; anything else stops the script.
 */
export function numberArg(name, text, fallback, { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY, integer = false } = {}) {
  const value = text === undefined ? fallback : Number(text);
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    console.error(`--${name}: ${JSON.stringify(text)} is not ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`);
    process.exit(2);
  }
  return value;
}

/** Where a script writes its results: `--out`, else a file under the system's temporary directory, never the tree. */
export function resultsFile(out, name) {
  return out ?? join(resultsDir(), name);
}

/** The directory for results: BENCH_RESULTS, else `<tmp>/identity-webhooks-bench`. */
export function resultsDir() {
  return process.env.BENCH_RESULTS ?? join(tmpdir(), 'identity-webhooks-bench');
}
