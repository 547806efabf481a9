import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { loadAssets } from '../../src/dashboard/assets.js';
import { bundleModules } from '../../src/dashboard/bundle.js';

/**
 * The full page's script (src/dashboard/bundle.ts): every module in one file. The modules run as
 * the browser would run them (a module's imports first, each module once, a dynamic import
 * resolving to the same exports), and the dashboard's own bundles are valid modules with no
 * import left but the word tables of other locales. The browser tests load the page, so they run
 * the bundle too.
 */
const run = async (text: string) => import(`data:text/javascript;base64,${Buffer.from(text).toString('base64')}`);

describe('bundleModules', () => {
  test('runs each module once, its imports first; renamed, dynamic and default imports resolve to the same exports', async () => {
    const modules = new Map([
      [
        'main.js',
        [
          "import { count, bump as add } from './counter.js';",
          "import { twice } from './twice.js';",
          'add();',
          "globalThis.__bundle = { count: count(), twice: twice(), order: globalThis.__order, later: import('./later.js').then((m) => m.default.word), other: import('./other.js').catch(() => 'left out') };",
        ].join('\n'),
      ],
      [
        'counter.js',
        "(globalThis.__order ??= []).push('counter');\nlet n = 0;\nexport function bump() {\nn++;\n}\nexport const count = () => n;",
      ],
      [
        'twice.js',
        "import { bump, count } from './counter.js';\nglobalThis.__order.push('twice');\nexport function twice() {\nbump();\nreturn count();\n}",
      ],
      ['later.js', "import { count } from './counter.js';\nexport default {\nword: 'later ' + count(),\n};"],
    ]);
    await run(bundleModules('main.js', modules));
    const result = (globalThis as { __bundle?: Record<string, unknown> }).__bundle!;
    expect(result.order).toEqual(['counter', 'twice']);
    expect(result.count).toBe(1);
    expect(result.twice).toBe(2);
    expect(await result.later).toBe('later 2');
    // not bundled: stays an import (here of a module that does not exist beside a data: URL)
    expect(await result.other).toBe('left out');
  });

  test('a module that throws runs once and stays failed: every later import gets its error', async () => {
    const modules = new Map([
      ['main.js', "globalThis.__boom = Promise.allSettled([import('./boom.js'), import('./boom.js')]);"],
      [
        'boom.js',
        "globalThis.__boomRuns = (globalThis.__boomRuns ?? 0) + 1;\nthrow new Error('boom ' + globalThis.__boomRuns);\nexport const never = 1;",
      ],
    ]);
    await run(bundleModules('main.js', modules));
    const settled = await (globalThis as { __boom?: Promise<PromiseSettledResult<unknown>[]> }).__boom!;
    expect(settled.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'fulfilled'))).toEqual(['boom 1', 'boom 1']);
    expect((globalThis as { __boomRuns?: number }).__boomRuns).toBe(1);
  });

  test('refuses an import or export form it does not know, rather than bundling it wrong', () => {
    expect(() => bundleModules('a.js', new Map([['a.js', "import * as b from './b.js';"]]))).toThrow(/form the bundle does not know/);
    expect(() => bundleModules('a.js', new Map([['a.js', "import b from './b.js';"]]))).toThrow(/form the bundle does not know/);
    expect(() => bundleModules('a.js', new Map([['a.js', 'let x = 1;\nexport { x };']]))).toThrow(/form the bundle does not know/);
    expect(() => bundleModules('a.js', new Map([['a.js', 'export let x = 1;']]))).toThrow(/form the bundle does not know/);
  });
});

describe("the dashboard's bundles", () => {
  test('one per locale: a valid module holding every module and its own word table, importing only the others', async () => {
    const assets = await loadAssets(new URL('../../src/dashboard/assets/', import.meta.url));
    for (const locale of ['en', 'fr', 'de']) {
      const bundle = assets.bundle(locale)!;
      expect(bundle.hashedName).toMatch(new RegExp(`^bundle-${locale}\\.[0-9a-f]{12}\\.js$`));
      const text = new TextDecoder().decode(bundle.body);
      const parsed = ts.transpileModule(text, { reportDiagnostics: true, compilerOptions: { allowJs: true } });
      expect(parsed.diagnostics).toEqual([]);
      // no import or export statement left (the snippets' text holds some, inside template literals)
      const file = ts.createSourceFile('bundle.js', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
      const kinds = file.statements.map((s) => ts.SyntaxKind[s.kind]);
      expect(kinds.filter((k) => /Import|Export/.test(k))).toEqual([]);
      expect(file.statements.filter((s) => ts.canHaveModifiers(s) && ts.getModifiers(s)?.length)).toEqual([]);
      const imports = [...text.matchAll(/\bimport\((['"])\.\/([^'"]+)\1\)/g)].map((m) => m[2]!.replace(/\.[0-9a-f]{12}\.js$/, ''));
      expect(imports.sort()).toEqual(['de', 'en', 'fr'].filter((l) => l !== locale).map((l) => `words-${l}`));
      for (const view of ['$iw_list_view', '$iw_detail_view', '$iw_message_view', `$iw_words_${locale}`])
        expect(text).toContain(`function ${view}()`);
      // the stylesheet by its hashed name, as the module asks for it
      expect(text).toContain(assets.lookup('dashboard.css')!.asset.hashedName);
    }
    expect(assets.bundle('xx')).toBeUndefined();
  });
});
