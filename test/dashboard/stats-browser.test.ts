import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createVerifier } from '../../src/receiver/index.js';
import { until } from '../helpers/cleanup.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, horizontalOverflow, launch, openDashboard, SHOTS, tabTo } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * The stats, the log's filters and the message view in real Chromium, against a real engine and a
 * real receiver on 127.0.0.1 that verifies every token with identity-webhooks/receiver: the list's
 * success rate and chart, the overview, filters changing the rows and the address (and a linked
 * filtered address opening filtered), the message view showing the payload the receiver verified;
 * axe in both colour schemes, 360 px, keyboard alone. Screenshots go to docs/screenshots/ with UPDATE_SCREENSHOTS=1.
 */

const run = chromiumAvailable('stats-browser.test.ts');
let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** What the receiver verified, by webhook-id. */
const verified = new Map<string, Record<string, unknown>>();
const down = new Set<string>();

describe.runIf(run)('the dashboard in Chromium: stats, log filters, the message', () => {
  let hookId: string;
  let deliveryIds: string[];
  beforeAll(async () => {
    [browser, site] = await Promise.all([launch(), startSite()]);
    const verifier = createVerifier({ issuer: site.engine.issuer, jwks: site.hooks.jwks() as never });
    receiver = await startReceiver((req) => {
      // Verified after the answer (the handler is synchronous): kept by webhook-id.
      void verifier.verify(req.body).then((event) => verified.set(String(req.headers['webhook-id']), event as never));
      return down.has(req.path) ? { status: 500, body: 'database is down' } : 200;
    });
    const hook = await site.hooks.webhooks.create({
      environment: 'env-a',
      name: 'CRM sync',
      endpoint: `${receiver.url}/crm`,
      eventTypes: ['user.created', 'user.deleted'],
    });
    await site.hooks.webhooks.create({
      environment: 'env-a',
      name: 'Billing',
      endpoint: `${receiver.url}/billing`,
      eventTypes: ['user.deleted'],
    });
    hookId = hook.id;
    deliveryIds = [];
    for (const type of ['user.created', 'user.created', 'user.deleted'] as const)
      deliveryIds.push(...(await site.hooks.emit({ environment: 'env-a', type, source: 'api', data: userData() })).deliveryIds);
    const settled = (n: number) =>
      until(
        `${n} deliveries settled`,
        async () => {
          const { deliveries } = await site.hooks.deliveries.list({ environment: 'env-a', webhookId: hookId, limit: 100 });
          return deliveries.length === n && deliveries.every((d) => d.status === 'delivered' || d.status === 'failed');
        },
        15_000,
        50,
      );
    await settled(3);
    down.add('/crm');
    deliveryIds.push(
      ...(await site.hooks.emit({ environment: 'env-a', type: 'user.created', source: 'api', data: userData() })).deliveryIds,
    );
    await until(
      'deliveries settled',
      async () => {
        const { deliveries } = await site.hooks.deliveries.list({ environment: 'env-a', webhookId: hookId, limit: 100 });
        return deliveries.length === 4 && deliveries.every((d) => d.status === 'delivered' || d.status === 'failed');
      },
      15_000,
      50,
    );
    down.delete('/crm');
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  test('the list shows success rate, requests and a chart per webhook; the webhook page its overview by period', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, problems } = await openDashboard(browser, site, { colorScheme, bypassCSP: true });
      await page.goto(site.url);
      const card = page.getByRole('listitem').filter({ hasText: 'CRM sync' });
      await expect.poll(() => card.textContent()).toContain('Requests (24 h)');
      expect(await card.textContent()).toMatch(/Success rate \(24 h\)\s*\d+\s*%/);
      expect(await card.getByRole('img').getAttribute('aria-label')).toMatch(/Last 24 hours, hour by hour: \d+ delivered, \d+ failed/);
      expect(await axeViolations(page)).toEqual([]);
      await page.screenshot({ path: `${SHOTS}list-${colorScheme}.png`, fullPage: true });
      await card.getByRole('button', { name: 'CRM sync' }).click();
      await page.getByRole('button', { name: 'Last 7 days' }).click();
      await expect.poll(() => page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed')).toBe('true');
      await expect.poll(() => page.getByRole('img', { name: /Last 7 days: \d+ delivered, \d+ failed/ }).count()).toBe(1);
      expect(await page.locator('.dashboard').textContent()).toMatch(/Median duration\s*\d+ ms/);
      expect(await axeViolations(page)).toEqual([]);
      await page.screenshot({ path: `${SHOTS}overview-${colorScheme}.png`, fullPage: true });
      expect(problems()).toEqual([]);
      await page.context().close();
    }
  });

  test('filters change the rows and the address; the address opens the log filtered', async () => {
    const { page, problems } = await openDashboard(browser, site);
    await page.goto(`${site.url}#/webhooks/${hookId}`);
    const rows = page
      .getByRole('region', { name: 'Deliveries' })
      .locator('tbody.delivery')
      .filter({ has: page.getByRole('button', { name: 'Resend' }) });
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(4);
    await page.getByLabel('Status').selectOption('failed');
    await expect.poll(() => rows.count()).toBe(1);
    expect(new URL(page.url()).hash).toBe(`#/webhooks/${hookId}?status=failed`);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Event', { exact: true }).selectOption('user.deleted');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel('Period', { exact: true }).selectOption('1h');
    await expect.poll(() => new URL(page.url()).hash).toBe(`#/webhooks/${hookId}?type=user.deleted&period=1h`);
    await expect.poll(() => rows.count()).toBe(1);
    // A custom range in the past: nothing.
    await page.getByLabel('Period', { exact: true }).selectOption('custom');
    await page.getByLabel('To', { exact: true }).fill('2020-01-01T00:00');
    await expect.poll(() => page.getByText('No deliveries match these filters.').count()).toBe(1);
    // Search by delivery id (its webhook-id), all else cleared.
    await page.getByLabel('Event', { exact: true }).selectOption('');
    await page.getByLabel('Period', { exact: true }).selectOption('');
    await page.getByLabel('Event or delivery id').fill(deliveryIds[0]!);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(new URL(page.url()).hash).toBe(`#/webhooks/${hookId}?q=${deliveryIds[0]}`);
    // A linked address opens filtered.
    const linked = await openDashboard(browser, site);
    await linked.page.goto(`${site.url}#/webhooks/${hookId}?status=delivered&type=user.created`);
    const linkedRows = linked.page
      .getByRole('region', { name: 'Deliveries' })
      .locator('tbody.delivery')
      .filter({ has: linked.page.getByRole('button', { name: 'Resend' }) });
    await expect.poll(() => linkedRows.count(), { timeout: 15_000 }).toBe(2);
    expect(await linked.page.getByLabel('Status').inputValue()).toBe('delivered');
    expect(problems()).toEqual([]);
    expect(linked.problems()).toEqual([]);
    await page.context().close();
    await linked.page.context().close();
  });

  test('the message view shows the payload the receiver verified, the headers it got, every attempt; copy; 360 px and keyboard', async () => {
    const failedId = deliveryIds.at(-1)!;
    const deliveredId = deliveryIds[0]!;
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, problems, context } = await openDashboard(browser, site, { colorScheme, bypassCSP: true, width: 360 });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.origin });
      await page.goto(`${site.url}#/webhooks/${hookId}/deliveries/${deliveredId}`);
      const payload = page.locator('pre.payload');
      const shown = JSON.parse((await payload.textContent())!);
      const got = verified.get(deliveredId)!;
      const { timestamp, iat: gotIat, ...rest } = got as Record<string, unknown>;
      const { timestamp: shownTimestamp, iat, ...shownRest } = shown;
      expect(shownRest).toEqual(rest);
      expect(shownRest.iss).toBe(site.engine.issuer);
      expect(Math.abs(Date.parse(shownTimestamp) - Date.parse(String(timestamp)))).toBeLessThan(60_000);
      expect(Math.abs(iat - Number(gotIat))).toBeLessThan(60);
      const text = (await page.locator('.dashboard').textContent()) ?? '';
      for (const header of ['content-type', 'application/jwt', 'webhook-id', deliveredId, 'user-agent']) expect(text).toContain(header);
      await page.getByRole('button', { name: 'Copy payload' }).click();
      await expect.poll(() => page.getByText('Payload copied.').count()).toBe(1);
      expect(JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))).toEqual(shown);
      expect(await horizontalOverflow(page)).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      await page.screenshot({ path: `${SHOTS}message-${colorScheme}.png`, fullPage: true });
      // A failed one: both attempts, with their status and the receiver's answer.
      await page.goto('about:blank');
      await page.goto(`${site.url}#/webhooks/${hookId}/deliveries/${failedId}`);
      await expect
        .poll(() => page.locator('.dashboard').textContent(), { timeout: 15_000 })
        .toMatch(/Failed · HTTP 500[\s\S]*Failed · HTTP 500/);
      expect(await page.locator('.dashboard').textContent()).toContain('database is down');
      // Keyboard alone: back to the webhook, its log, and a message again.
      await tabTo(page, 'Back to the webhook');
      await page.keyboard.press('Enter');
      await tabTo(page, 'View message', 80);
      await page.keyboard.press('Enter');
      // In the side panel, focus on its heading; from there, the message's own page.
      await page.locator('.message-side pre.payload').waitFor();
      expect(await horizontalOverflow(page)).toBe(0);
      await tabTo(page, 'Open as a page', 10);
      await page.keyboard.press('Enter');
      await expect.poll(() => new URL(page.url()).hash).toMatch(/\/deliveries\/msg_/);
      expect(problems()).toEqual([]);
      await context.close();
    }
  });
});
