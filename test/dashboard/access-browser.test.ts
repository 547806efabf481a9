import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// @ts-expect-error: a .js asset, typed only under checkJs (tsconfig.dashboard.json)
import { verifySnippets as untyped } from '../../src/dashboard/assets/snippets.js';
import { toNodeHandler } from '../../src/http/node.js';
import { type EventTypeDefinition, systemClock, type WebhooksOptions } from '../../src/index.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { axeViolations, chromiumAvailable, focusedLabel, horizontalOverflow, launch, openDashboard, tabTo } from './browser.js';
import { cookieAuth, PREFIX } from './site.js';

/**
 * Issue 38's views in real Chromium against the engine's own `hooks.dashboard` (links need it):
 * the event catalog (every built-in and a host type), How to verify (the snippets the page shows
 * are the ones test/dashboard/verify-snippets.test.ts runs), link access (once, read-only), a
 * theme and a second locale; axe in both colour schemes, 360 px, the keyboard alone.
 */

const run = chromiumAvailable('access-browser.test.ts');
const verifySnippets = untyped as (o: { issuer: string; jwksUrl: string; format?: string }) => Array<{ id: string; code: string }>;
const HOST_TYPE: EventTypeDefinition = {
  code: 'billing.invoice_paid',
  name: 'An invoice was paid',
  origin: 'acme',
  schema: { type: 'object', required: ['invoice_id'], properties: { invoice_id: { type: 'string' } } },
};

/** The engine's dashboard at PREFIX on node:http, its url known to the engine (for links). */
const SECRETS_KEY = randomBytes(32).toString('base64');

async function startHost(options: Partial<WebhooksOptions> = {}) {
  let handle: (request: Request) => Promise<Response> = async () => new Response('starting', { status: 503 });
  const server = http.createServer((req, res) => void toNodeHandler((request) => handle(request))(req, res));
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const engine = await makeEngine({
    clock: systemClock,
    authorize: cookieAuth,
    eventTypes: [HOST_TYPE],
    secretsKey: SECRETS_KEY,
    ...options,
    dashboard: { url: `${origin}${PREFIX}`, ...options.dashboard },
  });
  handle = (request) =>
    new URL(request.url).pathname.startsWith(PREFIX) ? engine.hooks.dashboard(request) : Promise.resolve(new Response('', { status: 404 }));
  return {
    hooks: engine.hooks,
    origin,
    url: `${origin}${PREFIX}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await engine.close();
    },
  };
}

let browser: Browser;
let host: Awaited<ReturnType<typeof startHost>>;

describe.runIf(run)('issue 38 views in Chromium', () => {
  beforeAll(async () => {
    [browser, host] = await Promise.all([launch(), startHost()]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  const catalogOpen = async (page: Page) => {
    await page.goto(host.url);
    await page.getByRole('button', { name: 'Event catalog' }).click();
    await page.getByRole('heading', { name: 'Event catalog' }).waitFor();
  };

  test('the catalog lists every built-in and the host’s type, with schema and example; axe-clean light and dark; 360 px', async () => {
    const codes = host.hooks.eventTypes.list().map((t) => t.code);
    expect(codes).toContain(HOST_TYPE.code);
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 360]) {
        const { page, context, problems } = await openDashboard(browser, host, { colorScheme, width, bypassCSP: true });
        await catalogOpen(page);
        expect(new URL(page.url()).hash).toBe('#/catalog');
        const entries = page.getByRole('article');
        expect(await entries.count()).toBe(codes.length);
        for (const code of codes) await expect.poll(() => page.getByRole('heading', { name: code, exact: true }).count()).toBe(1);
        const invoice = page.getByRole('article', { name: HOST_TYPE.code });
        await expect.poll(() => invoice.getByText('Defined by acme').count()).toBe(1);
        await invoice.getByText('JSON Schema of data').click();
        await invoice.getByText('Example data').click();
        const blocks = await invoice.locator('pre').allTextContents();
        expect(JSON.parse(blocks[0]!)).toEqual(HOST_TYPE.schema);
        expect(JSON.parse(blocks[1]!)).toMatchObject({ invoice_id: expect.any(String) });
        expect(await axeViolations(page)).toEqual([]);
        expect(await horizontalOverflow(page)).toBe(0);
        expect(problems()).toEqual([]);
        await context.close();
      }
    }
  }, 120_000);

  test('the catalog by keyboard alone: the filter narrows it, a schema opens with Enter', async () => {
    const { page, context } = await openDashboard(browser, host);
    await page.goto(host.url);
    await page.getByRole('list', { name: 'Your webhooks' }).or(page.getByText('No webhooks yet')).first().waitFor();
    await tabTo(page, 'Event catalog');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Event catalog' }).waitFor();
    await tabTo(page, 'Filter events');
    await page.keyboard.type('invoice');
    await expect.poll(() => page.getByRole('article').filter({ visible: true }).count()).toBe(1);
    await tabTo(page, 'JSON Schema of data');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('article', { name: HOST_TYPE.code }).locator('details[open]').count()).toBe(1);
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('JSON Schema of data example');
    await page.getByRole('searchbox').fill('nothing-like-this');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'No event type matches' }).count()).toBe(1);
    await context.close();
  });

  test('the Add event dialog links to the catalog', async () => {
    const { page, context } = await openDashboard(browser, host);
    await page.goto(`${host.url}#/new`);
    await page.getByRole('button', { name: 'Add event' }).click();
    const link = page.getByRole('dialog').getByRole('link', { name: /event catalog/ });
    expect(await link.getAttribute('href')).toBe('#/catalog');
    await context.close();
  });

  test('How to verify: the JWKS URL, the issuer and the snippets the test runs, as shown; axe-clean light and dark', async () => {
    const webhook = await host.hooks.webhooks.create({
      environment: 'env-a',
      name: 'Verify me',
      endpoint: 'https://crm.example.com/hooks',
      eventTypes: ['user.created'],
    });
    const { issuer, jwksUrl } = host.hooks.verification.get({ environment: 'env-a' });
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, context, problems } = await openDashboard(browser, host, { colorScheme, bypassCSP: true });
      await page.goto(`${host.url}#/webhooks/${webhook.id}`);
      const panel = page.getByRole('region', { name: 'How to verify' });
      await panel.getByText(jwksUrl, { exact: true }).waitFor();
      await panel.getByText(issuer, { exact: true }).waitFor();
      await panel.getByText('Python (PyJWT)').click();
      await panel.getByText('Node.js (identity-webhooks/receiver)').click();
      const shown = await panel.locator('details[open] pre').allTextContents();
      const expected = verifySnippets({ issuer, jwksUrl });
      expect(shown.sort()).toEqual(
        [expected.find((s) => s.id === 'node-receiver')!.code, expected.find((s) => s.id === 'python-pyjwt')!.code].sort(),
      );
      expect(await axeViolations(page)).toEqual([]);
      expect(problems()).toEqual([]);
      await context.close();
    }
  });

  test('a read link works once, lands on next, hides every write; a manage link shows them', async () => {
    const hook = await host.hooks.webhooks.create({
      environment: 'env-linked',
      name: 'Linked',
      endpoint: 'https://crm.example.com/hooks',
      eventTypes: ['user.created'],
    });
    // a delivery in its log, so the log's row actions are there to be hidden
    await host.hooks.emit({
      environment: 'env-linked',
      type: 'user.created',
      source: 'api',
      data: userData(),
    });
    const link = await host.hooks.dashboardLink({ environment: 'env-linked', capabilities: ['read'], next: `#/webhooks/${hook.id}` });
    const { page, context, problems } = await openDashboard(browser, host, { env: null });
    await page.goto(link);
    await page.getByRole('heading', { name: 'Linked' }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/webhooks/${hook.id}`);
    await page.getByText('You can look but not change anything here.').waitFor();
    await page.getByRole('region', { name: 'Deliveries' }).locator('tbody.delivery').first().waitFor();
    // reading stays: the message and the attempts
    expect(await page.getByRole('button', { name: 'View message' }).count()).toBe(1);
    for (const name of ['Disable', 'Delete', 'Send test event', 'Recover failed since…', 'Resend', 'Send waiting now']) {
      expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    }
    await page.getByRole('region', { name: 'How to verify' }).waitFor();
    await page.getByRole('button', { name: 'All webhooks' }).click();
    await page.getByRole('button', { name: 'Linked' }).waitFor();
    expect(await page.getByRole('button', { name: 'Add webhook' }).count()).toBe(0);
    // Once only: the same link again says what to do.
    const again = await page.goto(link);
    expect(again?.status()).toBe(403);
    await page.getByText('Go back to where you found it and ask for a new one.').waitFor();
    expect(problems([403])).toEqual([]);
    await context.close();

    const manage = await openDashboard(browser, host, { env: null });
    await manage.page.goto(await host.hooks.dashboardLink({ environment: 'env-linked' }));
    await manage.page.getByRole('button', { name: 'Add webhook' }).waitFor();
    await manage.context.close();
  });

  test('a session from a link that ended says so and what to do, not "sign in again"', async () => {
    await host.hooks.webhooks.create({
      environment: 'env-ended',
      name: 'Ended',
      endpoint: 'https://crm.example.com/hooks',
      eventTypes: ['user.created'],
    });
    const { page, context, problems } = await openDashboard(browser, host, { env: null });
    await page.goto(await host.hooks.dashboardLink({ environment: 'env-ended' }));
    await page.getByRole('button', { name: 'Ended' }).waitFor();
    await context.clearCookies(); // the session is gone, as when it expires
    await page.getByRole('button', { name: 'Ended' }).click();
    await page.getByText(/Your session from a dashboard link has ended\. Open the dashboard again from where you found the link/).waitFor();
    expect(await page.getByText(/Sign in again/).count()).toBe(0);
    expect(problems([403])).toEqual([]);
    await context.close();
  });

  test("a read link shows a Standard Webhooks webhook without its secret's Reveal and Rotate; a manage link has them", async () => {
    const hook = await host.hooks.webhooks.create({
      environment: 'env-secret',
      name: 'Signed',
      endpoint: 'https://crm.example.com/hooks',
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    for (const [capabilities, shown] of [
      [['read'], 0],
      [['read', 'manage'], 1],
    ] as const) {
      const { page, context, problems } = await openDashboard(browser, host, { env: null });
      await page.goto(
        await host.hooks.dashboardLink({ environment: 'env-secret', capabilities: [...capabilities], next: `#/webhooks/${hook.id}` }),
      );
      await page.getByRole('heading', { name: 'Signed' }).waitFor();
      await page.getByRole('region', { name: 'How to verify' }).waitFor();
      for (const name of ['Reveal', 'Rotate'])
        expect(await page.getByRole('button', { name, exact: true }).count(), `${name} (${capabilities})`).toBe(shown);
      expect(await page.evaluate(() => document.querySelector('webhooks-dashboard')!.shadowRoot!.textContent)).not.toMatch(
        /whsec_[A-Za-z0-9+/=]{20,}/,
      );
      expect(problems()).toEqual([]);
      await context.close();
    }
  });

  test('a theme (name, an accent readable on dark, dark forced) and French from Accept-Language change what is rendered; axe-clean', async () => {
    const themed = await startHost({ dashboard: { theme: { name: 'Acme', accent: '#b69cff', mode: 'dark' } } });
    try {
      const { page, context, problems } = await openDashboard(browser, themed, { colorScheme: 'light', bypassCSP: true });
      await context.setExtraHTTPHeaders({ 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' });
      await page.goto(themed.url);
      expect(await page.title()).toBe('Webhooks · Acme');
      await page.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      await page.getByRole('button', { name: 'Catalogue des événements' }).click();
      await page.getByRole('heading', { name: 'Catalogue des événements' }).waitFor();
      const look = await page.evaluate(() => {
        const element = document.querySelector('webhooks-dashboard')!;
        const link = element.shadowRoot!.querySelector('button.link')!;
        return {
          accent: getComputedStyle(element).getPropertyValue('--wd-accent').trim(),
          background: getComputedStyle(element).backgroundColor,
          link: getComputedStyle(link).color,
        };
      });
      expect(look.accent).toBe('#b69cff');
      expect(look.background).toBe('rgb(21, 23, 27)'); // dark, though the system says light
      expect(look.link).toBe('rgb(182, 156, 255)');
      expect(await axeViolations(page)).toEqual([]);
      expect(problems()).toEqual([]);
      await context.close();
    } finally {
      await themed.close();
    }
  });
});
