import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// @ts-expect-error: a .js asset, typed only under checkJs
import * as words from '../../src/dashboard/assets/words.js';
// @ts-expect-error: a .js asset
import de from '../../src/dashboard/assets/words-de.js';
// @ts-expect-error: a .js asset
import en from '../../src/dashboard/assets/words-en.js';
// @ts-expect-error: a .js asset
import fr from '../../src/dashboard/assets/words-fr.js';
import { until } from '../helpers/cleanup.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, horizontalOverflow, launch, openDashboard, SHOTS } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * The page in French and in German, in real Chromium against a real engine: the same tour of
 * every view (the empty list, the list with stats, Add webhook with the Advanced section open, an
 * error and the Add event dialog, a webhook with its overview, log, attempts, recover form, test
 * event, Delete and Rotate confirmations, the message view, the catalog) is taken in English and
 * in each locale, with a browser whose own language is English (only Accept-Language asks for
 * the locale). What it reads: every text node and every aria-label, title, placeholder, alt and
 * label attribute of the element's shadow root, hidden ones too, except code (ids, snippets,
 * payloads). In English the tour must show the English of at least 150 keys (so it is a real
 * tour); in a locale, none of the English table (every UI string, error and status: a string
 * whole, and any of its pieces of 10 characters or more), and the locale's words for every key
 * the English tour showed. Dates and percentages are the locale's (numbers, durations and plurals:
 * locales.test.ts).
 */

const run = chromiumAvailable('locale-browser.test.ts');

type Table = { ui: Record<string, string>; errors: Record<string, string>; statuses: Record<string, string> };
const TABLES: Record<string, Table> = { fr, de };
/** Every English string, by a key that says where it is from (`ui.*`, `errors.*`, `statuses.*`). */
const ENGLISH: Record<string, string> = {
  ...prefixed('ui', en.ui),
  ...prefixed(
    'errors',
    Object.fromEntries(Object.entries(words.ERROR_WORDS as Record<string, [unknown, string]>).map(([k, v]) => [k, v[1]])),
  ),
  ...prefixed('statuses', { ...words.DELIVERY_STATUS }),
};
/**
 * Words the same in the locale as in English: the only English a localized page may show. The
 * test below checks this list is exactly the keys whose translation equals the English.
 */
const SAME: Record<string, string[]> = {
  fr: [
    'ui.shell.title',
    'ui.form.description',
    'ui.auth.audience',
    'ui.resource.invitation',
    'ui.log.colActions',
    'ui.subject.webhook',
    'ui.log.test',
  ],
  de: ['ui.shell.title', 'ui.form.name', 'ui.log.status', 'ui.common.optional', 'ui.log.colStatus', 'ui.subject.webhook', 'ui.log.test'],
};

function prefixed(part: string, table: Record<string, string>) {
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [`${part}.${k}`, v]));
}
function localized(locale: string, key: string): string {
  const [part, ...rest] = key.split('.');
  return TABLES[locale]![part as keyof Table][rest.join('.')]!;
}
/** A string's fixed pieces, between its `{name}` placeholders. */
const pieces = (text: string) =>
  text
    .split(/\{\w+\}/)
    .map((p) => p.trim())
    .filter(Boolean);

/** Which keys' words the texts show: a string without placeholders whole, else every piece of it. */
function keysShown(texts: string[], strings: Record<string, string>, except: string[] = []) {
  const whole = new Set(texts);
  const all = texts.join('\n');
  return Object.entries(strings)
    .filter(([key, text]) => {
      if (except.includes(key)) return false;
      const parts = pieces(text);
      if (parts.length === 1 && parts[0] === text) return whole.has(text) || (text.length >= 10 && all.includes(text));
      return parts.every((p) => all.includes(p)) && parts.some((p) => p.length >= 4);
    })
    .map(([key]) => key);
}
/** English the texts show: a string whole, or any piece of 10 characters or more. */
function englishShown(texts: string[], except: string[]) {
  const whole = new Set(texts);
  const all = texts.join('\n');
  const found: string[] = [];
  for (const [key, text] of Object.entries(ENGLISH)) {
    if (except.includes(key)) continue;
    if (whole.has(text)) found.push(`${key}: "${text}"`);
    else for (const p of pieces(text)) if (p.length >= 10 && all.includes(p)) found.push(`${key}: "${p}"`);
  }
  return found;
}

let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let hookId: string;
let standardId: string;
let deliveryId: string;

describe.runIf(run)('the dashboard in Chromium, in French and in German', () => {
  beforeAll(async () => {
    [browser, site, receiver] = await Promise.all([
      launch(),
      startSite({ secretsKey: randomBytes(32).toString('base64') }),
      startReceiver((req) => (req.path === '/down' ? { status: 500, body: 'down' } : 200)),
    ]);
    const hook = await site.hooks.webhooks.create({
      environment: 'env-loc',
      name: 'CRM',
      endpoint: `${receiver.url}/crm`,
      eventTypes: ['user.created', 'user.updated', 'user.deleted', 'role.created', 'role.updated', 'organization.created'],
      headers: { Authorization: 'Bearer t0ken', 'X-Tenant': 'acme' },
      timeoutMs: 1500,
    });
    hookId = hook.id;
    // Failing: its status says since when (a date), its log has a failed delivery and attempts.
    await site.hooks.webhooks.create({
      environment: 'env-loc',
      name: 'ERP',
      endpoint: `${receiver.url}/down`,
      eventTypes: ['user.created'],
    });
    const standard = await site.hooks.webhooks.create({
      environment: 'env-loc',
      name: 'Std',
      endpoint: `${receiver.url}/std`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
      asymmetric: true,
    });
    standardId = standard.id;
    await site.hooks.webhooks.rotateSecret(standardId, { environment: 'env-loc' }); // "The previous secret still signs until …"
    const { deliveryIds } = await site.hooks.emit({ environment: 'env-loc', type: 'user.created', source: 'api', data: userData() });
    deliveryId = deliveryIds[0]!;
    await until(
      'deliveries settled',
      async () => {
        const all = await Promise.all(
          (await site.hooks.webhooks.list({ environment: 'env-loc' })).map(
            async (w) => (await site.hooks.deliveries.list({ environment: 'env-loc', webhookId: w.id })).deliveries,
          ),
        );
        return all.flat().length === 3 && all.flat().every((d) => d.status === 'delivered' || d.status === 'failed');
      },
      15_000,
      50,
    );
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  /** Every text and named attribute of the element, hidden ones too, but not code; the page's title and h1. */
  const read = (page: Page) =>
    page.evaluate(() => {
      const out = [document.title, document.querySelector('h1')?.textContent?.trim() ?? ''];
      const walk = (node: Node) => {
        if (node.nodeType === Node.TEXT_NODE) {
          const text = node.textContent?.trim();
          if (text) out.push(text);
          return;
        }
        if (node instanceof Element) {
          for (const name of ['aria-label', 'title', 'placeholder', 'alt', 'label']) {
            const value = node.getAttribute(name);
            if (value) out.push(value.trim());
          }
          if (node.matches('code, pre.code-block, pre.payload, pre.excerpt, .code')) return;
        }
        for (const child of node.childNodes) walk(child);
      };
      walk(document.querySelector('webhooks-dashboard')!.shadowRoot!);
      return out;
    });

  /** Waits until nothing in the element is loading. */
  const settled = (page: Page) =>
    page.waitForFunction(() => {
      const root = document.querySelector('webhooks-dashboard')?.shadowRoot;
      return !!root && !root.querySelector('[aria-busy="true"]') && !root.querySelector('.loading');
    });

  /** The tour: every view and dialog, reached by structure (never by words); returns what it read, view by view. */
  async function tour(locale: string) {
    const texts: Record<string, string[]> = {};
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-empty' });
    await context.setExtraHTTPHeaders({ 'accept-language': `${locale}-${locale === 'en' ? 'US' : locale.toUpperCase()},${locale};q=0.9` });
    const go = async (hash: string, wait: string) => {
      await page.goto('about:blank'); // a fresh load: nothing of the last view is left to wait for
      await page.goto(`${site.url}${hash}`);
      await page.locator(wait).first().waitFor();
      await settled(page);
    };
    await go('', '.empty');
    texts.empty = await read(page);
    await context.addCookies([{ name: 'session', value: 'env-loc', url: site.origin, sameSite: 'Lax', httpOnly: true }]);

    await go('#/', '.cards .activity');
    texts.list = await read(page);
    const percents = (await page.locator('.activity .figures strong').allTextContents()).filter((text) => text.includes('%'));
    if (locale === 'fr') await page.screenshot({ path: `${SHOTS}list-fr.png`, fullPage: true });

    await go('#/new', 'form.webhook-form');
    await page.locator('details.advanced > summary').click();
    await page.locator('select[name="auth_type"]').selectOption('oauth2_client_credentials');
    await page.locator('.header-rows + button').click(); // Add header: an empty row
    await page.locator('form.webhook-form button[type="submit"]').click(); // no name: refused
    await page.locator('.error[role="alert"]').first().waitFor();
    texts.form = await read(page);
    await page.locator('.chips-area + button').click(); // Add event
    await page.locator('dialog.dialog input[type="checkbox"]').first().waitFor();
    texts.dialog = await read(page);
    if (locale === 'fr') await page.screenshot({ path: `${SHOTS}dialog-fr.png` });
    // Events chosen, the form refused again (a name now, no endpoint, OAuth2 without its fields), then created.
    await page.locator('dialog.dialog input[type="checkbox"]').first().check();
    await page.locator('dialog.dialog button[type="submit"]').click();
    await page.locator('.chip').waitFor();
    await page.locator('input[name="name"]').fill('Tmp');
    await page.locator('form.webhook-form button[type="submit"]').click();
    await page.locator('.error[role="alert"]').first().waitFor();
    texts.refusals = await read(page);
    await page.locator('input[name="endpoint"]').fill(`${receiver.url}/tmp`);
    await page.locator('form.webhook-form button[type="submit"]').click();
    await page.locator('.error[role="alert"]').first().waitFor();
    texts.refusals.push(...(await read(page)));
    await page.locator('select[name="auth_type"]').selectOption('none');
    await page.locator('form.webhook-form button[type="submit"]').click();
    await page.locator('.actions button.danger').waitFor(); // its page: "created"
    await settled(page);
    texts.created = await read(page);
    await page.locator('.actions button.danger').click(); // Delete: the confirmation, then deleted
    await page.locator('dialog.confirm').waitFor();
    texts.confirmDelete = await read(page);
    await page.locator('dialog.confirm button.danger').click();
    await page.locator('.cards').waitFor();
    await settled(page);
    texts.deleted = await read(page);

    await go(`#/webhooks/${hookId}`, '.deliveries .delivery');
    await page.locator('.verify dl').waitFor();
    await page.locator('button.expand').first().click();
    await page.locator('.attempts .attempt').first().waitFor();
    await page.locator('.recover-area > button').click();
    await page.locator('form.recover button[type="submit"]').click();
    await page.locator('.recover-area .result:not(:empty)').waitFor();
    await page.locator('form.test-event button[type="submit"]').click(); // Send test event
    await page.locator('.result .ok').waitFor({ timeout: 15_000 });
    await page.locator('[data-delivery]').first().click(); // Resend: its notice
    await page.locator('.notice:not(:empty)').waitFor();
    await settled(page);
    texts.detail = await read(page);
    const timeout = await page.locator('input[name="timeout"]').inputValue();
    const times = await page.evaluate((tag) => {
      const root = document.querySelector('webhooks-dashboard')!.shadowRoot!;
      const format = new Intl.DateTimeFormat(tag, { dateStyle: 'medium', timeStyle: 'medium' });
      // A relative time ("dans 5 minutes") carries the exact one on hover, in the same format.
      return [...root.querySelectorAll('time')].map((t) => ({
        text: t.title || t.textContent,
        expected: format.format(new Date(t.dateTime)),
      }));
    }, locale);
    if (locale === 'de') await page.screenshot({ path: `${SHOTS}detail-de.png`, fullPage: true });
    // Disable, Enable, Save: their notices and the disabled status.
    await page.locator('button[data-focus="toggle"]').click();
    await page.locator('.status-disabled').waitFor();
    texts.disabled = await read(page);
    await page.locator('button[data-focus="toggle"]').click();
    await page.locator('.status-enabled').waitFor();
    texts.enabled = await read(page);
    const before = await page.locator('.notice').textContent();
    await page.locator('form.webhook-form button[type="submit"]').click();
    await page.waitForFunction(
      (notice) => document.querySelector('webhooks-dashboard')!.shadowRoot!.querySelector('.notice')!.textContent !== notice,
      before,
    );
    texts.saved = await read(page);
    // Filtered to nothing: the empty log's words.
    await go(`#/webhooks/${hookId}?status=pending`, '.log-list .hint');
    texts.emptyLog = await read(page);

    await go(`#/webhooks/${standardId}`, '.signing-panel');
    await page.locator('.signing-panel .buttons button').first().click(); // Reveal
    await page.locator('.signing-panel code.secret').waitFor();
    await page.locator('.signing-panel .buttons button').last().click(); // Rotate
    await page.locator('dialog.confirm').waitFor();
    texts.confirmRotate = await read(page);
    await page.locator('dialog.confirm button.danger').click();
    await page.locator('.notice:not(:empty)').waitFor();
    texts.rotated = await read(page);

    const failing = (await site.hooks.webhooks.list({ environment: 'env-loc' })).find((w) => w.name === 'ERP')!;
    await go(`#/webhooks/${failing.id}`, '.deliveries .delivery');
    await page.locator('button.expand').first().click();
    await page.locator('.attempts .attempt').first().waitFor();
    await page.locator('form.test-event button[type="submit"]').click(); // a test event, not delivered
    await page.locator('.result .bad').waitFor({ timeout: 15_000 });
    texts.failing = await read(page);

    await go(`#/webhooks/${hookId}/deliveries/${deliveryId}`, 'pre.payload');
    texts.message = await read(page);
    await go('#/catalog', '.catalog-entry');
    await page.locator('.catalog-filter input').fill('zzz');
    await page.locator('p.hint[role="status"]:not(:empty)').waitFor();
    texts.catalog = await read(page);

    expect(problems([400])).toEqual([]);
    await context.close();
    return { texts, all: Object.values(texts).flat(), percents, times, timeout };
  }

  let english: Awaited<ReturnType<typeof tour>>;
  let shownInEnglish: string[];

  test('the tour in English shows the English of the views it visits (the check below reads real views)', async () => {
    english = await tour('en');
    const shown = keysShown(english.all, ENGLISH);
    // Not a key whose words are only seen inside another's ("your endpoint answered HTTP 200" in "Delivered: your endpoint answered HTTP 200 in 3 ms").
    shownInEnglish = shown.filter(
      (key) => !/\{\w+\}/.test(ENGLISH[key]!) || !shown.some((other) => other !== key && ENGLISH[other]!.includes(ENGLISH[key]!)),
    );
    if (process.env.LOCALE_TOUR_REPORT)
      console.log(
        `${shownInEnglish.length} keys shown; not shown:\n`,
        Object.keys(ENGLISH)
          .filter((key) => !shownInEnglish.includes(key))
          .join('\n'),
      );
    expect(shownInEnglish.length).toBeGreaterThanOrEqual(150);
    // A sample from each view, so a tour that silently skipped one fails here.
    for (const key of [
      'ui.list.emptyTitle',
      'ui.stats.rate24',
      'ui.advanced.headersHint',
      'ui.auth.tokenUrl',
      'errors.INVALID_NAME',
      'ui.dialog.hint',
      'ui.stats.median',
      'ui.recover.hint',
      'ui.test.delivered',
      'ui.notice.resent',
      'ui.delete.text',
      'ui.log.emptyStatus',
      'ui.secret.rotateText',
      'ui.secret.rotated',
      'ui.status.failing',
      'ui.message.payloadHint',
      'ui.catalog.intro',
    ])
      expect(shownInEnglish, key).toContain(key);
  }, 120_000);

  test.each(['fr', 'de'])(
    '%s: no English from the tables on any view, the locale’s words for all of it',
    async (locale) => {
      expect(english, 'the English tour ran first').toBeDefined();
      const identical = Object.keys(ENGLISH).filter((key) => localized(locale, key) === ENGLISH[key]);
      expect(identical.sort(), 'the words allowed to stay English are exactly those the same in both').toEqual([...SAME[locale]!].sort());

      const seen = await tour(locale);
      for (const [view, texts] of Object.entries(seen.texts)) expect(englishShown(texts, SAME[locale]!), `${locale} ${view}`).toEqual([]);
      // Dates in the locale's own format (the browser's language is English): "28 nov. 2026, 09:15:00", "28.11.2026, 09:15:00".
      expect(seen.times.length).toBeGreaterThan(2);
      for (const { text, expected } of seen.times) expect(text).toBe(expected);
      for (const { text } of seen.times) expect(text).not.toMatch(/\b[AP]M\b|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d/);
      for (const { text } of english.times) expect(text).toMatch(/\b[AP]M\b/);
      // Percentages: "100 %" with the locale's no-break space before the sign, where English writes "100%".
      expect(seen.percents.length).toBe(3);
      for (const text of seen.percents) expect(text).toMatch(/^\d+[\u00a0\u202f]%$/);
      for (const text of english.percents) expect(text).toMatch(/^\d+%$/);
      // A decimal in a field: 1,5 seconds, read back as 1.5 when saved (the tour's Save would otherwise show a refusal).
      expect([english.timeout, seen.timeout]).toEqual(['1.5', '1,5']);
      expect((await site.hooks.webhooks.get(hookId, { environment: 'env-loc' })).timeoutMs).toBe(1500);
      const translated = Object.fromEntries(shownInEnglish.map((key) => [key, localized(locale, key)]));
      // A pending row's next attempt shows only while its retry waits (150 ms here): whether a tour
      // catches one is timing, so it is not asked of the other tour (fix-it-browser.test.ts shows it).
      const missing = shownInEnglish.filter((key) => key !== 'ui.log.nextAttempt' && !keysShown(seen.all, translated).includes(key));
      expect(missing, `${locale}: keys the English tour showed whose ${locale} words are not on the page`).toEqual([]);
      // A whole tour of the views: about 13 s on a quiet machine, generously bounded for a busy one.
    },
    120_000,
  );

  test.each(['fr', 'de'])(
    '%s at 360 px: the list, a webhook with its log and Advanced open, the message: nothing scrolls sideways, nothing serious for axe',
    async (locale) => {
      const found: string[] = [];
      const { page, context, problems } = await openDashboard(browser, site, { env: 'env-loc', width: 360, bypassCSP: true });
      await context.setExtraHTTPHeaders({ 'accept-language': locale });
      for (const [hash, wait] of [
        ['#/', '.cards .activity'],
        [`#/webhooks/${hookId}`, '.deliveries .delivery'],
        [`#/webhooks/${hookId}/deliveries/${deliveryId}`, 'pre.payload'],
      ] as const) {
        await page.goto('about:blank');
        await page.goto(`${site.url}${hash}`);
        await page.locator(wait).first().waitFor();
        await settled(page);
        if (hash.endsWith(hookId)) {
          await page.locator('button.expand').first().click();
          await page.locator('.attempts .attempt').first().waitFor();
          await page.locator('.recover-area > button').click();
        }
        for (const v of await axeViolations(page)) found.push(`${locale} ${hash}: ${v}`);
        const overflow = await horizontalOverflow(page);
        if (overflow > 0) found.push(`${locale} ${hash}: scrolls sideways by ${overflow}px`);
      }
      expect(found).toEqual([]);
      expect(problems()).toEqual([]);
      await context.close();
    },
  );
});
