import type { AssetSet } from './assets.js';

/**
 * What every dashboard response carries. Nothing loads from elsewhere (`default-src 'self'`, no
 * fonts at all), no inline script or style (the element's styles are a stylesheet asset linked
 * from its shadow root, which `style-src 'self'` allows), no string-to-DOM sinks (Trusted Types
 * with no policy: the element builds its DOM node by node), no forms posting anywhere, and
 * framing only by the host's own pages.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // frame-ancestors for browsers that predate it
  'x-frame-options': 'SAMEORIGIN',
  'cross-origin-opener-policy': 'same-origin',
});

/**
 * The full page: the element in a minimal document. Every address is absolute, computed from the
 * request path, so the page works at `{prefix}` and at `{prefix}/` alike. The modules the list
 * needs are preloaded, so the browser fetches them in parallel rather than one import at a time.
 */
export function pageHtml(prefix: string, assets: AssetSet): string {
  const at = (name: string) => escapeHtml(`${prefix}/assets/${assets.lookup(name)!.asset.hashedName}`);
  const preloads = assets
    .staticGraph('dashboard.js')
    .filter((a) => a.name !== 'dashboard.js')
    .map((a) => `<link rel="modulepreload" href="${escapeHtml(`${prefix}/assets/${a.hashedName}`)}">`);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    '<title>Webhooks</title>',
    // An icon of our own, or the browser asks the host's /favicon.ico (outside the prefix).
    `<link rel="icon" href="${at('icon.svg')}" type="image/svg+xml">`,
    `<link rel="stylesheet" href="${at('page.css')}">`,
    `<link rel="preload" as="style" href="${at('dashboard.css')}">`,
    `<script type="module" src="${at('dashboard.js')}"></script>`,
    ...preloads,
    '</head>',
    '<body>',
    // The element's own headings start at h2 (it is made to sit inside a host's page); the full
    // page gives it the h1 a screen reader expects: where in the host's settings this is.
    '<main><h1>Settings</h1>',
    `<webhooks-dashboard api="${escapeHtml(`${prefix}/api/v1`)}" history></webhooks-dashboard></main>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
