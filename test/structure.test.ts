import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The shape of the code, checked like behaviour: no import circles (type-only imports count too:
 * a circle of types is still two modules that cannot be understood apart), the HTTP layer never
 * reaches the engine, the core imports no database driver.
 */
const ROOT = resolve(import.meta.dirname, '..');

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
    // object a hidden class of its own (bench/README.md: fan-out 10 lost a sixth of its speed to
    // one such record). Write the fields out; a spread alone, or last, is fine.
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

  test('src/version.ts is the version in package.json (npm run build regenerates it)', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const { VERSION } = await import('../src/version.js');
    expect(VERSION).toBe(version);
  });
});
