import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { bundleModules } from './bundle.js';
import { stripAsset } from './minify.js';

/**
 * The dashboard's static files (`assets/*.js`, `*.css`, `*.svg`), shipped as written: no build
 * step, no bundler package. They are served without their comments and indentation (`stripAsset`,
 * read once per process), and the full page's script is all the modules in one file per locale
 * (`bundleModules`, made in the same pass). Each is served under a content-hashed name (`dashboard.3fa9c2d1e07b.js`) that may
 * be cached for a year, and under its plain name (`dashboard.js`) for hosts that embed the element
 * with one stable script tag (revalidated on every use).
 *
 * References between assets (`'./api.js'`, `'./dashboard.css'`) are rewritten to the hashed names,
 * and a file's hash is taken after that rewrite, so a change in any module changes the name of
 * every module that imports it: an immutable cached module can never import a stale one.
 */

export interface Asset {
  /** The file's own name: `dashboard.js`. */
  name: string;
  /** The name it is served under for a year: `dashboard.<hash>.js`. */
  hashedName: string;
  contentType: string;
  body: Uint8Array<ArrayBuffer>;
  /** A strong ETag for the plain name's revalidation. */
  etag: string;
}

export interface AssetSet {
  /** Every asset by both of its names; `immutable` tells which one was asked for. */
  lookup(name: string): { asset: Asset; immutable: boolean } | undefined;
  /**
   * Every module the element may load, in one file, with the word table of `locale` (the others
   * stay their own modules, loaded if the reader switches): what the full page loads. Undefined
   * for a locale without a table.
   */
  bundle(locale: string): Asset | undefined;
  /** In load order (a module after the modules it imports). */
  list: readonly Asset[];
  totalBytes: number;
}

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};
const FILE = /^[a-z0-9-]+\.(js|css|svg)$/;

/** A quoted relative reference to a sibling asset, e.g. `'./api.js'` in an import or `new URL(…)`. */
const REFERENCE = /(['"])\.\/([a-z0-9-]+\.(?:js|css|svg))\1/g;
/** A sibling module imported either way: statically, or by a dynamic import of its relative name. */
const ANY_IMPORT = /(?:\bfrom\s*|\bimport\()(['"])\.\/([a-z0-9-]+\.js)\1/g;
/** The element's module, which the page loads. */
const ENTRY = 'dashboard.js';

/** Reads and names the assets in `dir` (a `file:` URL ending in `/`). */
export async function loadAssets(dir: URL): Promise<AssetSet> {
  const names = (await readdir(dir)).filter((n) => FILE.test(n)).sort();
  const sources = new Map<string, string>();
  for (const name of names) {
    const source = await readFile(new URL(name, dir), 'utf8');
    const kind = name.slice(name.lastIndexOf('.') + 1);
    sources.set(name, kind === 'js' || kind === 'css' ? stripAsset(source, kind) : source);
  }

  const done = new Map<string, Asset>();
  const visiting = new Set<string>();
  const visit = (name: string, from: string): Asset => {
    const seen = done.get(name);
    if (seen) return seen;
    const source = sources.get(name);
    if (source === undefined) throw new Error(`dashboard asset ${from} refers to ./${name}, which does not exist`);
    // A circle has no content hash (each name would depend on itself); the modules avoid them.
    if (visiting.has(name)) throw new Error(`dashboard assets import each other in a circle through ${name}`);
    visiting.add(name);
    const text = source.replace(REFERENCE, (_m, quote: string, ref: string) => `${quote}./${visit(ref, name).hashedName}${quote}`);
    visiting.delete(name);
    const body = new TextEncoder().encode(text);
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const dot = name.lastIndexOf('.');
    const asset: Asset = {
      name,
      hashedName: `${name.slice(0, dot)}.${hash}${name.slice(dot)}`,
      contentType: CONTENT_TYPES[name.slice(dot + 1)]!,
      body,
      etag: `"${hash}"`,
    };
    done.set(name, asset);
    return asset;
  };
  for (const name of names) visit(name, name);

  const byName = new Map<string, { asset: Asset; immutable: boolean }>();
  const add = (asset: Asset) => {
    byName.set(asset.name, { asset, immutable: false });
    byName.set(asset.hashedName, { asset, immutable: true });
  };
  for (const asset of done.values()) add(asset);
  const list = [...done.values()];

  // What the element may load: its module and every module reachable from it, either way.
  const reachable = new Set<string>();
  const reach = (name: string) => {
    if (reachable.has(name) || !sources.has(name)) return;
    reachable.add(name);
    for (const m of sources.get(name)!.matchAll(ANY_IMPORT)) reach(m[2]!);
  };
  reach(ENTRY);
  const bundles = new Map<string, Asset>();
  for (const table of reachable) {
    const locale = /^words-([a-z]+)\.js$/.exec(table)?.[1];
    if (!locale) continue;
    const modules = new Map([...reachable].filter((n) => n === table || !n.startsWith('words-')).map((n) => [n, sources.get(n)!]));
    const text = bundleModules(ENTRY, modules).replace(
      REFERENCE,
      (_m, quote: string, ref: string) => `${quote}./${done.get(ref)!.hashedName}${quote}`,
    );
    const body = new TextEncoder().encode(text);
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const asset: Asset = {
      name: `bundle-${locale}.js`,
      hashedName: `bundle-${locale}.${hash}.js`,
      contentType: CONTENT_TYPES.js!,
      body,
      etag: `"${hash}"`,
    };
    bundles.set(locale, asset);
    add(asset);
  }
  return {
    lookup: (name) => byName.get(name),
    bundle: (locale) => bundles.get(locale),
    list,
    totalBytes: list.reduce((sum, a) => sum + a.body.byteLength, 0),
  };
}
