import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { Webhook as StandardVerifier } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { userData } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/http.js';
import { axeViolations, chromiumAvailable, launch, openDashboard } from './browser.js';
import { type Site, startSite } from './site.js';

/**
 * The webhook form's Advanced section in real Chromium against a real engine. Endpoint options:
 * headers added and removed row by row, a credential value shown masked once saved and kept or
 * replaced, the timeout and the rate limit. Signing and authentication: the Standard Webhooks
 * format with the secret revealed and rotated, OAuth2 client credentials whose secret is
 * write-only and kept when left empty. The server's refusals next to their field, in the words of
 * words.js; no secret anywhere in the page's HTML; axe-core on it.
 */

const run = chromiumAvailable('advanced-browser.test.ts');
const SECRET = 'Bearer dash-s3cr3t-9b1e';
const CLIENT_SECRET = 'cs-dash-Sup3r-7c2d';
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
  test('signing and authentication: Standard Webhooks with its secret revealed and rotated; an OAuth2 client secret write-only and kept', async () => {
    // A real token server: a token only for client-1 with its secret.
    const issued: string[] = [];
    const tokenServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const [id, secret] = Buffer.from(String(req.headers.authorization).replace(/^Basic /, ''), 'base64')
          .toString()
          .split(':');
        const ok =
          new URLSearchParams(body).get('grant_type') === 'client_credentials' &&
          id === 'client-1' &&
          decodeURIComponent(secret ?? '') === CLIENT_SECRET;
        const token = `tok_${randomBytes(6).toString('hex')}`;
        if (ok) issued.push(token);
        res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(ok ? JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }) : '{"error":"invalid_client"}');
      });
    });
    await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
    const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/oauth/token`;
    try {
      const hook = await site.hooks.webhooks.create({
        environment: 'env-sig',
        name: 'Mirror',
        endpoint: `${receiver.url}/mirror`,
        eventTypes: ['user.created'],
      });
      const { page, context, problems } = await openDashboard(browser, site, { env: 'env-sig' });
      await page.goto(`${site.url}#/webhooks/${hook.id}`);
      await page.getByRole('heading', { name: 'Mirror', level: 2 }).waitFor();
      const advanced = page.locator('details.advanced');
      expect(await advanced.getAttribute('open')).toBeNull();
      // One Advanced section, both groups in it.
      expect(await advanced.count()).toBe(1);
      await page.getByText('Advanced', { exact: true }).click();
      expect(await page.getByRole('group', { name: 'Signing and authentication' }).isVisible()).toBe(true);
      // Only the fields of the chosen authentication show.
      expect(await page.getByLabel('Token URL').isVisible()).toBe(false);
      await page.getByLabel('Endpoint authentication').selectOption('oauth2_client_credentials');
      expect(await page.getByLabel('Token URL').isVisible()).toBe(true);
      expect(await page.getByLabel('Client certificate (PEM)').isVisible()).toBe(false);

      // Refused: a token URL that is not one; next to the authentication field.
      await page.getByLabel('Token URL').fill('not a url');
      await page.getByLabel('Client ID').fill('client-1');
      await page.getByLabel('Client secret').fill(CLIENT_SECRET);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText(/Check the endpoint authentication/).waitFor();
      expect(await page.getByLabel('Endpoint authentication').getAttribute('aria-invalid')).toBe('true');
      expect((await site.hooks.webhooks.get(hook.id, { environment: 'env-sig' })).auth).toBeNull();

      await page.getByLabel('Token URL').fill(tokenUrl);
      await page.getByLabel('Signing').selectOption('standard-webhooks');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Changes saved.').waitFor();
      const saved = await site.hooks.webhooks.get(hook.id, { environment: 'env-sig' });
      expect(saved).toMatchObject({
        format: 'standard-webhooks',
        auth: { type: 'oauth2_client_credentials', tokenUrl, clientId: 'client-1' },
      });
      expect(JSON.stringify(saved)).not.toContain(CLIENT_SECRET);

      // Read again: open, the client secret empty (kept), nowhere in the page; the secret panel shows.
      await page.reload();
      await page.getByRole('heading', { name: 'Mirror', level: 2 }).waitFor();
      expect(await advanced.getAttribute('open')).not.toBeNull();
      expect(await page.getByLabel('Client secret').inputValue()).toBe('');
      expect(await page.evaluate(() => document.querySelector('webhooks-dashboard')!.shadowRoot!.innerHTML)).not.toContain(CLIENT_SECRET);
      await page.getByRole('button', { name: 'Reveal' }).click();
      const secret = (await site.hooks.webhooks.secret(hook.id, { environment: 'env-sig' })).secret;
      await page.getByText(secret, { exact: true }).waitFor();
      await page.screenshot({ path: '/tmp/opt36shots/signing.png', fullPage: true });

      // Saved again untouched: the client secret is kept, so the endpoint gets a token; the
      // delivery is signed with the revealed secret, as the reference verifier checks it.
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Changes saved.').waitFor();
      const before = receiver.requests.length;
      await site.hooks.emit({ environment: 'env-sig', type: 'user.created', source: 'api', data: userData() });
      await receiver.waitFor(before + 1);
      const got = receiver.requests.find((r) => r.path === '/mirror')!;
      expect(issued.map((t) => `Bearer ${t}`)).toContain(got.headers.authorization);
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      expect(new StandardVerifier(secret).verify(got.body, headers)).toMatchObject({ type: 'user.created' });

      // Rotate, confirmed: a new secret is shown, and it is the one the engine now signs with.
      await page.getByRole('button', { name: 'Rotate' }).click();
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByText('Signing secret rotated.', { exact: false }).waitFor();
      const rotated = (await site.hooks.webhooks.secret(hook.id, { environment: 'env-sig' })).secret;
      expect(rotated).not.toBe(secret);
      await page.getByText(rotated, { exact: true }).waitFor();
      expect(problems([400])).toEqual([]);
      await context.close();

      const axe = await openDashboard(browser, site, { env: 'env-sig', bypassCSP: true });
      await axe.page.goto(`${site.url}#/webhooks/${hook.id}`);
      await axe.page.getByRole('heading', { name: 'Mirror', level: 2 }).waitFor();
      expect(await axeViolations(axe.page)).toEqual([]);
      await axe.context.close();
    } finally {
      tokenServer.closeAllConnections();
      await new Promise<void>((r) => tokenServer.close(() => r()));
    }
  });
});
