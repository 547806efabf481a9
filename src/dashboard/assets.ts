import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { stripAsset } from './minify.js';

/**
 * The dashboard's static files (`assets/*.js`, `*.css`, `*.svg`), shipped as written: no bundler,
 * no build step. They are served without their comments and indentation (`stripAsset`, read once
 * per process). Each is served under a content-hashed name (`dashboard.3fa9c2d1e07b.js`) that may
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
  /** Hashed names of the modules it imports statically (`import … from './x.js'`), not `import()`. */
  imports: string[];
}

export interface AssetSet {
  /** Every asset by both of its names; `immutable` tells which one was asked for. */
  lookup(name: string): { asset: Asset; immutable: boolean } | undefined;
  /** `name` and every module it imports statically, directly or not: what a first load needs. */
  staticGraph(name: string): Asset[];
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
/** A static import or re-export of a sibling module. */
const STATIC_IMPORT = /\bfrom\s*(['"])\.\/([a-z0-9-]+\.js)\1/g;

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
      imports: [...source.matchAll(STATIC_IMPORT)].map((m) => done.get(m[2]!)!.hashedName),
    };
    done.set(name, asset);
    return asset;
  };
  for (const name of names) visit(name, name);

  const byName = new Map<string, { asset: Asset; immutable: boolean }>();
  for (const asset of done.values()) {
    byName.set(asset.name, { asset, immutable: false });
    byName.set(asset.hashedName, { asset, immutable: true });
  }
  const list = [...done.values()];
  return {
    lookup: (name) => byName.get(name),
    staticGraph(name) {
      const seen = new Set<Asset>();
      const walk = (asset: Asset) => {
        if (seen.has(asset)) return;
        seen.add(asset);
        for (const hashed of asset.imports) walk(byName.get(hashed)!.asset);
      };
      walk(byName.get(name)!.asset);
      return [...seen];
    },
    list,
    totalBytes: list.reduce((sum, a) => sum + a.body.byteLength, 0),
  };
}
