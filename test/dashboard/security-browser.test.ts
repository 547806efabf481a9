import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { until } from '../helpers/cleanup.js';
import { chromiumAvailable, launch, openDashboard } from './browser.js';
import { PREFIX, type Site, startOtherOrigin, startSite } from './site.js';

/**
 * What the dashboard must refuse, in real Chromium with a real cookie session: the page without
 * credentials, one environment's webhooks from another, and writes from pages on other origins
 * (a sibling port on 127.0.0.1, which the browser calls same-site and sends the cookie to, and
 * 127.0.0.2, another site), by fetch and by HTML form.
 */

const run = chromiumAvailable('security-browser.test.ts');
let browser: Browser;
let site: Site;

describe.runIf(run)('the dashboard in Chromium: what it refuses', () => {
  beforeAll(async () => {
    [browser, site] = await Promise.all([launch(), startSite()]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  const create = (environment: string, name: string) =>
    site.hooks.webhooks.create({ environment, name, endpoint: 'https://hooks.example.com/in', eventTypes: ['user.created'] });

  test('without credentials: 403, no page, no names, no ids, nothing else loaded', async () => {
    const hook = await create('env-secret', 'Secret CRM');
    const { page, context, problems } = await openDashboard(browser, site, { env: null });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const response = await page.goto(site.url);
    expect(response!.status()).toBe(403);
    const body = await response!.text();
    expect(body).not.toMatch(/Secret CRM|webhooks-dashboard|<script/);
    expect(body).not.toContain(hook.id);
    expect(requests).toEqual([site.url]);
    // 404: a plain-text page names no icon, so the browser may ask the host for /favicon.ico.
    expect(problems([403, 404])).toEqual([]);
    await context.close();
  });

  test('two environments see nothing of each other, not even by id', async () => {
    const alpha = await create('env-iso-a', 'Alpha');
    const bravo = await create('env-iso-b', 'Bravo');
    for (const [env, own, other] of [
      ['env-iso-a', alpha, bravo],
      ['env-iso-b', bravo, alpha],
    ] as const) {
      const { page, context, problems } = await openDashboard(browser, site, { env });
      await page.goto(site.url);
      const names = page.getByRole('list', { name: 'Your webhooks' }).getByRole('heading');
      await names.first().waitFor();
      expect(await names.allTextContents()).toEqual([own.name]);

      await page.goto(`${site.url}#/webhooks/${other.id}`);
      expect(await page.getByRole('alert').textContent()).toBe('This webhook no longer exists. It may have been deleted.');
      expect(await page.locator('webhooks-dashboard').evaluate((el) => el.shadowRoot!.textContent)).not.toContain(other.name);

      // The page's own session, used directly against the other environment's id: 404, no change.
      const statuses = await page.evaluate(
        async ({ api, id }) => {
          const json = { 'content-type': 'application/json' };
          const answers = await Promise.all([
            fetch(`${api}/webhooks/${id}`),
            fetch(`${api}/webhooks/${id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ name: 'Taken' }) }),
            fetch(`${api}/webhooks/${id}/disable`, { method: 'POST', headers: json, body: '{}' }),
            fetch(`${api}/webhooks/${id}`, { method: 'DELETE', headers: json }),
          ]);
          return answers.map((a) => a.status);
        },
        { api: `${PREFIX}/api/v1`, id: other.id },
      );
      expect(statuses).toEqual([404, 404, 404, 404]);
      expect(problems([404])).toEqual([]);
      await context.close();
    }
    expect(await site.hooks.webhooks.get(alpha.id, { environment: 'env-iso-a' })).toEqual(alpha);
    expect(await site.hooks.webhooks.get(bravo.id, { environment: 'env-iso-b' })).toEqual(bravo);
  });

  test('writes from another origin, by fetch and by form post, change nothing; the same write from the page itself works', async () => {
    const target = await create('env-a', 'Target');
    const api = `${site.origin}${PREFIX}/api/v1`;
    const { page, context } = await openDashboard(browser, site, { env: 'env-a' });

    for (const host of ['127.0.0.1', '127.0.0.2']) {
      const attacker = await startOtherOrigin(
        host,
        '<!doctype html><title>a page elsewhere</title><iframe name="one"></iframe><iframe name="two"></iframe>',
      );
      const before = site.served.length;
      await page.goto(attacker.url);
      // Simple requests (no preflight) go out with the cookie: the dashboard must refuse them itself.
      await page.evaluate(
        async ({ api, id }) => {
          const options = { mode: 'no-cors', credentials: 'include' } as const;
          const body = JSON.stringify({ name: 'evil', endpoint: 'https://evil.example.net/x', event_types: ['user.created'] });
          await Promise.allSettled([
            fetch(`${api}/webhooks`, { ...options, method: 'POST', headers: { 'content-type': 'text/plain' }, body }),
            fetch(`${api}/webhooks/${id}/disable`, { ...options, method: 'POST' }),
            // These need a preflight, which is refused, so they are never sent.
            fetch(`${api}/webhooks/${id}`, { method: 'DELETE', credentials: 'include' }),
            fetch(`${api}/webhooks/${id}`, {
              method: 'PATCH',
              credentials: 'include',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ endpoint: 'https://evil.example.net/x' }),
            }),
          ]);
        },
        { api, id: target.id },
      );
      // HTML forms: an empty-bodied form post to a bodiless action, and JSON smuggled in text/plain.
      await page.evaluate(
        ({ api, id }) => {
          // Each into its own frame: a second navigation of one frame would cancel the first.
          const post = (target: string, action: string, enctype: string, fields: Record<string, string>) => {
            const form = Object.assign(document.createElement('form'), { method: 'post', action, enctype, target });
            for (const [name, value] of Object.entries(fields))
              form.append(Object.assign(document.createElement('input'), { name, value }));
            document.body.append(form);
            form.submit();
          };
          post('one', `${api}/webhooks/${id}/disable`, 'application/x-www-form-urlencoded', {});
          post('two', `${api}/webhooks`, 'text/plain', {
            '{"name":"evil","endpoint":"https://evil.example.net/x","event_types":["user.created"],"x":"': '"}',
          });
        },
        { api, id: target.id },
      );
      await until(
        'the form posts reach the server',
        () => site.served.slice(before).filter((s) => s.method === 'POST').length >= 4,
        5_000,
      ).catch((error) => {
        throw new Error(`${error.message}; served: ${JSON.stringify(site.served.slice(before))}`);
      });
      const answered = site.served.slice(before);
      expect(answered.length).toBeGreaterThanOrEqual(5); // 4 POSTs and at least one refused preflight
      for (const s of answered) expect(s, `${host}: ${s.method} ${s.path}`).toMatchObject({ status: 403, code: 'CROSS_SITE_REQUEST' });
      expect(answered.filter((s) => s.method === 'OPTIONS').length).toBeGreaterThanOrEqual(1);
      await attacker.close();
    }
    expect(await site.hooks.webhooks.list({ environment: 'env-a' })).toEqual([target]);

    // Control: the session and the request are good; only where it came from was wrong.
    await page.goto(site.url);
    const status = await page.evaluate(
      async ({ api, id }) =>
        (await fetch(`${api}/webhooks/${id}/disable`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
          .status,
      { api: `${PREFIX}/api/v1`, id: target.id },
    );
    expect(status).toBe(200);
    expect((await site.hooks.webhooks.get(target.id, { environment: 'env-a' })).status).toBe('disabled');
    await context.close();
  });
});
