import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The shape of the code, checked like behaviour: no import circles between files or between
 * folders (type-only imports count too: a circle of types is still two modules that cannot be
 * understood apart), the HTTP layer never reaches the engine, the core imports no database
 * driver, the retired words stay retired, and comments say why rather than how many µs.
 */
const ROOT = resolve(import.meta.dirname, '..');

/** Every text file under `dir` (sources, assets, markdown), relative to the root. */
function textFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(?:ts|js|mjs|css|html|md|json|sql)$/.test(f))
    .map((f) => join(dir, f));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

/** Every module specifier a file imports or re-exports, static or dynamic. */
function specifiers(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g)) found.push(m[1]!);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) found.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]!);
  return found;
}

function graph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const local = specifiers(file)
      .filter((s) => s.startsWith('.'))
      .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, '.ts'));
    for (const target of local) expect(known.has(target), `${file} imports ${target}, which does not exist`).toBe(true);
    edges.set(file, local);
  }
  return edges;
}

/** Strongly connected components with more than one member, or a self-import (Tarjan). */
function circles(edges: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/**
 * The folder a file belongs to in the folder graph: the first folder under `src/` or `adapters/`
 * (`src/delivery/guard/check.ts` is part of `src/delivery`). The files at the top of `src/`
 * (types, model, store, errors, …) are the shared contracts every folder reads; they belong to no
 * folder, and the file-level check covers them.
 */
function folderOf(file: string): string | null {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : null;
}

/** Folder → the folders its files import directly, each edge with one import that makes it. */
function folderGraph(edges: Map<string, string[]>): { folders: Map<string, string[]>; why: Map<string, string> } {
  const folders = new Map<string, string[]>();
  const why = new Map<string, string>();
  for (const [file, targets] of edges) {
    const from = folderOf(file);
    if (!from) continue;
    if (!folders.has(from)) folders.set(from, []);
    for (const target of targets) {
      const to = folderOf(target);
      if (!to || to === from) continue;
      if (!folders.get(from)!.includes(to)) folders.get(from)!.push(to);
      if (!why.has(`${from} → ${to}`)) why.set(`${from} → ${to}`, `${file} imports ${target}`);
    }
  }
  return { folders, why };
}

/** A circle through every member of a strongly connected component, named edge by edge. */
function nameCircle(component: string[], edges: Map<string, string[]>, why: Map<string, string>): string {
  const members = new Set(component);
  // Breadth-first from the first member back to itself, inside the component.
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  let end: string | undefined;
  while (queue.length > 0 && end === undefined) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        end = v;
        break;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  const path = [start];
  for (let v = end; v !== undefined && v !== start; v = previous.get(v)) path.splice(1, 0, v);
  path.push(start);
  const hops = path.slice(1).map((to, i) => `${path[i]} → ${to} (${why.get(`${path[i]} → ${to}`) ?? '?'})`);
  return hops.join(', ');
}

/**
 * The retired words (the glossary, docs/concepts.md, names the word that replaced each). A word is
 * matched on its own or as part of an identifier (`SqlFlavor`, `RetryOptions`, `EMIT_RETRY_MS`),
 * in any case. "retry" stays only as a transient retry, the `Retry-After` header and the p-retry
 * package. A word written in double quotes on its own ("customer") is a mention of the word, as
 * the glossary needs, not a use.
 */
const RETIRED: Array<{ word: string; pattern: RegExp; whole?: boolean }> = [
  { word: 'customer', pattern: /customers?/gi, whole: true },
  { word: 'portal', pattern: /portal/gi },
  { word: 'flavor', pattern: /flavou?r/gi },
  { word: 'perEndpointConcurrency', pattern: /perEndpointConcurrency/gi },
  { word: 'retry', pattern: /retr(?:ying|ies|ied|y)/gi, whole: true },
];

/** True when `line.slice(at, at + length)` is a word of its own, or a hump of a camelCase or SNAKE_CASE name. */
function isWord(line: string, at: number, length: number): boolean {
  const before = line[at - 1] ?? '';
  const after = line[at + length] ?? '';
  const first = line[at]!;
  const last = line[at + length - 1]!;
  const startsWord = !/[A-Za-z]/.test(before) || (/[a-z]/.test(before) && /[A-Z]/.test(first));
  const endsWord = !/[A-Za-z]/.test(after) || (/[a-z]/.test(last) && /[A-Z]/.test(after));
  return startsWord && endsWord;
}

/** The uses of "retry" the glossary keeps: a transient retry, the Retry-After header, the p-retry package. */
function keptRetry(line: string, at: number, previous: string): boolean {
  let before = line.slice(0, at);
  // A phrase wrapped at the word: "transient" ends the line before (a comment's or a paragraph's).
  if (/^\s*(?:\*|\/\/|>)?\s*$/.test(before)) before = `${previous} `;
  return /transient\s+$/i.test(before) || /p-?$/i.test(before) || /^retry-after/i.test(line.slice(at));
}

/**
 * Where a retired word may stay, each with its reason. Keep it tiny: a new entry needs a reason
 * no rename can remove.
 */
const RETIRED_ALLOWED: Array<{ file: string; text: RegExp; reason: string }> = [
  // p-retry's own option names, in the one file that calls it.
  { file: 'src/transient.ts', text: /\b(?:retries|maxRetryTime|shouldRetry)\b/, reason: "p-retry's option names" },
  // The retired option names an unknown-option error points at their replacement.
  { file: 'src/unknown-options.ts', text: /\bretr(?:y|ies|yPolicy)\b/, reason: 'old option names, refused with their new name' },
  // PgBouncer's setting, named where docs/postgres.md tells users to lower it.
  { file: 'docs/postgres.md', text: /\bserver_login_retry\b/, reason: "PgBouncer's setting name" },
];

/** Every use of a retired word in `text`, as `line: word (the line)`. */
function retiredWords(file: string, text: string): string[] {
  const hits: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    for (const { word, pattern, whole } of RETIRED) {
      for (const m of line.matchAll(pattern)) {
        const at = m.index!;
        if (whole && !isWord(line, at, m[0].length)) continue;
        if (word === 'retry' && keptRetry(line, at, lines[i - 1] ?? '')) continue;
        // A mention: the word alone in double quotes.
        if (/["“]$/.test(line.slice(0, at)) && /^["”]/.test(line.slice(at + m[0].length))) continue;
        if (RETIRED_ALLOWED.some((a) => a.file === file && a.text.test(line.slice(Math.max(0, at - 20), at + m[0].length + 20)))) continue;
        hits.push(`${file}:${i + 1}: ${word} (${line.trim().slice(0, 120)})`);
      }
    }
  });
  return hits;
}

/**
 * The comments of a JavaScript or TypeScript text with their line numbers: line and block
 * comments, not strings, template literals or regular expressions.
 */
function comments(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let i = 0;
  let line = 1;
  // Template literals nest through `${ … }`: the brace depth at which each one resumes.
  const templates: number[] = [];
  let depth = 0;
  let lastSignificant = '';
  const n = text.length;
  const skipString = (quote: string) => {
    i++;
    while (i < n && text[i] !== quote) {
      if (text[i] === '\\') i++;
      else if (text[i] === '\n') line++;
      i++;
    }
    i++;
  };
  const skipTemplate = (): boolean => {
    // From inside a template literal to its end (false) or to a `${` (true).
    while (i < n) {
      const c = text[i]!;
      if (c === '\\') i += 2;
      else if (c === '`') {
        i++;
        return false;
      } else if (c === '$' && text[i + 1] === '{') {
        i += 2;
        return true;
      } else {
        if (c === '\n') line++;
        i++;
      }
    }
    return false;
  };
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? n : end;
      out.push({ line, text: text.slice(i, stop) });
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? n : end + 2;
      text
        .slice(i, stop)
        .split('\n')
        .forEach((part, k) => {
          out.push({ line: line + k, text: part });
        });
      for (let k = i; k < stop; k++) if (text[k] === '\n') line++;
      i = stop;
    } else if (c === "'" || c === '"') {
      skipString(c);
      lastSignificant = 'a';
    } else if (c === '`') {
      i++;
      if (skipTemplate()) {
        templates.push(depth);
        depth++;
      }
      lastSignificant = 'a';
    } else if (
      c === '/' &&
      (lastSignificant === '' ||
        /[(,=:[!&|?{};+\-*%<>~^]/.test(lastSignificant) ||
        /\b(?:return|typeof|case|in|of)$/.test(text.slice(Math.max(0, i - 7), i).trimEnd()))
    ) {
      // A regular expression literal: to its closing slash, outside a character class.
      i++;
      let inClass = false;
      while (i < n && (inClass || text[i] !== '/') && text[i] !== '\n') {
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i++;
      }
      i++;
      lastSignificant = 'a';
    } else {
      if (c === '{') depth++;
      else if (c === '}') {
        depth--;
        if (templates.length > 0 && templates.at(-1) === depth) {
          templates.pop();
          i++;
          if (skipTemplate()) {
            templates.push(depth);
            depth++;
          }
          lastSignificant = 'a';
          continue;
        }
      }
      lastSignificant = /[\w$]/.test(c) ? 'a' : c;
      i++;
    }
  }
  return out;
}

/** A figure in µs or ms: a measurement, which belongs in a decision record or the bench journal. */
const FIGURE = /\d[\d.,]*\s?(?:µs|us|ms)\b/;

/** Object literals with a property after a spread, comments left out: `{ ...x, y }`, `{ ...(c ? a : b), y }`. */
function spreadsThenProperties(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const spreadFirst = /\{\s*\.\.\.[^,{}()]*(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?[^,{}]*,\s*[\w'"[]/g;
  const spreadBetween = /,\s*\.\.\.\((?:[^()]|\([^()]*\))*\)\s*,\s*[\w'"[]/g;
  return [...code.matchAll(spreadFirst), ...code.matchAll(spreadBetween)].map((m) => m[0]);
}

describe('structure', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('adapters')];
  const edges = graph(files);

  test('no import circles in src/ and adapters/ (type-only imports included)', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(circles(edges)).toEqual([]);
  });

  test('the circle check finds a circle when there is one', () => {
    const fake = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(fake)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  test('the HTTP layer and the dashboard import types, never the engine', () => {
    for (const [file, targets] of edges) {
      if (file.startsWith('src/http/') || file.startsWith('src/dashboard/')) expect(targets, file).not.toContain('src/engine.ts');
    }
    // Nothing climbs back into the entry point: only index.ts imports engine.ts.
    const importers = [...edges].filter(([, targets]) => targets.includes('src/engine.ts')).map(([file]) => file);
    expect(importers).toEqual(['src/index.ts']);
  });

  test('the core imports no database driver, and the receiver nothing but jose', () => {
    for (const file of files.filter((f) => f.startsWith('src/'))) {
      const external = specifiers(file).filter((s) => !s.startsWith('.') && !s.startsWith('node:'));
      expect(
        external.filter((s) => /^(pg|better-sqlite3|kysely)(\/|$)/.test(s)),
        file,
      ).toEqual([]);
      if (file.startsWith('src/receiver/'))
        expect(
          external.filter((s) => s !== 'jose'),
          file,
        ).toEqual([]);
    }
  });

  test('the per-delivery and per-emit path builds no object with properties after a spread', () => {
    // On Node 20 `{ ...base, more }` costs ~1 µs per property after the spread and gives every
    // object a hidden class of its own (bench/journal/2026-11-26.md, "two V8 cliffs": fan-out 10
    // lost a sixth of its speed to one such record). Write the fields out; a spread alone, or last,
    // is fine.
    const hot = files.filter(
      (f) =>
        /^src\/(delivery|scheduler)\//.test(f) ||
        ['src/emit.ts', 'src/ids.ts', 'src/signing/token.ts', 'src/telemetry/telemetry.ts', 'src/telemetry/metrics.ts'].includes(f) ||
        /^adapters\/(kysely\/(outcomes|rows|due|texts|store)|sqlite\/(claim|driver)|postgres\/(claim|record|emit))\.ts$/.test(f),
    );
    expect(hot.length).toBeGreaterThan(20);
    for (const file of hot) expect(spreadsThenProperties(readFileSync(join(ROOT, file), 'utf8')), file).toEqual([]);
  });

  test('the spread check finds properties after a spread, and leaves a lone or last spread alone', () => {
    expect(spreadsThenProperties('return { ...base, durationMs: 1 };')).toHaveLength(1);
    expect(spreadsThenProperties('f({\n  ...pick(a, b),\n  "x": 1,\n})')).toHaveLength(1);
    expect(spreadsThenProperties('const o = { a: 1, ...(c ? { b } : {}), d: 2 };')).toHaveLength(1);
    expect(spreadsThenProperties('const o = { ...base };\n// { ...base, more } in a comment\nconst p = { a, ...rest };')).toEqual([]);
  });

  test('no import circles between the folders of src/ and adapters/ (type-only imports included)', () => {
    const { folders, why } = folderGraph(edges);
    expect(folders.size).toBeGreaterThan(8);
    const found = circles(folders).map((component) => nameCircle(component, folders, why));
    expect(found).toEqual([]);
  });

  test('the folder check finds a circle through files of two folders, and ignores the files at the top', () => {
    const fake = new Map([
      ['src/delivery/dispatch.ts', ['src/scheduler/backoff.ts', 'src/types.ts']],
      ['src/delivery/guard/check.ts', ['src/delivery/transport.ts']],
      ['src/delivery/transport.ts', ['src/delivery/guard/check.ts']],
      ['src/scheduler/backoff.ts', []],
      ['src/scheduler/scheduler.ts', ['src/delivery/dispatch.ts']],
      ['src/types.ts', ['src/delivery/transport.ts', 'src/scheduler/backoff.ts']],
      ['src/http/handler.ts', ['src/types.ts']],
    ]);
    const { folders, why } = folderGraph(fake);
    const found = circles(folders);
    expect(found).toEqual([['src/delivery', 'src/scheduler']]);
    expect(nameCircle(found[0]!, folders, why)).toBe(
      'src/delivery → src/scheduler (src/delivery/dispatch.ts imports src/scheduler/backoff.ts), ' +
        'src/scheduler → src/delivery (src/scheduler/scheduler.ts imports src/delivery/dispatch.ts)',
    );
  });

  test('the retired words are used nowhere in src/, adapters/ and the docs', () => {
    const docs = ['README.md', 'ARCHITECTURE.md', 'bench/README.md', ...textFiles('docs').filter((f) => f.endsWith('.md'))];
    const all = [...textFiles('src'), ...textFiles('adapters'), ...docs.filter((f) => existsSync(join(ROOT, f)))];
    expect(all.length).toBeGreaterThan(100);
    const hits = all.flatMap((file) => [
      // A file named after one, too (`portal.js`).
      ...retiredWords(file, file).map((hit) => hit.replace(/^([^:]+):1:/, '$1: its name:')),
      ...retiredWords(file, readFileSync(join(ROOT, file), 'utf8')),
    ]);
    expect(hits).toEqual([]);
  });

  test('the retired-word check finds uses and leaves transient retries, Retry-After, p-retry and mentions alone', () => {
    const text = [
      'a customer, Customers and customer_id', // 3
      'export interface SqlFlavor {} // each flavour', // 2
      '<webhooks-portal>', // 1
      'delivery: { perEndpointConcurrency: 8 }', // 1
      'retry, retries, RETRIED, retrying, RetryOptions, shouldRetry, EMIT_RETRY_MS, #retryMs', // 8
      'a transient retry, transient retries, Retry-After, retry-after: 10, p-retry, pRetry(fn)', // 0
      'never "customer", never “retry”; retrieve, customary, retract', // 0
    ].join('\n');
    const hits = retiredWords('x.ts', text);
    expect(hits.map((h) => h.split(':')[1])).toEqual(['1', '1', '1', '2', '2', '3', '4', '5', '5', '5', '5', '5', '5', '5', '5']);
    expect(hits[0]).toBe('x.ts:1: customer (a customer, Customers and customer_id)');
    expect(retiredWords('src/transient.ts', 'pRetry(fn, { retries: 1_000, shouldRetry })')).toEqual([]);
    expect(retiredWords('x.ts', ' * after a transient\n * retry after a lost reply')).toEqual([]);
    expect(retiredWords('x.ts', ' * after a\n * retry after a lost reply')).toHaveLength(1);
    expect(retiredWords('src/other.ts', '{ retries: 1_000 }')).toHaveLength(1);
  });

  test('no µs or ms figure in a comment under src/ and adapters/: comments say why, measurements live in the docs', () => {
    const code = [...textFiles('src'), ...textFiles('adapters')].filter((f) => /\.(?:ts|js|mjs)$/.test(f));
    const hits = code.flatMap((file) =>
      comments(readFileSync(join(ROOT, file), 'utf8'))
        .filter((c) => FIGURE.test(c.text))
        .map((c) => `${file}:${c.line}: ${c.text.trim().slice(0, 120)}`),
    );
    expect(hits).toEqual([]);
  });

  test('no issue number under src/ and adapters/: a reader of the code has no tracker, the docs say where a feature is described', () => {
    const code = [...textFiles('src'), ...textFiles('adapters')].filter((f) => /\.(?:ts|js|mjs)$/.test(f));
    const hits = code.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bissues? #?\d+/i.test(line) ? [`${file}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])),
    );
    expect(hits).toEqual([]);
  });

  test('the figure check reads comments only, never code, strings, templates or regular expressions', () => {
    const text = [
      'const GATHER_MS = 2; // waits 2 ms', // line 1: a comment with a figure
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a source text to scan, not a template
      "const s = '// 5 ms'; const t = `/* 3 µs */ ${x /* 4 us */}`;", // line 2: strings; one comment inside ${}
      'const r = /\\/\\/ 7ms/; const d = a / b / 2; // fine', // line 3: a regex, a division
      '/**', // 4
      ' * Default 1000 ms.', // 5
      ' */',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a source text to scan, not a template
      'f(`a${`b${c}`}`); // 9ms later', // 7
    ].join('\n');
    const found = comments(text)
      .filter((c) => FIGURE.test(c.text))
      .map((c) => c.line);
    expect(found).toEqual([1, 2, 5, 7]);
  });

  test('ARCHITECTURE.md stays short and true: at most 300 lines, every file it names exists, every link resolves', () => {
    const text = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
    expect(text.split('\n').length).toBeLessThanOrEqual(300);
    const code = new Set([...sourceFiles('src'), ...sourceFiles('adapters')].map((f) => f.split('/').pop()));
    // A file named in the text or the module tree (`kysely/due.ts`, `outbox.ts`): some source file has that name.
    const named = [...text.matchAll(/([\w-]+)\.ts\b/g)].map((m) => `${m[1]}.ts`);
    expect(named.length).toBeGreaterThan(50);
    expect(named.filter((name) => !code.has(name))).toEqual([]);
    // Every decision number it cites has its record.
    const records = readdirSync(join(ROOT, 'docs/decisions')).map((f) => f.slice(0, 3));
    const cited = [...text.matchAll(/(?:→|,|decided in\s*\|?)\s*(0\d\d)\b/g)].map((m) => m[1]);
    expect(cited.length).toBeGreaterThan(20);
    expect(cited.filter((n) => !records.includes(n!))).toEqual([]);
  });

  test('every relative link in ARCHITECTURE.md and docs/ resolves to a file', () => {
    const docs = ['ARCHITECTURE.md', ...textFiles('docs').filter((f) => f.endsWith('.md'))];
    const broken = docs.flatMap((doc) =>
      [...readFileSync(join(ROOT, doc), 'utf8').matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)]
        .map((m) => m[1]!)
        .filter((target) => !/^[a-z]+:/.test(target) && !existsSync(join(ROOT, dirname(doc), target)))
        .map((target) => `${doc}: ${target}`),
    );
    expect(broken).toEqual([]);
  });

  test('bench/: every script reads its options through lib/args.mjs, and no result file is committed', () => {
    const scripts = [
      ...readdirSync(join(ROOT, 'bench')).filter((f) => f.endsWith('.mjs') && !f.endsWith('-worker.mjs') && f !== 'receiver.mjs'),
      ...readdirSync(join(ROOT, 'bench/studies')).map((f) => `studies/${f}`),
    ];
    expect(scripts.length).toBeGreaterThan(15);
    const own = scripts.filter((f) => !readFileSync(join(ROOT, 'bench', f), 'utf8').includes('benchArgs('));
    expect(own, 'scripts not reading their options through benchArgs').toEqual([]);
    const argv = [...scripts, ...readdirSync(join(ROOT, 'bench/lib')).map((f) => `lib/${f}`)].filter(
      (f) =>
        !['lib/args.mjs', 'lib/scenario-host.mjs'].includes(f) && readFileSync(join(ROOT, 'bench', f), 'utf8').includes('process.argv'),
    );
    expect(argv, 'scripts reading process.argv themselves').toEqual([]);
    const committed = execFileSync('git', ['ls-files', 'bench/results'], { cwd: ROOT, encoding: 'utf8' }).trim();
    expect(committed).toBe('');
  });

  test('no file in src/ or adapters/ is over 450 lines', () => {
    const files = [...textFiles('src'), ...textFiles('adapters')].filter((f) => /\.(?:ts|js|mjs)$/.test(f));
    expect(files.length).toBeGreaterThan(150);
    const over = files
      .map((f) => [f, readFileSync(join(ROOT, f), 'utf8').split('\n').length] as const)
      .filter(([, n]) => n > 450)
      .map(([f, n]) => `${f}: ${n} lines`);
    expect(over).toEqual([]);
  });

  test('src/version.ts is the version in package.json (npm run build regenerates it)', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const { VERSION } = await import('../src/version.js');
    expect(VERSION).toBe(version);
  });
});
