import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { until } from '../helpers/cleanup.js';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { chromiumAvailable, focusedLabel, launch, openDashboard, shiftTabTo, tabTo } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * One webhook's page with the keyboard alone (Tab, Shift+Tab, Enter, Space, typing; no click
 * anywhere), in real Chromium against a real engine and a real receiver on 127.0.0.1: Disable
 * then Enable, the log filtered to failed deliveries, a delivery's attempts expanded, Resend, Recover failed since…, Send test event, and the
 * settings edited (the Add event dialog included) and saved. After each action focus must be
 * where the person left it, or the next key press would go somewhere else; each step checks
 * what reached the engine or the receiver.
 */

const run = chromiumAvailable('keyboard-browser.test.ts');
let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let down = true;

describe.runIf(run)('the dashboard in Chromium: a webhook with the keyboard alone', () => {
  beforeAll(async () => {
    [browser, site, receiver] = await Promise.all([
      launch(),
      startSite(),
      startReceiver(() => (down ? { status: 503, body: 'maintenance' } : 200)),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  const ENV = 'env-keys';
  const received = (deliveryId: string) => receiver.requests.filter((r) => r.headers['webhook-id'] === deliveryId).length;
  const statusOf = async (deliveryId: string) => (await site.hooks.deliveries.get(deliveryId, { environment: ENV })).status;
  /** Presses `key` on what has focus, after checking that it is `name`. */
  async function press(page: Page, name: string, key: 'Enter' | 'Space') {
    expect(await focusedLabel(page)).toBe(name);
    await page.keyboard.press(key);
  }

  test('Disable / Enable, attempts, Resend, Recover failed since…, Send test event, settings: Tab, Shift+Tab, Enter and Space only', async () => {
    const hook = await site.hooks.webhooks.create({
      environment: ENV,
      name: 'Billing',
      endpoint: `${receiver.url}/billing`,
      eventTypes: ['user.created'],
    });
    // Two deliveries that failed (two attempts each, 503), while the receiver was down.
    const older = (await site.hooks.emit({ environment: ENV, type: 'user.created', source: 'api', data: userData() })).deliveryIds[0]!;
    const newer = (await site.hooks.emit({ environment: ENV, type: 'user.created', source: 'api', data: userData() })).deliveryIds[0]!;
    await until('both failed', async () => (await statusOf(older)) === 'failed' && (await statusOf(newer)) === 'failed', 10_000, 50);
    down = false;

    const { page, context, problems } = await openDashboard(browser, site, { env: ENV });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    await page.getByRole('heading', { name: 'Billing', level: 2 }).waitFor();
    const rows = page
      .getByRole('region', { name: 'Deliveries' })
      .locator('tbody.delivery')
      .filter({ has: page.getByRole('button', { name: 'Resend' }) });
    await rows.nth(1).waitFor();

    // Disable with Enter, Enable with Space: focus stays on the toggle through the redraw.
    await tabTo(page, 'Disable');
    await press(page, 'Disable', 'Enter');
    await until('disabled', async () => (await site.hooks.webhooks.get(hook.id, { environment: ENV })).status === 'disabled');
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect(await focusedLabel(page)).toBe('Enable');
    await press(page, 'Enable', 'Space');
    await until('enabled', async () => (await site.hooks.webhooks.get(hook.id, { environment: ENV })).status === 'enabled');
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect(await focusedLabel(page)).toBe('Disable');

    // Only the failed deliveries: the Status filter, by typing the option's first letter.
    await rows.nth(1).waitFor(); // the log of the redrawn view
    await tabTo(page, 'Status');
    await page.keyboard.type('F');
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');
    await until(
      'the failed deliveries listed',
      async () => (await rows.count()) === 2 && !(await page.locator('.log-list[aria-busy]').count()),
    );
    expect(await focusedLabel(page)).toBe('Status');

    // The newest delivery's attempts, with Space; focus stays on the button.
    await tabTo(page, 'Attempts');
    await press(page, 'Attempts', 'Space');
    const first = rows.first();
    expect(await first.getByRole('button', { name: 'Attempts' }).getAttribute('aria-expanded')).toBe('true');
    await until('two attempts shown', async () => (await first.locator('.attempt').count()) === 2);
    for (const text of await first.locator('.attempt').allTextContents()) expect(text).toMatch(/Failed · HTTP 503 .*maintenance/);
    expect(await focusedLabel(page)).toBe('Attempts');

    // Resend: the next stop. The same webhook-id reaches the receiver a third time. The resent
    // delivery is no longer failed, so it leaves this filtered list: focus goes to the Resend of
    // the row that took its place, not to the top of the document.
    await page.keyboard.press('Tab');
    await press(page, 'Resend', 'Enter');
    await until('the resend arrives', () => received(newer) === 3);
    await until('delivered', async () => (await statusOf(newer)) === 'delivered');
    await page.getByText('Delivery of user.created queued to be sent again.').waitFor();
    await until('one failed delivery left', async () => (await rows.count()) === 1);
    expect(await focusedLabel(page)).toBe('Resend');
    expect(
      await page.evaluate(() => {
        let el = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        return el?.getAttribute('data-delivery');
      }),
    ).toBe(older);
    expect(received(older)).toBe(2);

    // Recover failed since…: back up to it, Enter opens it with focus in Since; Recover; focus back on the opener.
    await shiftTabTo(page, 'Recover failed since…');
    await press(page, 'Recover failed since…', 'Enter');
    expect(await focusedLabel(page)).toBe('Since');
    await tabTo(page, 'Recover', 15); // through the date and time's own fields
    await press(page, 'Recover', 'Enter');
    await page.getByText('1 failed delivery queued again.').waitFor();
    expect(await focusedLabel(page)).toBe('Recover failed since…');
    await until('the recovered delivery arrives', () => received(older) === 3);
    await until('recovered and delivered', async () => (await statusOf(older)) === 'delivered');
    await page.getByText('No deliveries with this status.').waitFor();

    // Send test event: further back up; the outcome is said, and focus stays on the button.
    await shiftTabTo(page, 'Send test event');
    await press(page, 'Send test event', 'Enter');
    await page.getByText(/^Delivered: your endpoint answered HTTP 200 in \d+ ms\.$/).waitFor();
    expect(await focusedLabel(page)).toBe('Send test event');
    expect((await site.hooks.deliveries.list({ environment: ENV, webhookId: hook.id })).deliveries).toHaveLength(3);

    // Settings, at the bottom: a new name (Control+A selects the old one), one more event in the dialog, Save.
    await tabTo(page, 'Name');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('Billing v2');
    await tabTo(page, 'Add event');
    await press(page, 'Add event', 'Enter');
    const dialog = page.getByRole('dialog', { name: 'Add events' });
    await dialog.waitFor();
    expect(await focusedLabel(page)).toBe('user.created User created');
    await tabTo(page, 'user.deleted User deleted');
    await press(page, 'user.deleted User deleted', 'Space');
    await tabTo(page, 'Save');
    await press(page, 'Save', 'Enter');
    await dialog.waitFor({ state: 'detached' });
    expect(await focusedLabel(page)).toBe('Add event');
    await tabTo(page, 'Save');
    await press(page, 'Save', 'Enter');
    await page.getByText('Changes saved.').waitFor();
    expect(await site.hooks.webhooks.get(hook.id, { environment: ENV })).toMatchObject({
      name: 'Billing v2',
      endpoint: `${receiver.url}/billing`,
      eventTypes: ['user.created', 'user.deleted'],
      status: 'enabled',
    });
    expect(await page.getByRole('heading', { level: 2 }).first().textContent()).toBe('Billing v2');
    expect(problems()).toEqual([]);
    await context.close();
  });
});
