/**
 * The dashboard's modules in one file, for the full page: one request instead of one per module
 * (the page's first render needs the document, one stylesheet, this file and its API calls).
 * The modules stay as written and are still served one by one for a host that embeds the element.
 *
 * Not a general bundler: it knows the forms the assets use (tested on every asset). Each module
 * becomes a function that runs once, on its first use, and returns its exports, so the modules run
 * in the order the browser would run them and each exists once: a static import of named bindings
 * from a sibling reads its exports (running it first), a dynamic import of a bundled module
 * resolves to them, and one of a module left out (another locale's words) stays an import.
 * The assets import nothing in a circle (loadAssets refuses one), and export only functions and
 * constants, so reading the exports at the import is the live binding's value.
 */

/** A static import of named bindings (`a, b as c`) from a sibling module. */
const STATIC_IMPORT = /^import\s*\{([^}]*)\}\s*from\s*(['"])\.\/([a-z0-9-]+\.js)\2;?$/gm;
/** Any other line that starts an import of a sibling (a default or namespace import): refused. */
const OTHER_IMPORT = /^import\b[^('"]*(['"])\.\/[a-z0-9-]+\.js\1/m;
const DYNAMIC_IMPORT = /\bimport\((['"])\.\/([a-z0-9-]+\.js)\1\)/g;
const EXPORT_DECLARATION = /^export\s+((?:async\s+)?function\*?\s+|const\s+|class\s+)([A-Za-z_$][\w$]*)/gm;
const EXPORT_DEFAULT = /^export\s+default\s+/m;

/** A run-once function's name for a module: `api.js` → `$iw_api`. */
const loader = (name: string) => `$iw_${name.slice(0, -3).replace(/-/g, '_')}`;

/**
 * One module (`name`, by its served text) of the bundle, wrapped. `inBundle` tells whether a
 * sibling it imports dynamically is bundled too.
 */
function wrap(name: string, text: string, inBundle: (name: string) => boolean): string {
  if (OTHER_IMPORT.test(text.replace(STATIC_IMPORT, ''))) {
    throw new Error(`dashboard bundle: ${name} imports a sibling in a form the bundle does not know`);
  }
  const exported: string[] = [];
  let body = text
    .replace(STATIC_IMPORT, (_m, names: string, _q: string, from: string) => {
      const bindings = names
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
        .map((n) => n.replace(/\s+as\s+/, ': '));
      return `const { ${bindings.join(', ')} } = ${loader(from)}();`;
    })
    .replace(DYNAMIC_IMPORT, (whole, _q: string, from: string) => (inBundle(from) ? `Promise.resolve().then(${loader(from)})` : whole))
    .replace(EXPORT_DECLARATION, (_m, kind: string, id: string) => {
      exported.push(id);
      return `${kind}${id}`;
    });
  if (EXPORT_DEFAULT.test(body)) {
    body = body.replace(EXPORT_DEFAULT, 'const $iw_default = ');
    exported.push('default: $iw_default');
  }
  if (/^export\b/m.test(body)) throw new Error(`dashboard bundle: ${name} exports in a form the bundle does not know`);
  const id = loader(name);
  return [
    `let ${id}_exports, ${id}_error;`,
    `function ${id}() {`,
    `if (${id}_error) throw ${id}_error;`,
    `if (${id}_exports) return ${id}_exports;`,
    // set before the body runs: a module's exports object is the same on every use
    `${id}_exports = {};`,
    // a module that throws stays failed: every later use gets its error, as a browser's module would
    'try {',
    body,
    `return Object.assign(${id}_exports, { ${exported.join(', ')} });`,
    `} catch (error) {\n${id}_error = error;\nthrow error;\n}`,
    '}',
  ].join('\n');
}

/**
 * `entry` and `modules` (name → served text, every module `entry` may load) in one module. The
 * text still refers to the other assets by their plain names (the stylesheet, another
 * locale's word table): the caller rewrites them as it rewrites any asset.
 */
export function bundleModules(entry: string, modules: ReadonlyMap<string, string>): string {
  const parts = [...modules].map(([name, text]) => wrap(name, text, (n) => modules.has(n)));
  return [...parts, `${loader(entry)}();`, ''].join('\n');
}
