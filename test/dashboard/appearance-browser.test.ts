import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, horizontalOverflow, launch, openDashboard } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * How the page looks to the person using it, in real Chromium against a real engine on a
 * ManualClock (so the history below is made in moments, not hours): the colour scheme follows
 * the system's; the delivery log fits a 360 px phone with its attempts open; and a webhook the
 * engine disabled itself, for failing against a dead endpoint on 127.0.0.1, says so and since when.
 */

const run = chromiumAvailable('appearance-browser.test.ts');
const START = Date.parse('2026-03-02T09:15:00.000Z');
const HOUR = 3600_000;
/** A long response body with no space to break at: the log must wrap it, not scroll sideways. */
const LONG_BODY = `upstream-error:${'0123456789abcdef'.repeat(24)}`;
let browser: Browser;
let site: Site;
let clock: ManualClock;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

describe.runIf(run)('the dashboard in Chromium: colour scheme, a phone, a webhook disabled for failing', () => {
  beforeAll(async () => {
    clock = new ManualClock(START);
    [browser, site, receiver] = await Promise.all([
      launch(),
      // No poll timer every 100 ms: advancing the clock by hours would fire it tens of thousands of
      // times. Emits wake the scheduler; the back-off's step arms its own timer.
      startSite({ clock, disableAfterMs: HOUR, delivery: { timeoutMs: 2000, pollIntervalMs: 3600_000 } }),
      startReceiver((req) => (req.path.startsWith('/long') ? { status: 500, body: LONG_BODY } : 200)),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  const emit = (environment: string) => site.hooks.emit({ environment, type: 'user.created', source: 'api', data: userData() });
  /** Works off what is due now, then what the back-off's one step (150 ms) makes due. */
  async function settle() {
    await site.hooks.drain();
    await clock.advance(150);
    await site.hooks.drain();
  }

  /** The element's own background and text colour, and the page's (page.css) background. */
  const colours = (page: Page) =>
    page.evaluate(() => {
      const element = getComputedStyle(document.querySelector('webhooks-dashboard')!);
      return {
        element: element.backgroundColor,
        text: element.color,
        page: getComputedStyle(document.body).backgroundColor,
      };
    });

  test('prefers-color-scheme: light and dark contexts get different colours, and switching the system setting switches the page', async () => {
    await site.hooks.webhooks.create({
      environment: 'env-scheme',
      name: 'Scheme',
      endpoint: `${receiver.url}/ok`,
      eventTypes: ['user.created'],
    });
    const seen: Record<string, Awaited<ReturnType<typeof colours>>> = {};
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, context, problems } = await openDashboard(browser, site, { env: 'env-scheme', colorScheme });
      await page.goto(site.url);
      await page.getByRole('list', { name: 'Your webhooks' }).waitFor();
      seen[colorScheme] = await colours(page);
      // The same page, the system setting flipped: the media query is live, not read once.
      const other = colorScheme === 'light' ? 'dark' : 'light';
      await page.emulateMedia({ colorScheme: other });
      seen[`${colorScheme} → ${other}`] = await colours(page);
      expect(problems()).toEqual([]);
      await context.close();
    }
    // dashboard.css's defaults: #ffffff / #1a1d23 in light, #15171b / #e8eaee in dark.
    expect(seen.light).toEqual({ element: 'rgb(255, 255, 255)', text: 'rgb(26, 29, 35)', page: 'rgb(255, 255, 255)' });
    expect(seen.dark).toEqual({ element: 'rgb(21, 23, 27)', text: 'rgb(232, 234, 238)', page: 'rgb(21, 23, 27)' });
    expect(seen['light → dark']).toEqual(seen.dark);
    expect(seen['dark → light']).toEqual(seen.light);
  });

  test('the delivery log at 360 px, rows listed and attempts open: nothing serious for axe, nothing scrolls sideways', async () => {
    const hook = await site.hooks.webhooks.create({
      environment: 'env-phone',
      name: 'Order system on the other side of the world',
      endpoint: `${receiver.url}/long/and/a/rather/deep/path/that/has/to/wrap/on/a/phone`,
      eventTypes: ['user.created'],
    });
    const ok = await site.hooks.webhooks.create({
      environment: 'env-phone-ok',
      name: 'Fine',
      endpoint: `${receiver.url}/ok`,
      eventTypes: ['user.created'],
    });
    for (let i = 0; i < 3; i++) await emit('env-phone');
    await emit('env-phone-ok');
    await settle(); // each env-phone delivery: two attempts, both HTTP 500 with the long body
    const { deliveries } = await site.hooks.deliveries.list({ environment: 'env-phone', webhookId: hook.id });
    expect(deliveries.map((d) => [d.status, d.attemptCount])).toEqual([
      ['failed', 2],
      ['failed', 2],
      ['failed', 2],
    ]);

    const found: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const [env, id] of [
        ['env-phone', hook.id],
        ['env-phone-ok', ok.id],
      ] as const) {
        // bypassCSP only so axe-core can inject itself.
        const { page, context, problems } = await openDashboard(browser, site, { env, width: 360, colorScheme, bypassCSP: true });
        await page.goto(`${site.url}#/webhooks/${id}`);
        const rows = page
          .getByRole('region', { name: 'Deliveries' })
          .locator('tbody.delivery')
          .filter({ has: page.getByRole('button', { name: 'Resend' }) });
        await rows.first().waitFor();
        const count = await rows.count();
        expect(count).toBe(env === 'env-phone' ? 3 : 1);
        for (let i = 0; i < count; i++) await rows.nth(i).getByRole('button', { name: 'Attempts' }).click();
        const attempts = page.locator('.attempt');
        await page.waitForFunction(
          (n) => document.querySelector('webhooks-dashboard')!.shadowRoot!.querySelectorAll('.attempt').length === n,
          env === 'env-phone' ? 6 : 1,
        );
        if (env === 'env-phone') expect(await attempts.first().textContent()).toContain(LONG_BODY);
        const where = `360px ${colorScheme} ${env}`;
        for (const v of await axeViolations(page)) found.push(`${where}: ${v}`);
        const overflow = await horizontalOverflow(page);
        if (overflow > 0) found.push(`${where}: scrolls sideways by ${overflow}px`);
        expect(problems()).toEqual([]);
        await context.close();
      }
    }
    expect(found).toEqual([]);
  });

  test('a webhook the engine disabled for failing against a dead endpoint says "Disabled because failing since …" on its page, how long ago in the list', async () => {
    const dead = await startReceiver();
    const deadUrl = dead.url;
    await dead.close(); // nothing listens there any more: every attempt is refused
    const hook = await site.hooks.webhooks.create({
      environment: 'env-dead',
      name: 'Old CRM',
      endpoint: `${deadUrl}/gone`,
      eventTypes: ['user.created'],
    });
    const firstFailure = clock.now();
    await emit('env-dead');
    await settle();
    expect(await site.hooks.webhooks.get(hook.id, { environment: 'env-dead' })).toMatchObject({
      status: 'enabled',
      failingSince: firstFailure,
    });
    // Past disableAfterMs (an hour here), the next failure disables it.
    await clock.advance(2 * HOUR);
    await emit('env-dead');
    await settle();
    const disabled = await site.hooks.webhooks.get(hook.id, { environment: 'env-dead' });
    expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'failing', failingSince: firstFailure });

    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-dead' });
    await page.goto(site.url);
    const card = page.getByRole('list', { name: 'Your webhooks' }).getByRole('listitem');
    await card.waitFor();
    // The time as the reader's browser writes it (its locale and zone), of the first failure, not of the disable.
    const since = await page.evaluate(
      (ms) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(ms)),
      firstFailure,
    );
    const expected = `Disabled because failing since ${since}`;
    // The list says how long ago, the exact time on hover; the webhook's page says when.
    expect(await card.locator('.status').textContent()).toMatch(/^Disabled because failing \(it started \d+ days ago\)$/);
    expect(await card.locator('.status').getAttribute('title')).toBe(since);
    await card.getByRole('button', { name: 'Old CRM' }).click();
    await page.getByRole('heading', { name: 'Old CRM', level: 2 }).waitFor();
    expect(await page.locator('.status').first().textContent()).toBe(expected);
    expect(await page.getByText(/^Last error: /).textContent()).toMatch(/Could not connect to your endpoint: ECONNREFUSED/);
    expect(await page.getByRole('button', { name: 'Enable' }).count()).toBe(1);
    expect(problems()).toEqual([]);
    await context.close();
  });
});
