import type { AssetSet } from './assets.js';
import type { DashboardTheme } from './look.js';

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

/** Who is looking, in what language and look: what the page tells the element. */
export interface PageOptions {
  locale: string;
  theme: Readonly<DashboardTheme>;
  /** `read` hides every control that would change something (the API refuses them anyway). */
  capability: 'read' | 'manage';
  /** The page belongs to a link's session: an ended session is told to open the link again, not to sign in. */
  link?: boolean;
}

/** The full page's heading and title, per locale (the element's own words are in assets/words*.js). */
const PAGE_WORDS: Record<
  string,
  {
    settings: string;
    webhooks: string;
    linkTitle: string;
    linkRefused: string;
    linkWhat: string;
    open: string;
    forbidden: string;
    sessionEnded: string;
  }
> = {
  en: {
    settings: 'Settings',
    webhooks: 'Webhooks',
    linkTitle: 'This link cannot be used',
    linkRefused: 'This link has expired or was already used: each link opens the dashboard once.',
    linkWhat: 'Go back to where you found it and ask for a new one.',
    open: 'Open the webhooks dashboard',
    forbidden: 'Forbidden: you may not manage webhooks here.',
    sessionEnded:
      'Forbidden: your session from a dashboard link has ended. Open the dashboard again from where you found the link, or ask for a new link.',
  },
  fr: {
    settings: 'Paramètres',
    webhooks: 'Webhooks',
    linkTitle: 'Ce lien ne peut pas être utilisé',
    linkRefused: 'Ce lien a expiré ou a déjà servi : chaque lien n’ouvre le tableau de bord qu’une fois.',
    linkWhat: 'Retournez là où vous l’avez trouvé et demandez-en un nouveau.',
    open: 'Ouvrir le tableau de bord des webhooks',
    forbidden: 'Accès refusé : vous n’êtes pas autorisé à gérer les webhooks ici.',
    sessionEnded:
      'Accès refusé : votre session ouverte par un lien vers le tableau de bord a pris fin. Rouvrez le tableau de bord depuis l’endroit où vous avez trouvé le lien, ou demandez un nouveau lien.',
  },
  de: {
    settings: 'Einstellungen',
    webhooks: 'Webhooks',
    linkTitle: 'Dieser Link kann nicht verwendet werden',
    linkRefused: 'Dieser Link ist abgelaufen oder wurde bereits benutzt: Jeder Link öffnet das Dashboard nur einmal.',
    linkWhat: 'Gehen Sie dorthin zurück, wo Sie ihn gefunden haben, und fordern Sie einen neuen an.',
    open: 'Webhooks-Dashboard öffnen',
    forbidden: 'Zugriff verweigert: Sie dürfen hier keine Webhooks verwalten.',
    sessionEnded:
      'Zugriff verweigert: Ihre Sitzung über einen Dashboard-Link ist beendet. Öffnen Sie das Dashboard erneut dort, wo Sie den Link gefunden haben, oder fordern Sie einen neuen Link an.',
  },
};
const wordsFor = (locale: string) => PAGE_WORDS[locale] ?? PAGE_WORDS.en!;

/** The page refused (plain text, no markup): why in general, in the reader's locale; `ended` for a link's session that ran out. */
export const refusalText = (locale: string, ended: boolean) => `${wordsFor(locale)[ended ? 'sessionEnded' : 'forbidden']}\n`;

/**
 * The full page: the element in a minimal document. Every address is absolute, computed from the
 * request path, so the page works at `{prefix}` and at `{prefix}/` alike. Its first render needs
 * the document, one stylesheet (the page's rules and the element's), one script (every module and
 * the reader's word table, bundled: `AssetSet.bundle`), the icon and the list's API calls.
 */
export function pageHtml(
  prefix: string,
  assets: AssetSet,
  options: PageOptions = { locale: 'en', theme: {}, capability: 'manage' },
): string {
  const at = (name: string) => escapeHtml(`${prefix}/assets/${assets.lookup(name)!.asset.hashedName}`);
  const { theme, locale, capability } = options;
  const script = assets.bundle(locale) ?? assets.bundle('en') ?? assets.lookup('dashboard.js')!.asset;
  const words = wordsFor(locale);
  const mode = theme.mode === 'light' || theme.mode === 'dark' ? theme.mode : null;
  const attributes = [
    `api="${escapeHtml(`${prefix}/api/v1`)}"`,
    'history',
    `locale="${escapeHtml(locale)}"`,
    mode ? `theme="${mode}"` : '',
    theme.accent ? `accent="${escapeHtml(theme.accent)}"` : '',
    capability === 'read' ? 'capabilities="read"' : '',
    options.link ? 'session="link"' : '',
  ].filter(Boolean);
  const brand = theme.name ?? words.settings;
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(locale)}"${mode ? ` data-theme="${mode}"` : ''}>`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="color-scheme" content="${mode ?? 'light dark'}">`,
    `<title>${escapeHtml(theme.name ? `${words.webhooks} · ${theme.name}` : words.webhooks)}</title>`,
    // An icon of our own, or the browser asks the host's /favicon.ico (outside the prefix).
    `<link rel="icon" href="${at('icon.svg')}" type="image/svg+xml">`,
    // the element's shadow root links this same file, which the browser then has
    `<link rel="stylesheet" href="${at('dashboard.css')}">`,
    `<script type="module" src="${escapeHtml(`${prefix}/assets/${script.hashedName}`)}"></script>`,
    '</head>',
    '<body>',
    // The element's own headings start at h2 (it is made to sit inside a host's page); the full
    // page gives it the h1 a screen reader expects: where in the host's settings this is.
    `<main><h1>${theme.logo ? `<img class="logo" src="${escapeHtml(theme.logo)}" alt="" height="28"> ` : ''}${escapeHtml(brand)}</h1>`,
    `<webhooks-dashboard ${attributes.join(' ')}></webhooks-dashboard></main>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * What opening a link answers. Refused (`to` null): 403 and what to do. Accepted: a page that
 * moves on to `to` by itself (a meta refresh, not a 303: a navigation this page starts is
 * same-site, so the browser sends the new SameSite=Strict cookie with it, where a redirect that
 * ends a chain begun on another site, an email, would not), with a link for the reader who needs it.
 */
export function linkPageHtml(prefix: string, assets: AssetSet, locale: string, to: string | null): string {
  const words = wordsFor(locale);
  const css = escapeHtml(`${prefix}/assets/${assets.lookup('dashboard.css')!.asset.hashedName}`);
  const icon = escapeHtml(`${prefix}/assets/${assets.lookup('icon.svg')!.asset.hashedName}`);
  const head = [
    '<!doctype html>',
    `<html lang="${escapeHtml(locale)}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    to ? `<meta http-equiv="refresh" content="0;url=${escapeHtml(to)}">` : '',
    `<title>${escapeHtml(to ? words.webhooks : words.linkTitle)}</title>`,
    `<link rel="icon" href="${icon}" type="image/svg+xml">`,
    `<link rel="stylesheet" href="${css}">`,
    '</head>',
    '<body><main>',
  ];
  const body = to
    ? [`<h1>${escapeHtml(words.webhooks)}</h1>`, `<p><a href="${escapeHtml(to)}">${escapeHtml(words.open)}</a></p>`]
    : [
        `<h1>${escapeHtml(words.webhooks)}</h1>`,
        `<h2>${escapeHtml(words.linkTitle)}</h2>`,
        `<p>${escapeHtml(words.linkRefused)}</p>`,
        `<p>${escapeHtml(words.linkWhat)}</p>`,
      ];
  return [...head.filter(Boolean), ...body, '</main></body>', '</html>', ''].join('\n');
}
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
