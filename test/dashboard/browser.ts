import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect, inject, test } from 'vitest';

/**
 * Real Chromium for the dashboard's browser tests. Where none is installed the tests say so
 * loudly and are skipped, except under CI=true, where a missing browser is a failure (`.ci/run`
 * installs it).
 */
/** Where the browser tests write screenshots: docs/screenshots/ only when asked (UPDATE_SCREENSHOTS=1), so a test run leaves the checkout alone. */
export const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? new URL('../../docs/screenshots/', import.meta.url).pathname
  : `${join(tmpdir(), 'iw-dashboard-shots')}/`;

export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (path): path is string => !!path && existsSync(path),
);

/** Call at the top of a browser test file; returns whether its tests can run. */
export function chromiumAvailable(file: string): boolean {
  if (CHROMIUM) return true;
  const message = `\n*** ${file}: NO CHROMIUM FOUND (looked at $CHROMIUM_PATH, /usr/bin/chromium, /usr/bin/chromium-browser): the dashboard's browser tests DID NOT RUN. Install it: apt-get install -y chromium ***\n`;
  console.warn(message);
  if (process.env.CI === 'true') test('Chromium is installed (required under CI=true)', () => expect.fail(message));
  return false;
}

/**
 * Features off in every test browser. Chromium reads only the last `--disable-features`, so this
 * one repeats Playwright's own list (the first line) before adding ours: the omnibox's popup, a
 * web page of the browser's own that Chromium 15x starts in a renderer of its own for every new
 * window, and that a headless test never opens (bench/README.md has what it cost).
 * `assertFeaturesKept` fails the run if Playwright's list grows past this copy.
 */
const DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,LensOverlay,MediaRouter,PaintHolding,ThirdPartyStoragePartitioning,AvoidCorsURLLoaderRestartOnRedirect,TcpPortRandomizationWin,OptimizationHints,NetworkTimeServiceQuerying,AimEnabled,PreconnectToSearch,msForceBrowserSignIn,msEdgeUpdateLaunchServicesPreferredVersion',
  'WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup',
].join(',');

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-gpu',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
  `--disable-features=${DISABLED_FEATURES}`,
];

/** Throws unless the last `--disable-features` of the browser's command line (the one Chromium reads) holds every feature an earlier one names. */
export function assertFeaturesKept(pid: number | undefined): void {
  if (pid === undefined) return;
  const lists = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg.startsWith('--disable-features='))
    .map((arg) => arg.slice('--disable-features='.length).split(','));
  const missing = lists
    .slice(0, -1)
    .flat()
    .filter((feature) => !lists.at(-1)!.includes(feature));
  if (missing.length > 0) {
    throw new Error(
      `test/dashboard/browser.ts: Playwright disables ${missing.join(', ')}; add them to DISABLED_FEATURES (Chromium reads only the last list)`,
    );
  }
}

/**
 * The run's Chromium (started once by `chromium-server.ts`, the browser project's global setup),
 * connected; `close()` on it closes this file's contexts and disconnects.
 */
export function launch(): Promise<Browser> {
  const endpoint = inject('chromiumEndpoint');
  if (!endpoint)
    throw new Error('no browser server: the *-browser tests run in the "browser" vitest project, whose global setup starts it');
  return chromium.connect(endpoint, { timeout: 15_000 });
}

export interface OpenOptions {
  /** The session cookie's environment; null = no cookie. */
  env?: string | null;
  width?: number;
  colorScheme?: 'light' | 'dark';
  /** Only for the axe-core run, which needs to inject its own script. */
  bypassCSP?: boolean;
}

/**
 * A fresh context and page on the dashboard's origin, watching for what must never happen:
 * console errors, uncaught exceptions, CSP violations, and requests to any other origin.
 * `problems(allowedStatuses)` lists them; the browser's own "Failed to load resource" line for an
 * answer the test provoked on purpose (e.g. 400 for a bad URL) is allowed by its status.
 */
export async function openDashboard(browser: Browser, site: { origin: string }, options: OpenOptions = {}) {
  const width = options.width ?? 1280;
  const context: BrowserContext = await browser.newContext({
    viewport: { width, height: width < 600 ? 780 : 900 },
    colorScheme: options.colorScheme ?? 'light',
    bypassCSP: options.bypassCSP ?? false,
    reducedMotion: 'reduce',
  });
  if (options.env !== null) {
    await context.addCookies([{ name: 'session', value: options.env ?? 'env-a', url: site.origin, sameSite: 'Lax', httpOnly: true }]);
  }
  const page: Page = await context.newPage();
  page.setDefaultTimeout(5_000);
  const seen: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') seen.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => seen.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (new URL(r.url()).origin !== site.origin) seen.push(`request left the origin: ${r.url()}`);
  });
  await page.addInitScript(() => {
    document.addEventListener(
      'securitypolicyviolation',
      (e) => console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || '(inline)'}`),
      true,
    );
  });
  return {
    page,
    context,
    problems(allowedStatuses: number[] = []) {
      return seen.filter((line) => {
        const m = /Failed to load resource: the server responded with a status of (\d+)/.exec(line);
        return !(m && allowedStatuses.includes(Number(m[1])));
      });
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core on the page as it is now; returns the serious and critical violations, described. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: any }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n: any) => JSON.stringify(n.target)).slice(0, 3),
    }));
  });
  return violations
    .filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: { id: string; impact: string; targets: string[] }) => `${v.impact} ${v.id}: ${v.targets.join(' ')}`);
}

/** Presses Tab until the focused element (through shadow roots) has this accessible text, then returns. Fails after `max` presses. */
export async function tabTo(page: Page, name: string | RegExp, max = 40, key: 'Tab' | 'Shift+Tab' = 'Tab'): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    const label = await focusedLabel(page);
    if (typeof name === 'string' ? label === name : name.test(label)) return;
  }
  throw new Error(`${key} never reached ${name}`);
}

/** tabTo, backwards (Shift+Tab). */
export function shiftTabTo(page: Page, name: string | RegExp, max = 40): Promise<void> {
  return tabTo(page, name, max, 'Shift+Tab');
}

/** The deep focused element's accessible-ish label: aria-label, else its label's text, else its text. */
export function focusedLabel(page: Page): Promise<string> {
  return page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    if (!el) return '';
    const aria = el.getAttribute('aria-label');
    if (aria) return aria;
    const id = el.id;
    const root = el.getRootNode() as Document | ShadowRoot;
    const label = id ? root.querySelector(`label[for="${id}"]`) : el.closest('label');
    return (label ?? el).textContent?.trim().replace(/\s+/g, ' ') ?? '';
  });
}

/** No horizontal scrolling: the page fits its viewport's width. */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}
