import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chromiumAvailable, launch, openDashboard } from '../dashboard/browser.js';
import { type Mount, startAuth } from './harness.js';

/**
 * The dashboard through every mount better-auth documents, in Chromium: Hono's and Next.js's
 * forward only GET and POST, so the page's Save (PATCH) and Delete (DELETE) go as a POST naming
 * its method (the dashboard's handler honours that only on a same-site JSON request).
 */
const run = chromiumAvailable('test/better-auth/mounts-browser.test.ts');
const MOUNTS: Mount[] = ['hono', 'next', 'express', 'handler'];

describe.skipIf(!run).each(MOUNTS)('the dashboard through better-auth mounted with %s', (mount) => {
  let browser: Browser;
  let s: Awaited<ReturnType<typeof startAuth>>;
  beforeAll(async () => {
    browser = await launch();
    s = await startAuth('sqlite', {}, `bauth_mount_${mount}`, {}, mount);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test('sign in, edit a webhook and save it, disable it, delete it', async () => {
    const webhook = await s.hooks.webhooks.create({
      name: 'Audit',
      endpoint: 'https://receiver.example.com/audit',
      eventTypes: ['user.created'],
    });
    const { page, context, problems } = await openDashboard(browser, { origin: s.origin }, { env: null });
    // Signed up through the browser context's own request client: better-auth's cookie lands in
    // the browser. Then made an admin (the harness's manage lets admins in).
    const signUp = await context.request.post(`${s.base}/sign-up/email`, {
      headers: { origin: s.origin },
      data: { email: 'admin@example.com', password: 'correct horse battery staple', name: 'Admin' },
    });
    const status = signUp.status();
    expect(status).toBe(200);
    await s.sql(`update "user" set role = 'admin' where email = 'admin@example.com'`);

    await page.goto(`${s.base}/webhooks/dashboard#/webhooks/${webhook.id}`);
    await page.getByRole('heading', { name: 'Audit', level: 2 }).waitFor();
    await page.getByLabel('Name').fill('Audit trail');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect((await s.hooks.webhooks.get(webhook.id)).name).toBe('Audit trail');

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await s.hooks.webhooks.get(webhook.id)).status).toBe('disabled');

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByText('No webhooks yet').waitFor();
    expect(await s.hooks.webhooks.list()).toEqual([]);
    expect(problems()).toEqual([]);
    await context.close();
  });
});
