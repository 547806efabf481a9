/**
 * The host's look for the dashboard (`createWebhooks({ dashboard: { theme, locale } })`): checked
 * once, then handed to the page as attributes the element reads. Colours beyond the accent are
 * CSS custom properties the host sets itself (docs/dashboard.md, "Theming").
 */
export interface DashboardTheme {
  /** Shown above the element on the full page and in its title, e.g. `Acme`. */
  name?: string;
  /** The address of a logo image: a path on the dashboard's own origin, or an https URL (added to the page's img-src). */
  logo?: string;
  /** The accent colour (buttons, links, focus rings): `#rgb`, `#rrggbb`, or `rgb(…)` / `hsl(…)`. */
  accent?: string;
  /** `auto` (default) follows the reader's `prefers-color-scheme`; `light` or `dark` forces one. */
  mode?: 'auto' | 'light' | 'dark';
}

/** The locales the dashboard speaks (one table each in assets/words*.js). English is the fallback. */
export const LOCALES = ['en', 'fr', 'de'] as const;
export type DashboardLocale = (typeof LOCALES)[number];

export interface Look {
  theme: Readonly<DashboardTheme>;
  /** A fixed locale, or null to follow each request's Accept-Language. */
  locale: DashboardLocale | null;
  /** The logo's origin when it is not the dashboard's own (the page's img-src then allows it). */
  logoOrigin: string | null;
}

const COLOUR = /^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|(rgb|hsl)a?\([0-9.,%\s/]+\))$/;

export function lookOf(theme: DashboardTheme | undefined, locale: string | undefined): Look {
  const t: DashboardTheme = {};
  if (theme !== undefined) {
    if (typeof theme !== 'object' || theme === null) throw new TypeError('dashboard.theme must be an object');
    if (theme.name !== undefined) {
      if (typeof theme.name !== 'string' || !theme.name.trim() || theme.name.length > 100) {
        throw new TypeError('dashboard.theme.name must be a string of 1 to 100 characters');
      }
      t.name = theme.name.trim();
    }
    if (theme.logo !== undefined) {
      const ok =
        typeof theme.logo === 'string' &&
        (/^\/(?!\/)/.test(theme.logo) || /^https:\/\//.test(theme.logo)) &&
        URL.canParse(theme.logo, 'https://x');
      if (!ok) throw new TypeError('dashboard.theme.logo must be a path like /logo.svg or an https:// URL');
      t.logo = theme.logo;
    }
    if (theme.accent !== undefined) {
      if (typeof theme.accent !== 'string' || !COLOUR.test(theme.accent)) {
        throw new TypeError('dashboard.theme.accent must be a colour like #6b3fd4 or rgb(107 63 212)');
      }
      t.accent = theme.accent;
    }
    if (theme.mode !== undefined) {
      if (theme.mode !== 'auto' && theme.mode !== 'light' && theme.mode !== 'dark')
        throw new TypeError("dashboard.theme.mode must be 'auto', 'light' or 'dark'");
      t.mode = theme.mode;
    }
  }
  let fixed: DashboardLocale | null = null;
  if (locale !== undefined) {
    fixed = supported(locale);
    if (!fixed) throw new TypeError(`dashboard.locale must be one of ${LOCALES.join(', ')}`);
  }
  const logoOrigin = t.logo?.startsWith('https://') ? new URL(t.logo).origin : null;
  return { theme: Object.freeze(t), locale: fixed, logoOrigin };
}

/** `fr-CA` → `fr`; null when we have no table for it. */
function supported(tag: string): DashboardLocale | null {
  if (typeof tag !== 'string') return null;
  const base = tag.trim().toLowerCase().split(/[-_]/, 1)[0];
  return (LOCALES as readonly string[]).includes(base ?? '') ? (base as DashboardLocale) : null;
}

/** The locale for a request: the fixed one, else the best of Accept-Language we speak, else English. */
export function localeFor(look: Look, request: Request): DashboardLocale {
  if (look.locale) return look.locale;
  const header = request.headers.get('accept-language');
  if (!header) return 'en';
  const ranked = header
    .split(',')
    .slice(0, 20)
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag, q: q === undefined ? 1 : Number(q), index };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranked) {
    const found = supported(tag);
    if (found) return found;
  }
  return 'en';
}
