import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, focusedLabel, horizontalOverflow, launch, openDashboard, tabTo } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * Everything a person does with their webhooks, in real Chromium against a real engine: the list
 * and its empty state, Add webhook by keyboard alone (the Add event dialog, chips, Save), the
 * server's refusals shown next to their field, settings, Disable / Enable, Delete with its
 * confirmation; axe-core on every view, light and dark, and at 360 px. Each test also fails on a
 * console error, a CSP violation or a request to another origin.
 */

const run = chromiumAvailable('webhooks-browser.test.ts');

/** The host's own admin page embedding the element with one script tag, themed, authorized by a bearer token. */
const ADMIN_PAGE = {
  '/admin': {
    type: 'text/html; charset=utf-8',
    body: [
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme admin</title>',
      '<link rel="stylesheet" href="/admin/theme.css">',
      '<script type="module" src="/settings/webhooks/assets/dashboard.js"></script>',
      '</head><body><header><h1>Acme admin</h1></header><main><webhooks-dashboard></webhooks-dashboard></main>',
      // A classic script runs before the module: the property is set on the element before it is upgraded.
      '<script src="/admin/token.js"></script></body></html>',
    ].join(''),
  },
  // The host's own icon, or the browser asks for /favicon.ico and logs the host's 404.
  '/favicon.ico': { type: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>' },
  '/admin/theme.css': { type: 'text/css', body: 'webhooks-dashboard { --wd-accent: rgb(107, 63, 212); --wd-radius: 2px; }' },
  '/admin/token.js': {
    type: 'text/javascript',
    body: "document.querySelector('webhooks-dashboard').headers = async () => ({ authorization: 'Bearer env-embed' });",
  },
};
let browser: Browser;
let site: Site;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

describe.runIf(run)('the dashboard in Chromium: webhooks', () => {
  beforeAll(async () => {
    [browser, site, receiver] = await Promise.all([
      launch(),
      startSite({ limits: { maxWebhooks: (environment) => (environment === 'env-capped' ? 1 : 20) } }, ADMIN_PAGE),
      startReceiver(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await receiver?.close();
  });

  const webhooksOf = (environment: string) => site.hooks.webhooks.list({ environment });

  test('the empty state, then Add webhook with the keyboard alone; the engine has exactly what was entered', async () => {
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-add' });
    await page.goto(site.url); // no trailing slash: every address on the page is absolute
    await page.getByText('No webhooks yet').waitFor();
    expect(await page.getByText(/Select Add webhook/).count()).toBe(1);

    await tabTo(page, 'Add webhook');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Add webhook' }).waitFor();
    expect(await focusedLabel(page)).toBe('Add webhook'); // the new view's heading has focus
    await tabTo(page, 'Name');
    await page.keyboard.type('CRM sync');
    await tabTo(page, 'Description');
    await page.keyboard.type('Pushes new users to the CRM');
    await tabTo(page, 'Endpoint URL');
    await page.keyboard.type(`${receiver.url}/crm`);

    // The dialog: focus moves in, Escape closes it and changes nothing, focus comes back.
    await tabTo(page, 'Add event');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Add events' });
    await dialog.waitFor();
    expect(await focusedLabel(page)).toBe('user.created User created');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await focusedLabel(page)).toBe('Add event');
    expect(await page.getByRole('list', { name: 'Chosen events' }).count()).toBe(0);

    // Grouped by resource, one checkbox per type named with its code; Space checks, Save keeps.
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    for (const group of ['User', 'Organization', 'Role', 'Permission'])
      expect(await dialog.getByRole('group', { name: group }).count()).toBe(1);
    expect(
      await dialog
        .getByRole('group', { name: 'User' })
        .getByRole('checkbox', { name: /user\.updated/ })
        .count(),
    ).toBe(1);
    await page.keyboard.press('Space');
    await tabTo(page, 'user.updated User updated');
    await page.keyboard.press('Space');
    await tabTo(page, 'organization.created Organization created');
    await page.keyboard.press('Space');
    await tabTo(page, 'Save');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    expect(await focusedLabel(page)).toBe('Add event');
    const chips = page.getByRole('list', { name: 'Chosen events' }).getByRole('listitem');
    expect(await chips.allTextContents()).toEqual(['user.created×', 'user.updated×', 'organization.created×']);

    // A chip is removed with its own button; focus stays among the chips.
    await tabTo(page, 'Remove organization.created', 12); // past the Advanced section's summary
    await page.keyboard.press('Enter');
    expect(await chips.count()).toBe(2);
    expect(await focusedLabel(page)).toBe('Remove user.updated');
    expect(await webhooksOf('env-add')).toEqual([]); // nothing is written before Save

    await tabTo(page, 'Save');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'CRM sync', level: 2 }).waitFor();
    expect(await page.getByRole('status').first().textContent()).toBe('Webhook “CRM sync” created.');
    const [created] = await webhooksOf('env-add');
    expect(created).toMatchObject({
      name: 'CRM sync',
      description: 'Pushes new users to the CRM',
      endpoint: `${receiver.url}/crm`,
      eventTypes: ['user.created', 'user.updated'],
      status: 'enabled',
    });
    expect(new URL(page.url()).hash).toBe(`#/webhooks/${created!.id}`);

    // Back to the list: name, endpoint, event types, status.
    await page.goBack();
    const card = page.getByRole('list', { name: 'Your webhooks' }).getByRole('listitem');
    await card.waitFor();
    const text = await card.textContent();
    for (const part of ['CRM sync', `${receiver.url}/crm`, 'user.created, user.updated', 'Enabled']) expect(text).toContain(part);
    expect(problems()).toEqual([]);
    await context.close();
  });

  /** Opens the Add webhook form and fills it; `events` are checked in the dialog. */
  async function fillAddForm(page: Page, fields: { name: string; endpoint: string; events: string[] }) {
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByLabel('Name').fill(fields.name);
    await page.getByLabel('Endpoint URL').fill(fields.endpoint);
    if (fields.events.length === 0) return;
    await page.getByRole('button', { name: 'Add event' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add events' });
    for (const code of fields.events) await dialog.getByRole('checkbox', { name: new RegExp(`^${code.replace('.', '\\.')} `) }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
  }

  /** The alert next to a field: inside the field's own group, and describing its control. */
  async function alertOf(page: Page, label: string): Promise<string> {
    const control = page.getByLabel(label, { exact: true });
    const field = page.locator('.field').filter({ has: control });
    const alert = field.getByRole('alert');
    await alert.waitFor();
    expect(await control.getAttribute('aria-invalid')).toBe('true');
    expect((await control.getAttribute('aria-describedby'))?.split(' ')).toContain(await alert.getAttribute('id'));
    return (await alert.textContent())!;
  }

  test('errors from the server appear next to their field in plain words, and nothing is written', async () => {
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-errors' });
    await page.goto(`${site.url}/`); // with the trailing slash too
    await fillAddForm(page, { name: 'Bad', endpoint: 'ftp://files.example.com/in', events: ['user.created'] });
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await alertOf(page, 'Endpoint URL')).toMatch(/^Enter the full address of your endpoint, starting with https:\/\//);
    expect(await focusedLabel(page)).toBe('Endpoint URL');

    await page.getByLabel('Endpoint URL').fill('http://10.1.2.3/hooks');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await alertOf(page, 'Endpoint URL')).toMatch(/private or reserved network/);

    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/ok`);
    await page.getByLabel('Name').fill('   ');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await alertOf(page, 'Name')).toMatch(/^Enter a name/);
    expect(await page.getByRole('alert').count()).toBe(1); // the endpoint's alert went with its error

    await page.getByLabel('Name').fill('No events');
    await page.getByRole('button', { name: 'Remove user.created' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    const events = page.getByRole('group', { name: 'Events' }).getByRole('alert');
    expect(await events.textContent()).toBe('Choose at least one event (at most 50).');
    expect(await webhooksOf('env-errors')).toEqual([]);
    expect(problems([400])).toEqual([]);
    await context.close();
  });

  test("the plan's webhook cap is said in words for the whole form", async () => {
    await site.hooks.webhooks.create({
      environment: 'env-capped',
      name: 'The one',
      endpoint: `${receiver.url}/one`,
      eventTypes: ['user.created'],
    });
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-capped' });
    await page.goto(site.url);
    await fillAddForm(page, { name: 'One too many', endpoint: `${receiver.url}/two`, events: ['user.deleted'] });
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.locator('form').getByRole('alert');
    expect(await alert.textContent()).toMatch(/number of webhooks your plan allows/);
    expect((await webhooksOf('env-capped')).map((w) => w.name)).toEqual(['The one']);
    expect(problems([400])).toEqual([]);
    await context.close();
  });

  test('a webhook: edit its settings with the same dialog, Disable / Enable, Delete after confirming', async () => {
    const hook = await site.hooks.webhooks.create({
      environment: 'env-edit',
      name: 'Audit',
      endpoint: `${receiver.url}/audit`,
      eventTypes: ['user.created'],
    });
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-edit' });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    await page.getByRole('heading', { name: 'Audit', level: 2 }).waitFor();

    await page.getByLabel('Name').fill('Audit trail');
    await page.getByLabel('Description').fill('Everything, for the auditors');
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/audit-v2`);
    await page.getByRole('button', { name: 'Add event' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add events' });
    expect(await dialog.getByRole('checkbox', { name: /^user\.created / }).isChecked()).toBe(true); // the saved selection
    await dialog.getByRole('checkbox', { name: /^role\.deleted / }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Audit trail');
    expect(await site.hooks.webhooks.get(hook.id, { environment: 'env-edit' })).toMatchObject({
      name: 'Audit trail',
      description: 'Everything, for the auditors',
      endpoint: `${receiver.url}/audit-v2`,
      eventTypes: ['user.created', 'role.deleted'],
    });

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect(await focusedLabel(page)).toBe('Enable'); // focus stays on the control that was used
    expect(await page.locator('.status').first().textContent()).toBe('Disabled');
    // What it says is what the engine does: emit writes no delivery for a disabled webhook.
    expect(await page.getByRole('status').first().textContent()).toBe(
      'Webhook disabled. Nothing is sent to it, and events meanwhile are not kept for it; its pending deliveries are held until you enable it.',
    );
    expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-edit' })).status).toBe('disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-edit' })).status).toBe('enabled');

    // Delete: a confirmation first; Cancel keeps it, and focus goes back to Delete.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete “Audit trail”?' });
    await confirm.waitFor();
    expect(await focusedLabel(page)).toBe('Cancel');
    await page.keyboard.press('Enter');
    await confirm.waitFor({ state: 'detached' });
    expect(await focusedLabel(page)).toBe('Delete');
    expect(await webhooksOf('env-edit')).toHaveLength(1);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await confirm.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByText('No webhooks yet').waitFor();
    expect(await page.getByRole('status').first().textContent()).toBe('Webhook “Audit trail” deleted.');
    expect(await webhooksOf('env-edit')).toEqual([]);
    expect(problems()).toEqual([]);
    await context.close();
  });

  test('the Add event choice counts as soon as the dialog is saved, and its close never pulls focus back from where the person went', async () => {
    const hook = await site.hooks.webhooks.create({
      environment: 'env-race',
      name: 'Race',
      endpoint: `${receiver.url}/race`,
      eventTypes: ['user.created'],
    });
    const { page, context, problems } = await openDashboard(browser, site, { env: 'env-race' });
    await page.goto(`${site.url}#/webhooks/${hook.id}`);
    await page.getByRole('heading', { name: 'Race', level: 2 }).waitFor();
    await page.getByRole('button', { name: 'Add event' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add events' });
    await dialog.getByRole('checkbox', { name: /^user\.deleted / }).check();
    // All in one go, as fast as keys can come: save the dialog, then at once (before the
    // dialog's 'close' event, a later task) move on to the form's Save.
    const seen = await page.evaluate(async () => {
      const root = document.querySelector('webhooks-dashboard')!.shadowRoot!;
      const chips = () => [...root.querySelectorAll('.chip .code')].map((e) => e.textContent);
      (root.querySelector('dialog form') as HTMLFormElement).requestSubmit();
      for (let i = 0; i < 10; i++) await Promise.resolve(); // microtasks only: no task has run yet
      const chosen = chips();
      const save = [...root.querySelectorAll('form.webhook-form button[type=submit]')][0] as HTMLButtonElement;
      save.focus();
      await new Promise((r) => setTimeout(r, 100)); // the 'close' event has come and gone
      return { chosen, focused: root.activeElement?.textContent, dialogs: root.querySelectorAll('dialog').length };
    });
    expect(seen).toEqual({ chosen: ['user.created', 'user.deleted'], focused: 'Save', dialogs: 0 });
    await page.keyboard.press('Enter');
    await page.getByText('Changes saved.').waitFor();
    expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-race' })).eventTypes).toEqual(['user.created', 'user.deleted']);
    expect(problems()).toEqual([]);
    await context.close();
  });

  test("embedded in the host's own page with one script tag: themed, authorized by the host's bearer token", async () => {
    const hook = await site.hooks.webhooks.create({
      environment: 'env-embed',
      name: 'Embedded',
      endpoint: `${receiver.url}/e`,
      eventTypes: ['user.created'],
    });
    const { page, context, problems } = await openDashboard(browser, site, { env: null }); // no cookie at all
    await page.goto(`${site.origin}/admin`);
    await page.getByRole('button', { name: 'Embedded' }).click();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-embed' })).status).toBe('disabled');
    expect(new URL(page.url()).hash).toBe(''); // no history attribute: the host's address is left alone
    const accent = await page
      .getByRole('button', { name: 'Add event' })
      .evaluate((button) => getComputedStyle(button.closest('form')!.querySelector('.primary')!).backgroundColor);
    expect(accent).toBe('rgb(107, 63, 212)');
    expect(problems()).toEqual([]);
    await context.close();
  });

  test('axe-core finds nothing serious on any view (1280 px light, 360 px dark); nothing scrolls sideways at 360 px', async () => {
    const hook = await site.hooks.webhooks.create({
      environment: 'env-axe',
      name: 'A webhook with a rather long name that has to wrap on a phone',
      description: 'For the a11y run',
      endpoint: `${receiver.url}/a-long-path/that/also/has/to/wrap/on/a/narrow/screen`,
      eventTypes: ['user.created', 'user.updated', 'organization.created', 'role.created', 'permission.created'],
    });
    const found: string[] = [];
    // Each scheme once and each width once: contrast depends on the scheme, layout on the width.
    for (const [width, colorScheme] of [
      [1280, 'light'],
      [360, 'dark'],
    ] as const) {
      // bypassCSP only so axe-core can inject itself; the other tests run under the real policy.
      const { page, context } = await openDashboard(browser, site, { env: 'env-axe', width, colorScheme, bypassCSP: true });
      const check = async (view: string) => {
        for (const v of await axeViolations(page)) found.push(`${width}px ${colorScheme} ${view}: ${v}`);
        const overflow = await horizontalOverflow(page);
        if (overflow > 0) found.push(`${width}px ${colorScheme} ${view}: scrolls sideways by ${overflow}px`);
      };
      await page.goto(site.url);
      await page.getByRole('list', { name: 'Your webhooks' }).waitFor();
      if (found.length === 0 && width === 1280 && colorScheme === 'light') {
        // The check can fail: an unlabelled field planted in the page is found.
        await page.evaluate(() => document.body.append(Object.assign(document.createElement('input'), { id: 'planted' })));
        expect((await axeViolations(page)).join()).toContain('label');
        await page.evaluate(() => document.getElementById('planted')!.remove());
      }
      await check('list');
      if (width === 360) {
        // The endpoint wraps between its parts, never inside one: each part (a text between two
        // break opportunities) sits on one line, and the URL does take several lines here.
        const lines = await page.evaluate(() => {
          const endpoint = document.querySelector('webhooks-dashboard')!.shadowRoot!.querySelector('.endpoint')!;
          const parts = [...endpoint.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent !== '');
          const tops = new Set<number>();
          let split = 0;
          for (const part of parts) {
            const range = document.createRange();
            range.selectNodeContents(part);
            const rects = [...range.getClientRects()].filter((r) => r.width > 0);
            if (new Set(rects.map((r) => Math.round(r.top))).size > 1) split++;
            for (const r of rects) tops.add(Math.round(r.top));
          }
          return { split, lines: tops.size };
        });
        expect(lines.split).toBe(0);
        expect(lines.lines).toBeGreaterThan(1);
      }
      await page.getByRole('button', { name: 'Add webhook' }).click();
      await page.getByRole('button', { name: 'Add event' }).click();
      await page.getByRole('dialog').waitFor();
      await check('add form with the dialog open');
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('alert').first().waitFor();
      await check('add form with errors');
      await page.goto(`${site.url}#/webhooks/${hook.id}`);
      await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
      await page.locator('.log-list:not([aria-busy])').waitFor();
      await check('webhook');
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('alertdialog').waitFor();
      await check('delete confirmation');
      await context.close();
    }
    const empty = await openDashboard(browser, site, { env: 'env-axe-empty', bypassCSP: true });
    await empty.page.goto(site.url);
    await empty.page.getByText('No webhooks yet').waitFor();
    for (const v of await axeViolations(empty.page)) found.push(`empty list: ${v}`);
    await empty.context.close();
    expect(found).toEqual([]);
  });
});
