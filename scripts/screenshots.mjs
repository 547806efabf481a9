// Screenshots of every view of the dashboard, for a person to look at (they assert nothing):
//   npm run screenshots        (builds first; Chromium at $CHROMIUM_PATH or /usr/bin/chromium)
// writes .tmp/dashboard/*.png (the list, the add form with its dialog open and with an error, a
// webhook with its log, the event catalog; 1280 and 360 px; light and dark), docs/dashboard.png, the
// README's, and docs/dashboard-catalog-{light,dark}.png (docs/dashboard.md).
// It runs the built package (dist/) as a host would: a SQLite file, the dashboard on node:http,
// a cookie session, and a receiver on 127.0.0.1 that fails some deliveries so the log shows both.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { sqliteStore } from '../dist/adapters/sqlite/index.js';
import { createDashboard } from '../dist/src/dashboard/index.js';
import { toNodeHandler } from '../dist/src/http/index.js';
import { createWebhooks, generateSigningKey } from '../dist/src/index.js';

const OUT = '.tmp/dashboard';
const README_IMAGE = 'docs/dashboard.png';
const ENV = 'env-acme';
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  console.error(`screenshots: no Chromium at ${executablePath} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  process.exit(1);
}

const cleanups = [];
try {
  await main();
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}

async function main() {
  mkdirSync(OUT, { recursive: true });
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const dir = mkdtempSync(join(tmpdir(), 'iw-screenshots-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));

  const authorize = (request) => {
    const m = /(?:^|;\s*)session=(env-[a-z0-9-]+)/.exec(request.headers.get('cookie') ?? '');
    return m ? { environment: m[1] } : null;
  };
  const hooks = createWebhooks({
    store: sqliteStore({ filename: join(dir, 'screenshots.db') }),
    keys: [await generateSigningKey()],
    issuer: 'https://auth.example.com',
    authorize,
    allowHosts: ['127.0.0.1'],
    delivery: { timeoutMs: 2000, pollIntervalMs: 100 },
    backoff: { schedule: [150], jitter: 0 },
  });
  cleanups.push(() => hooks.close());
  await hooks.start();
  const dashboard = createDashboard({ api: hooks.handler, authorize, onError: (m, e) => console.error(m, e) });
  const prefix = '/settings/webhooks';
  const node = toNodeHandler((request) =>
    new URL(request.url).pathname.startsWith(prefix) ? dashboard(request) : Promise.resolve(new Response('not here', { status: 404 })),
  );
  const server = http.createServer((req, res) => void node(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const url = `${origin}${prefix}`;

  const crm = await hooks.webhooks.create({
    environment: ENV,
    name: 'CRM sync',
    description: 'New and changed users into the CRM',
    endpoint: `${receiver.url}/crm/identity-events`,
    eventTypes: ['user.created', 'user.updated', 'user.deleted'],
  });
  await hooks.webhooks.create({
    environment: ENV,
    name: 'Billing seats',
    endpoint: `${receiver.url}/billing/seats`,
    eventTypes: ['organization.created', 'organization.updated', 'user.created', 'user.deleted', 'role.created', 'permission.created'],
  });
  const legacy = await hooks.webhooks.create({
    environment: ENV,
    name: 'Legacy ERP',
    endpoint: 'https://erp.example.com/hooks',
    eventTypes: ['user.created'],
  });
  await hooks.webhooks.disable(legacy.id, { environment: ENV });
  for (let i = 0; i < 8; i++)
    await hooks.emit({ environment: ENV, type: i % 3 ? 'user.updated' : 'user.created', source: 'api', data: user() });
  await until('the deliveries settle', () => receiver.count >= 11);
  await until('a delivery to the CRM failed for good', async () => {
    const { deliveries } = await hooks.deliveries.list({ environment: ENV, webhookId: crm.id, status: 'failed' });
    return deliveries.length > 0;
  });

  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  cleanups.push(() => browser.close());
  for (const width of [1280, 360]) {
    for (const colorScheme of ['light', 'dark']) {
      const name = (view) => `${OUT}/${view}-${width}-${colorScheme}.png`;
      const context = await browser.newContext({
        viewport: { width, height: width < 600 ? 780 : 900 },
        colorScheme,
        reducedMotion: 'reduce',
      });
      await context.addCookies([{ name: 'session', value: ENV, url: origin, sameSite: 'Lax', httpOnly: true }]);
      const page = await context.newPage();
      page.setDefaultTimeout(5_000);
      await page.goto(url);
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
      await page.goto(`${url}#/webhooks/${crm.id}`);
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
        await page.evaluate(() => window.scrollTo(0, 0)); // the webhook's head, its health, then its log
        await page.screenshot({ path: README_IMAGE, fullPage: false });
      }
      await page.goto(`${url}#/catalog`);
      await page.getByRole('heading', { name: 'Event catalog' }).waitFor();
      const created = page.getByRole('article', { name: 'user.created' });
      await created.getByText('Example data').click();
      await page.mouse.move(0, 0);
      await page.screenshot({ path: name('catalog'), fullPage: true });
      if (width === 1280) {
        await page.setViewportSize({ width: 1100, height: 1000 });
        await page.screenshot({ path: `docs/dashboard-catalog-${colorScheme}.png`, fullPage: false });
      }
      await context.close();
    }
  }
  console.log(`screenshots: ${OUT}/*.png and ${README_IMAGE}`);
}

/**
 * Answers 200, except every fourth request and every request for the third delivery to the CRM
 * (so that one fails for good and the log always holds a failed delivery with its attempts).
 */
async function startReceiver() {
  let received = 0;
  let count = 0;
  let crmRequests = 0;
  let doomed;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      const id = String(req.headers['webhook-id']);
      if (req.url?.startsWith('/crm/') && doomed === undefined && ++crmRequests === 3) doomed = id;
      const fail = id === doomed || ++count % 4 === 0;
      res.writeHead(fail ? 503 : 200, { 'content-type': 'text/plain' });
      res.end(fail ? 'upstream busy, try later' : 'ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    get count() {
      return received;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Polls `check` every 50 ms for up to 15 s. */
async function until(what, check) {
  const end = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`screenshots: gave up waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function user() {
  return {
    user: {
      id: 'kp_0123456789abcdef',
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: null,
      username: null,
      is_password_reset_requested: false,
      is_suspended: false,
      organizations: [{ code: 'org_1234', permissions: null, roles: null }],
    },
  };
}
