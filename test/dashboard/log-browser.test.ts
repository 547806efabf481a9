import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EventType } from '../../src/index.js';
import { until } from '../helpers/cleanup.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, launch, openDashboard, SHOTS } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * The delivery operations from the page, in real Chromium against a real engine and a real
 * receiver on 127.0.0.1: the log (statuses, paging, the status filter, attempts expanded), Resend
 * (the receiver sees the same webhook-id again), Recover failed since…, and Send test event (the
 * receiver's token verifies against the engine's JWKS).
 */

const run = chromiumAvailable('log-browser.test.ts');
let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** Paths answering 500 until taken out of this set. */
const down = new Set<string>();

describe.runIf(run)('the dashboard in Chromium: the delivery log', () => {
  beforeAll(async () => {
    [browser, site, receiver] = await Promise.all([
      launch(),
      startSite(),
      startReceiver((req) => (down.has(req.path) ? { status: 500, body: 'database is down' } : 200)),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  async function webhook(environment: string, path: string, eventTypes: EventType[] = ['user.created']) {
    return site.hooks.webhooks.create({ environment, name: `Hook ${path}`, endpoint: `${receiver.url}${path}`, eventTypes });
  }
  const emit = (environment: string) => site.hooks.emit({ environment, type: 'user.created', source: 'api', data: userData() });
  async function settled(environment: string, webhookId: string, count: number) {
    await until(
      `${count} deliveries settled`,
      async () => {
        const { deliveries } = await site.hooks.deliveries.list({ environment, webhookId, limit: 100 });
        return deliveries.length === count && deliveries.every((d) => d.status === 'delivered' || d.status === 'failed');
      },
      10_000,
      50,
    );
  }
  const received = (path: string) => receiver.requests.filter((r) => r.path === path);
  const rows = (page: Page) =>
    page
      .getByRole('region', { name: 'Deliveries' })
      .locator('tbody.delivery')
      .filter({ has: page.getByRole('button', { name: 'Resend' }) });

  test('statuses, paging, the status filter, attempts, and Resend with the same webhook-id', async () => {
    const hook = await webhook('env-log', '/flaky');
    down.add('/flaky');
    const failed = await emit('env-log');
    await settled('env-log', hook.id, 1); // 2 attempts (the back-off has one step), both 500
    down.delete('/flaky');
    for (let i = 0; i < 20; i++) await emit('env-log');
    await settled('env-log', hook.id, 21);
    const failedId = failed.deliveryIds[0]!;

    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-log' });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    await rows(page).first().waitFor();
    expect(await rows(page).count()).toBe(20); // newest first, 20 a page
    // The custom range's From and To show for "Custom" only.
    expect(await page.getByLabel('From', { exact: true }).isVisible()).toBe(false);
    const period = page.getByRole('search').getByLabel('Period', { exact: true });
    const periods = await period.locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    await period.selectOption('custom');
    expect(await page.getByLabel('From', { exact: true }).isVisible()).toBe(true);
    await period.selectOption(periods.find((v) => v !== 'custom')!);
    expect(await page.getByLabel('From', { exact: true }).isVisible()).toBe(false);
    await rows(page).first().waitFor();
    expect(await rows(page).first().textContent()).toContain('Delivered');
    await page.getByRole('button', { name: 'Next page' }).click();
    await until('page 2', async () => (await rows(page).count()) === 1);
    const row = rows(page).first();
    // One dense row: event, subject, status, attempts, last response, time, then the actions.
    expect((await row.locator('tr').first().locator('th, td').allTextContents()).slice(0, 5)).toEqual([
      'user.created',
      'kp_0123456789abcdef',
      'Failed',
      '2',
      'HTTP 500',
    ]);
    // Its message in the side panel, the log still there; Escape closes it and focus goes back.
    const view = row.getByRole('button', { name: 'View message' });
    await view.click();
    const side = page.getByRole('dialog', { name: 'user.created' });
    await side.locator('pre.payload').waitFor();
    expect(await side.getByRole('heading', { name: 'Attempts' }).isVisible()).toBe(true);
    expect(await side.locator('.attempt').count()).toBe(2);
    expect(await rows(page).count()).toBe(1);
    await page.keyboard.press('Escape');
    await until('the side panel closed', async () => !(await side.isVisible()));
    expect(await view.evaluate((b) => b.getRootNode() instanceof ShadowRoot && (b.getRootNode() as ShadowRoot).activeElement === b)).toBe(
      true,
    );
    await page.getByRole('button', { name: 'Previous page' }).click();
    await until('page 1 again', async () => (await rows(page).count()) === 20);

    await page.getByLabel('Status').selectOption('failed');
    await until('only the failed one', async () => (await rows(page).count()) === 1);
    const attempts = rows(page).first().getByRole('button', { name: 'Attempts' });
    await attempts.click();
    expect(await attempts.getAttribute('aria-expanded')).toBe('true');
    const items = rows(page).first().getByRole('listitem');
    await until('two attempts shown', async () => (await items.count()) === 2);
    for (const text of await items.allTextContents()) expect(text).toMatch(/Failed · HTTP 500 · \d+ ms.*database is down/);

    // Resend: the same message again, so the receiver sees the same webhook-id a third time.
    expect(received('/flaky').filter((r) => r.headers['webhook-id'] === failedId)).toHaveLength(2);
    await rows(page).first().getByRole('button', { name: 'Resend' }).click();
    await until('the resend arrives', () => received('/flaky').filter((r) => r.headers['webhook-id'] === failedId).length === 3);
    await until('delivered', async () => (await site.hooks.deliveries.get(failedId, { environment: 'env-log' })).status === 'delivered');
    expect(await site.hooks.deliveries.attempts(failedId, { environment: 'env-log' })).toHaveLength(3);
    await page.getByLabel('Status').selectOption('delivered');
    await until('the resent delivery listed as delivered', async () => (await rows(page).count()) === 20);

    // Resend on a disabled webhook is refused in words.
    await site.hooks.webhooks.disable(hook.id, { environment: 'env-log' });
    await rows(page).first().getByRole('button', { name: 'Resend' }).click();
    expect(await rows(page).first().getByRole('alert').textContent()).toBe('This webhook is disabled. Enable it first, then try again.');
    expect(problems([409])).toEqual([]);
    await context.close();
  });

  test('what was sent about a user, across webhooks: from the list by id or email, each webhook’s outcome, then the message', async () => {
    const crm = await webhook('env-about', '/about-crm');
    const billing = await webhook('env-about', '/about-billing');
    down.add('/about-billing');
    const ada = userData({ id: 'kp_about_ada', email: 'Ada.About@Example.com' });
    await site.hooks.emit({ environment: 'env-about', type: 'user.created', source: 'api', data: ada });
    await site.hooks.emit({ environment: 'env-about', type: 'user.created', source: 'api', data: userData({ id: 'kp_about_bob' }) });
    await settled('env-about', crm.id, 2);
    await settled('env-about', billing.id, 2);
    down.delete('/about-billing');

    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-about', bypassCSP: true });
    await page.goto(site.url);
    await page.getByRole('searchbox', { name: 'What was sent about' }).fill('ada.about@example.COM');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: 'Sent about ada.about@example.COM' }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/about/${encodeURIComponent('ada.about@example.COM')}`);
    const events = page.getByRole('list', { name: 'Events, newest first' }).locator('li.found-event');
    expect(await events.count()).toBe(1); // Ada's event only, not Bob's
    const rowsOf = events.first().locator('tbody tr');
    expect(await rowsOf.count()).toBe(2);
    const cells = (
      await rowsOf.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('th, td')].slice(0, 4).map((td) => td.textContent)))
    ).sort();
    expect(cells).toEqual([
      ['Hook /about-billing', 'Failed', '2', 'HTTP 500'],
      ['Hook /about-crm', 'Delivered', '1', 'HTTP 200'],
    ]);
    expect(await axeViolations(page)).toEqual([]);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}sent-about.png` });
    // By id too, from this view's own field; then a delivery's message.
    await page.getByRole('searchbox', { name: 'What was sent about' }).fill('kp_about_ada');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: 'Sent about kp_about_ada' }).waitFor();
    await events
      .first()
      .getByRole('row', { name: /about-billing/ })
      .getByRole('button', { name: 'View message' })
      .click();
    await page.locator('pre.payload').waitFor();
    expect(await page.locator('pre.payload').textContent()).toContain('kp_about_ada');
    // Nothing about someone else: said so.
    await page.goto(`${site.url}#/about/kp_nobody`);
    await page.getByText('Nothing was sent about kp_nobody.', { exact: false }).waitFor();
    expect(problems()).toEqual([]);
    await context.close();
  });

  test('Recover failed since… queues each failed delivery again, once', async () => {
    const hook = await webhook('env-recover', '/down');
    down.add('/down');
    const events = [await emit('env-recover'), await emit('env-recover')];
    await settled('env-recover', hook.id, 2);
    down.delete('/down');
    const ids = events.map((e) => e.deliveryIds[0]!);

    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-recover' });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    await rows(page).first().waitFor();
    await page.getByRole('button', { name: 'Recover failed since…' }).click();
    await page.getByLabel('Since').fill('2020-01-01T00:00:00');
    await page.getByRole('button', { name: 'Recover', exact: true }).click();
    await page.getByText('2 failed deliveries queued again.').waitFor();
    for (const id of ids)
      await until(`${id} sent again`, () => received('/down').filter((r) => r.headers['webhook-id'] === id).length === 3);
    await settled('env-recover', hook.id, 2);
    for (const id of ids) expect((await site.hooks.deliveries.get(id, { environment: 'env-recover' })).status).toBe('delivered');

    // Again: nothing is failed any more, so nothing is queued.
    await page.getByRole('button', { name: 'Recover failed since…' }).click();
    await page.getByRole('button', { name: 'Recover', exact: true }).click();
    await page.getByText('No failed deliveries since then.').waitFor();
    expect(received('/down')).toHaveLength(6);
    expect(problems()).toEqual([]);
    await context.close();
  });

  test('Send test event: a subscribed type by default, the outcome shown, the token verifies against the JWKS', async () => {
    const hook = await webhook('env-test', '/test', ['organization.created', 'user.created']);
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-test' });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    const type = page.getByLabel('Event type');
    await type.waitFor();
    expect(await type.inputValue()).toBe('organization.created');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/^Delivered: your endpoint answered HTTP 200 in \d+ ms\.$/).waitFor();
    const [first] = received('/test');
    const { payload } = await site.engine.verify(first!.body);
    expect(payload).toMatchObject({ type: 'organization.created', source: 'admin' });
    await rows(page).first().waitFor(); // the log shows it
    expect(await rows(page).first().textContent()).toContain('organization.created');

    // Any type of the catalog, subscribed or not.
    await type.selectOption('user.deleted');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await until('the second test event', () => received('/test').length === 2);
    expect((await site.engine.verify(received('/test')[1]!.body)).payload.type).toBe('user.deleted');
    await until('both in the log', async () => (await rows(page).count()) === 2);
    // Both marked as test events in the log (a real one would not be).
    await until('marked as tests', async () => (await page.locator('tbody.delivery .badge-test').count()) === 2);
    expect(await page.locator('tbody.delivery .badge-test').allTextContents()).toEqual(['Test', 'Test']);
    expect(problems()).toEqual([]);
    await context.close();
  });

  test('axe-core on the log with an attempt expanded and the recover form open, light and dark', async () => {
    const hook = await webhook('env-log-axe', '/axe');
    await emit('env-log-axe');
    await settled('env-log-axe', hook.id, 1);
    const found: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, context } = await openDashboard(browser, site, { env: 'env-log-axe', colorScheme, bypassCSP: true });
      await page.goto(`${site.url}#/webhooks/${hook.id}`);
      await rows(page).first().getByRole('button', { name: 'Attempts' }).click();
      await rows(page)
        .first()
        .getByText(/Succeeded/)
        .waitFor();
      await page.getByRole('button', { name: 'Recover failed since…' }).click();
      for (const v of await axeViolations(page)) found.push(`${colorScheme}: ${v}`);
      // and with a message open in the side panel
      await rows(page).first().getByRole('button', { name: 'View message' }).click();
      await page.locator('.message-side pre.payload').waitFor();
      for (const v of await axeViolations(page)) found.push(`${colorScheme}, side panel: ${v}`);
      if (colorScheme === 'light') {
        mkdirSync(SHOTS, { recursive: true });
        await page.screenshot({ path: `${SHOTS}log-side-panel.png` });
      }
      await context.close();
    }
    expect(found).toEqual([]);
  });
});
