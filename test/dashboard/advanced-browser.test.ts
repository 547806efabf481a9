import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, launch, openDashboard } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * The webhook form's Advanced section (endpoint options) in real Chromium against a real engine:
 * headers added and removed row by row, a credential value shown masked once saved and kept or
 * replaced, the timeout and the rate limit; the server's refusals next to their field, in the
 * words of words.js; no credential value anywhere in the page's HTML; axe-core on it.
 */

const run = chromiumAvailable('advanced-browser.test.ts');
const SECRET = 'Bearer dash-s3cr3t-9b1e';
let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

describe.runIf(run)('the dashboard in Chromium: the Advanced section', () => {
  beforeAll(async () => {
    [browser, site, receiver] = await Promise.all([
      launch(),
      startSite({ secretsKey: randomBytes(32).toString('base64') }),
      startReceiver(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  test('headers, timeout and rate limit: set, saved, credential values masked and kept; refusals by their field', async () => {
    const hook = await site.hooks.webhooks.create({
      environment: 'env-adv',
      name: 'Billing',
      endpoint: `${receiver.url}/billing`,
      eventTypes: ['user.created'],
    });
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-adv' });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    await page.getByRole('heading', { name: 'Billing', level: 2 }).waitFor();
    // Closed while nothing in it is set.
    const advanced = page.locator('details.advanced');
    expect(await advanced.getAttribute('open')).toBeNull();
    await page.getByText('Advanced', { exact: true }).click();

    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header name').last().fill('Authorization');
    await page.getByLabel('Header value').last().fill(SECRET);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header name').last().fill('X-Tenant');
    await page.getByLabel('Header value').last().fill('acme');
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header name').last().fill('X-Gone');
    await page.getByRole('button', { name: 'Remove header X-Gone' }).click();
    await page.getByLabel('Timeout (seconds)').fill('5');
    await page.getByLabel('Rate limit (requests per second)').fill('20');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect(await site.hooks.webhooks.get(hook.id, { environment: 'env-adv' })).toMatchObject({
      headers: { Authorization: '••••••••', 'X-Tenant': 'acme' },
      timeoutMs: 5000,
      rateLimit: { perSecond: 20 },
    });

    // Read again: open (something is set), the credential masked, and nowhere in the page.
    await page.reload();
    await page.getByRole('heading', { name: 'Billing', level: 2 }).waitFor();
    expect(await advanced.getAttribute('open')).not.toBeNull();
    expect(await page.getByLabel(/^Value of Authorization/).inputValue()).toBe('••••••••');
    const html = await page.evaluate(() => document.querySelector('webhooks-dashboard')!.shadowRoot!.innerHTML);
    expect(html).not.toContain('s3cr3t');
    await page.screenshot({ path: '/tmp/opt36shots/advanced.png', fullPage: true });

    // Saved again untouched: the credential is kept (the receiver gets it).
    await page.getByLabel('Rate limit (requests per second)').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Changes saved.').waitFor();
    await site.hooks.emit({ environment: 'env-adv', type: 'user.created', source: 'api', data: userData() });
    await receiver.waitFor(1);
    expect(receiver.requests[0]!.headers.authorization).toBe(SECRET);
    expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-adv' })).rateLimit).toBeNull();

    // Refusals, next to their field, in the page's words.
    await page.getByLabel('Timeout (seconds)').fill('90');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Enter a timeout from 1 to 30 seconds.').waitFor();
    expect(await page.getByLabel('Timeout (seconds)').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Timeout (seconds)').fill('5');
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header name').last().fill('Content-Type');
    await page.getByLabel('Header value').last().fill('text/plain');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/Check the headers/).waitFor();
    expect(await page.getByText(/Content-Type/).count()).toBeGreaterThan(0);
    await page.screenshot({ path: '/tmp/opt36shots/advanced-refused.png', fullPage: true });
    expect(problems([400])).toEqual([]);
    await context.close();

    // axe-core on the open section (bypassCSP only so axe can inject itself).
    const axe = await openDashboard(browser, site, { env: 'env-adv', bypassCSP: true });
    await axe.page.goto(`${site.url}#/webhooks/${hook.id}`);
    await axe.page.getByRole('heading', { name: 'Billing', level: 2 }).waitFor();
    expect(await axe.page.locator('details.advanced').getAttribute('open')).not.toBeNull();
    expect(await axeViolations(axe.page)).toEqual([]);
    await axe.context.close();
  });
});
