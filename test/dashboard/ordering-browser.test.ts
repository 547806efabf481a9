import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, launch, openDashboard } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * The Advanced section's "Delivery order" group (ordering-fields.js, docs/ordering.md) in real
 * Chromium against a real engine: chosen, saved, read back (the section open since something in
 * it is set), set back to none; axe-core on the open section.
 */
const run = chromiumAvailable('ordering-browser.test.ts');
let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

describe.runIf(run)('the dashboard in Chromium: delivery order', () => {
  beforeAll(async () => {
    [browser, site, receiver] = await Promise.all([launch(), startSite({}), startReceiver()]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  test('per subject: chosen, saved, read back; set back to none', async () => {
    const hook = await site.hooks.webhooks.create({
      environment: 'env-ord',
      name: 'CRM',
      endpoint: `${receiver.url}/crm`,
      eventTypes: ['user.created', 'user.updated'],
    });
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-ord' });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    await page.getByRole('heading', { name: 'CRM', level: 2 }).waitFor();
    const advanced = page.locator('details.advanced');
    expect(await advanced.getAttribute('open')).toBeNull();
    await page.getByText('Advanced', { exact: true }).click();
    const order = page.getByLabel('Order', { exact: true });
    expect(await order.inputValue()).toBe('none');
    await order.selectOption('per-subject');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-ord' })).ordering).toBe('per-subject');

    await page.reload();
    await page.getByRole('heading', { name: 'CRM', level: 2 }).waitFor();
    expect(await advanced.getAttribute('open')).not.toBeNull();
    expect(await page.getByLabel('Order', { exact: true }).inputValue()).toBe('per-subject');
    await page.getByLabel('Order', { exact: true }).selectOption('none');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-ord' })).ordering).toBe('none');
    expect(problems([])).toEqual([]);
    await context.close();

    await site.hooks.webhooks.update(hook.id, { ordering: 'per-subject' }, { environment: 'env-ord' });
    const axe = await openDashboard(browser, site, { env: 'env-ord', bypassCSP: true });
    await axe.page.goto(`${site.url}#/webhooks/${hook.id}`);
    await axe.page.getByRole('heading', { name: 'CRM', level: 2 }).waitFor();
    expect(await axe.page.locator('details.advanced').getAttribute('open')).not.toBeNull();
    expect(await axeViolations(axe.page)).toEqual([]);
    await axe.context.close();
  });
});
