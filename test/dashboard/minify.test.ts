import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { stripAsset } from '../../src/dashboard/minify.js';

/**
 * The assets as served (src/dashboard/minify.ts): each module is the same program once its
 * comments and indentation are gone. TypeScript's own parser reads the source and the served text,
 * and its printer writes both out without comments: the two must be the same text, so no token
 * moved, merged or changed meaning (a `/` taken for the wrong thing, a line break lost before a
 * `return`'s value, a template literal's text touched).
 */
const DIR = new URL('../../src/dashboard/assets/', import.meta.url);
const printer = ts.createPrinter({ removeComments: true });
const program = (text: string) => printer.printFile(ts.createSourceFile('m.js', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS));
/** A stylesheet's tokens: comments out, every run of white space one space. */
const cssTokens = (text: string) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\s+/g, ' ')
    .trim();

describe('the served assets', () => {
  for (const name of readdirSync(DIR).filter((n) => /\.(js|css)$/.test(n))) {
    test(`${name} is the same ${name.endsWith('.js') ? 'program' : 'stylesheet'}, smaller`, () => {
      const source = readFileSync(new URL(name, DIR), 'utf8');
      const kind = name.endsWith('.js') ? 'js' : 'css';
      const served = stripAsset(source, kind);
      if (kind === 'js') expect(program(served)).toBe(program(source));
      else expect(cssTokens(served)).toBe(cssTokens(source));
      expect(served.length).toBeLessThan(source.length);
      expect(stripAsset(served, kind)).toBe(served);
    });
  }
});

describe('stripAsset', () => {
  test('keeps strings, template literals and regular expressions as written, and the line breaks that end statements', () => {
    const source = [
      '/** A module. */',
      "import { x } from './x.js'; // the x",
      '    const url = "https://example.com/a"; /* inline */ const n = (a) / 2 / b;',
      '',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a source text to strip, not a template
      '  const re = /[/*]+\\/\\/ /g, t = `  keep // this ${n /* gone */ + `  ${"/*"}  `}  // and this`;',
      'function f() {',
      '  return /*',
      '  */ n;',
      '}',
      "const s = x.replace(/'/g, '\\'') + typeof /a/;",
    ].join('\n');
    expect(stripAsset(source, 'js')).toBe(
      [
        "import { x } from './x.js';",
        'const url = "https://example.com/a";   const n = (a) / 2 / b;',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the stripped text, not a template
        'const re = /[/*]+\\/\\/ /g, t = `  keep // this ${n   + `  ${"/*"}  `}  // and this`;',
        'function f() {',
        'return',
        'n;',
        '}',
        "const s = x.replace(/'/g, '\\'') + typeof /a/;",
        '',
      ].join('\n'),
    );
    expect(program(stripAsset(source, 'js'))).toBe(program(source));
  });

  test('a stylesheet keeps its strings; its comments go without a trace', () => {
    const source = '/* Theme. */\n:host {\n  --a: "/* not a comment */";\n  margin: 0/**/ auto;\n}\n\n\n.b { color: red; }  \n';
    expect(stripAsset(source, 'css')).toBe(':host {\n--a: "/* not a comment */";\nmargin: 0 auto;\n}\n.b { color: red; }\n');
  });
});
