import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { until } from '../helpers/cleanup.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { CHROMIUM, launch, openPortal } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * Screenshots of every view for a person to look at (not a test of anything):
 *   DASHBOARD_SCREENSHOTS=1 npx vitest run test/dashboard/screenshots.test.ts
 * writes .tmp/dashboard/*.png (list, add form with the dialog open, a webhook with its log; 1280
 * and 360 px; light and dark) and docs/dashboard.png, the README's.
 */

const OUT = '.tmp/dashboard';
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

describe.runIf(process.env.DASHBOARD_SCREENSHOTS && CHROMIUM)('dashboard screenshots', () => {
  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    let n = 0;
    let crmRequests = 0;
    let doomed: string | undefined;
    // Some answers fail, so the log shows both outcomes; and the third delivery to the CRM fails
    // every time, so its log always holds a failed one (the view below opens its attempts).
    receiver = await startReceiver((req) => {
      const id = String(req.headers['webhook-id']);
      if (req.path.startsWith('/crm/') && doomed === undefined && ++crmRequests === 3) doomed = id;
      return id === doomed || ++n % 4 === 0 ? { status: 503, body: 'upstream busy, try later' } : 200;
    });
    site = await startSite();
  });
  afterAll(async () => {
    await site?.close();
    await receiver?.close();
  });

  test('every view, 1280 and 360 px, light and dark', { timeout: 120_000 }, async () => {
    const env = 'env-acme';
    const crm = await site.hooks.webhooks.create({
      environment: env,
      name: 'CRM sync',
      description: 'New and changed users into the CRM',
      endpoint: `${receiver.url}/crm/identity-events`,
      eventTypes: ['user.created', 'user.updated', 'user.deleted'],
    });
    await site.hooks.webhooks.create({
      environment: env,
      name: 'Billing seats',
      endpoint: `${receiver.url}/billing/seats`,
      eventTypes: ['organization.created', 'organization.updated', 'user.created', 'user.deleted', 'role.created', 'permission.created'],
    });
    const legacy = await site.hooks.webhooks.create({
      environment: env,
      name: 'Legacy ERP',
      endpoint: 'https://erp.example.com/hooks',
      eventTypes: ['user.created'],
    });
    await site.hooks.webhooks.disable(legacy.id, { environment: env });
    for (let i = 0; i < 8; i++)
      await site.hooks.emit({ environment: env, type: i % 3 ? 'user.updated' : 'user.created', source: 'api', data: userData() });
    await until('deliveries settle', async () => receiver.requests.length >= 11, 10_000);
    const failedOfCrm = async () =>
      (await site.hooks.deliveries.list({ environment: env, webhookId: crm.id, status: 'failed' })).deliveries.length > 0;
    await until('a delivery to the CRM failed for good', failedOfCrm, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));

    const browser = await launch();
    for (const width of [1280, 360]) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const name = (view: string) => `${OUT}/${view}-${width}-${colorScheme}.png`;
        const { page, context } = await openPortal(browser, site, { env, width, colorScheme });
        await page.goto(site.url);
        await page.getByRole('list', { name: 'Your webhooks' }).waitFor();
        await page.screenshot({ path: name('list'), fullPage: true });
        await page.getByRole('button', { name: 'Add webhook' }).click();
        await page.getByLabel('Name').fill('Support desk');
        await page.getByLabel('Endpoint URL').fill('https://support.example.com/hooks');
        await page.getByRole('button', { name: 'Add event' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.getByRole('checkbox', { name: /^user\.created / }).check();
        await dialog.getByRole('checkbox', { name: /^organization\.created / }).check();
        await page.screenshot({ path: name('add-dialog'), fullPage: false });
        await dialog.getByRole('button', { name: 'Save' }).click();
        await page.getByLabel('Endpoint URL').fill('http://10.0.0.8/hooks');
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('alert').waitFor();
        await page.screenshot({ path: name('add-error'), fullPage: true });
        await page.goto(`${site.url}#/webhooks/${crm.id}`);
        const log = page.getByRole('list', { name: 'Deliveries' });
        await log.waitFor();
        // A failed delivery's attempts say the most.
        const failed = log.getByRole('listitem').filter({ hasText: 'Failed' }).first();
        await failed.getByRole('button', { name: 'Attempts' }).click();
        await failed
          .getByText(/· Failed ·/)
          .first()
          .waitFor();
        await page.mouse.move(0, 0); // no hover state in the picture
        await page.screenshot({ path: name('webhook'), fullPage: true });
        if (width === 1280 && colorScheme === 'light') {
          await page.setViewportSize({ width: 1100, height: 1180 });
          await page.screenshot({ path: 'docs/dashboard.png', fullPage: false });
        }
        await context.close();
      }
    }
    await browser.close();
  });
});
