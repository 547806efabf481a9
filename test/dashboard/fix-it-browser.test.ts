import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { until } from '../helpers/cleanup.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, launch, openDashboard, SHOTS } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * An account holder with a problem, in real Chromium against a real engine and receiver: a
 * failing webhook says what is wrong in plain words, since when, and when it will be disabled;
 * each waiting delivery says when it is tried next; once the endpoint is fixed, Send waiting now
 * delivers everything (two clicks: open the webhook, send). A disabled webhook offers nothing
 * that needs it enabled, and Enable says how many deliveries were held and asks send or drop. A
 * notice belongs to the view that raised it. The message view shows a Standard Webhooks request
 * as it was sent.
 */

const run = chromiumAvailable('fix-it-browser.test.ts');
let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** Paths answering 500 until taken out of this set. */
const down = new Set<string>();

describe.runIf(run)('the dashboard in Chromium: fixing a failing webhook', () => {
  beforeAll(async () => {
    [browser, site, receiver] = await Promise.all([
      launch(),
      // The back-off waits an hour: what waits is sent only by Send waiting now.
      startSite({ backoff: { schedule: [3_600_000, 3_600_000], jitter: 0 }, secretsKey: randomBytes(32).toString('base64') }),
      startReceiver((req) => (down.has(req.path) ? { status: 500, body: '<html><body>database is down</body></html>' } : 200)),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  const emit = (environment: string) => site.hooks.emit({ environment, type: 'user.created', source: 'api', data: userData() });
  const received = (path: string) => receiver.requests.filter((r) => r.path === path);
  async function attempted(environment: string, webhookId: string, count: number) {
    await until(
      `${count} deliveries attempted once`,
      async () => {
        const { deliveries } = await site.hooks.deliveries.list({ environment, webhookId, limit: 100 });
        return deliveries.length === count && deliveries.every((d) => d.attemptCount === 1 && d.status === 'pending');
      },
      10_000,
      50,
    );
  }

  test('failing → fixed → Send waiting now → every delivery delivered; the message as it was sent', async () => {
    down.add('/crm');
    const hook = await site.hooks.webhooks.create({
      environment: 'env-fix',
      name: 'CRM',
      endpoint: `${receiver.url}/crm`,
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    for (let i = 0; i < 3; i++) await emit('env-fix');
    await attempted('env-fix', hook.id, 3);

    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-fix', bypassCSP: true });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    const panel = page.getByRole('region', { name: 'This webhook is failing' });
    await panel.waitFor();
    // First on the page, in plain words, with since when and the date it will be disabled.
    const regions = await page.getByRole('region').evaluateAll((all) => all.map((r) => r.getAttribute('aria-labelledby')));
    expect(regions[0]).toBe(await panel.getAttribute('aria-labelledby'));
    await panel.getByText('Your endpoint answered HTTP 500. Only HTTP 200 counts as delivered.').waitFor();
    expect(await panel.textContent()).not.toContain('<html>');
    // "now" when the page reads it within half a second of the failure (a quick machine).
    expect(await panel.getByText(/^It started failing (now|.+ ago)\.$/).count()).toBe(1);
    const disables = await panel.locator('time').last().getAttribute('datetime');
    const webhook = await site.hooks.webhooks.get(hook.id, { environment: 'env-fix' });
    expect(Date.parse(disables!)).toBe(webhook.failingSince! + 72 * 3600_000);
    await panel.getByText('3 deliveries waiting').waitFor();
    // Each waiting row: its next attempt, relative, the exact time on hover.
    const next = page.getByRole('region', { name: 'Deliveries' }).locator('.next time[title]');
    await next.first().waitFor();
    expect(await next.count()).toBe(3);
    expect(await page.getByText(/next attempt in (59|60) minutes/).count()).toBe(3);
    expect(await axeViolations(page)).toEqual([]);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}fix-it.png` });

    // The message (in the side panel): a Standard Webhooks request, as sent.
    await page.getByRole('button', { name: 'View message' }).first().click();
    await page.getByText(/The JSON body your endpoint received/).waitFor();
    const headers = page.locator('table.headers');
    expect(await headers.getByRole('row', { name: /content-type/ }).textContent()).toContain('application/json');
    expect(await headers.getByRole('row', { name: /webhook-signature/ }).textContent()).toContain('v1,••••');
    expect(await page.locator('pre.payload').textContent()).not.toContain('"iss"');
    // Ids copy with one click.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.origin });
    await page.getByRole('button', { name: 'Copy the event id' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(/^event_/);
    await page.getByRole('dialog', { name: /./ }).getByRole('button', { name: 'Close' }).click();
    await panel.waitFor();

    // Fixed: one click sends what waits, now rather than in an hour.
    down.delete('/crm');
    await page.getByRole('button', { name: 'Send waiting now' }).click();
    await page.getByText('3 waiting deliveries are being sent now.').waitFor();
    await until('all three sent again', () => received('/crm').length === 6, 10_000, 50);
    await until(
      'the log says so',
      async () =>
        (await site.hooks.deliveries.list({ environment: 'env-fix', webhookId: hook.id, limit: 10 })).deliveries.every(
          (d) => d.status === 'delivered',
        ),
      10_000,
      50,
    );
    await page.reload();
    await page.getByRole('heading', { name: 'CRM' }).waitFor();
    expect(await page.getByRole('region', { name: 'This webhook is failing' }).count()).toBe(0);
    expect(problems()).toEqual([]);
    await context.close();
  });

  test('disabled: no test event, Resend or Recover; Enable says how many were held and drops them when asked; a notice stays with its view', async () => {
    down.add('/held');
    const hook = await site.hooks.webhooks.create({
      environment: 'env-held',
      name: 'Held',
      endpoint: `${receiver.url}/held`,
      eventTypes: ['user.created'],
    });
    for (let i = 0; i < 2; i++) await emit('env-held');
    await attempted('env-held', hook.id, 2);
    await site.hooks.webhooks.disable(hook.id, { environment: 'env-held' });

    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-held' });
    await page.goto(site.url);
    await page.getByRole('button', { name: 'Held' }).click();
    await page.getByRole('heading', { name: 'Held' }).waitFor();
    await page.getByRole('region', { name: 'Deliveries' }).locator('tbody.delivery').first().waitFor();
    for (const name of ['Send test event', 'Resend', 'Recover failed since…']) {
      expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    }
    expect(await page.getByRole('region', { name: 'Send a test event' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Enable “Held”?' });
    await dialog.getByText('2 deliveries were held while it was disabled.').waitFor();
    await dialog.getByRole('button', { name: 'Enable and drop them' }).click();
    await page.getByText('Webhook enabled. The held deliveries were dropped.').waitFor();
    const { deliveries } = await site.hooks.deliveries.list({ environment: 'env-held', webhookId: hook.id, limit: 10 });
    expect(deliveries.map((d) => d.status)).toEqual(['failed', 'failed']);
    expect(received('/held')).toHaveLength(2); // nothing more was sent

    // Enabled again: Resend is offered; its notice goes with the view it was raised on, and the
    // browser's Back to the list leaves it behind.
    await page.getByRole('button', { name: 'Resend' }).first().click();
    const resent = page.getByText('Delivery of user.created queued to be sent again.');
    await resent.waitFor();
    await page.goBack();
    await page.getByRole('button', { name: 'Add webhook' }).waitFor();
    expect(await resent.count()).toBe(0);
    expect(problems()).toEqual([]);
    await context.close();
  });
});

describe.runIf(run)('the dashboard in Chromium: a list that says what needs you', () => {
  let browser2: Browser;
  let site2: Site;
  let receiver2: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    [browser2, site2, receiver2] = await Promise.all([
      launch(),
      startSite({ backoff: { schedule: [3_600_000], jitter: 0 } }),
      startReceiver((req) => (req.path.startsWith('/down') ? 500 : 200)),
    ]);
  });
  afterAll(async () => {
    await browser2?.close();
    await site2?.close();
    await receiver2?.close();
  });

  test('a summary line, failing and disabled first, search by name or URL; the overview chart with axes and a tooltip per bar', async () => {
    const env = 'env-list';
    const make = (name: string, path: string) =>
      site2.hooks.webhooks.create({ environment: env, name, endpoint: `${receiver2.url}${path}`, eventTypes: ['user.created'] });
    await make('Analytics', '/ok-analytics');
    const off = await make('Archive', '/ok-archive');
    const billing = await make('Billing', '/down-billing');
    await make('CRM', '/ok-crm');
    const erp = await make('ERP', '/down-erp');
    await site2.hooks.webhooks.disable(off.id, { environment: env });
    await site2.hooks.emit({ environment: env, type: 'user.created', source: 'api', data: userData() });
    await until(
      'the failing ones failing',
      async () =>
        (await Promise.all([billing.id, erp.id].map((id) => site2.hooks.webhooks.get(id, { environment: env })))).every(
          (w) => w.failingSince !== null,
        ),
      10_000,
      50,
    );

    const { page, context, problems } = await openDashboard(browser2, site2, { env, bypassCSP: true });
    await page.goto(site2.url);
    await page.getByText('2 of 5 failing · disabled: 1').waitFor();
    const titles = () => page.getByRole('list', { name: 'Your webhooks' }).getByRole('heading', { level: 3 }).allTextContents();
    expect(await titles()).toEqual(['Billing', 'ERP', 'Archive', 'Analytics', 'CRM']);
    // Relative ("now" within half a second of the failure), the exact time on hover.
    const status = page.getByText(/^Enabled, failing \(it started (now|.+ ago)\)$/).first();
    expect(await status.getAttribute('title')).toMatch(/\d{4}/);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}list-failing.png` });

    const search = page.getByLabel('Find by name or URL');
    await search.fill('erp');
    expect(
      await page.getByRole('list', { name: 'Your webhooks' }).getByRole('heading', { level: 3, includeHidden: false }).allTextContents(),
    ).toEqual(['ERP']);
    await search.fill('ok-cr'); // part of an endpoint URL
    expect(await page.locator('.card:not([hidden]) h3').allTextContents()).toEqual(['CRM']);
    await search.fill('nothing like it');
    await page.getByText('No webhook matches.').waitFor();
    await search.fill('');
    expect(await page.locator('.card:not([hidden])').count()).toBe(5);

    // The overview: an error rate, axes, a tooltip per hour.
    await page.getByRole('button', { name: 'Analytics' }).click();
    const overview = page.getByRole('region', { name: 'Overview' });
    await overview.getByText('Error rate').waitFor();
    await overview.getByText('1 at most').waitFor();
    const tips = await overview.locator('svg g.bar title').allTextContents();
    expect(tips).toHaveLength(24);
    expect(tips.filter((tip) => /: 1 delivered, 0 failed$/.test(tip))).toHaveLength(1);
    expect(await overview.locator('.x-axis span').count()).toBe(2);

    // The page in sections, health first, each a button away; focus lands on its heading, with no ring.
    const jump = page.getByRole('navigation', { name: 'On this page' });
    expect(await jump.getByRole('button').allTextContents()).toEqual([
      'Overview',
      'Delivery log',
      'Send a test event',
      'How to verify',
      'Settings',
    ]);
    await jump.getByRole('button', { name: 'Settings' }).click();
    const focused = await page.evaluate(() => {
      const active = document.querySelector('webhooks-dashboard')!.shadowRoot!.activeElement as HTMLElement;
      return { tag: active.tagName, text: active.textContent, outline: getComputedStyle(active).outlineStyle };
    });
    expect(focused).toEqual({ tag: 'H3', text: 'Settings', outline: 'none' });
    expect(problems()).toEqual([]);
    await context.close();
  });
});
