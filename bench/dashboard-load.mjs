// The dashboard's first load: from navigation start to the rendered list of 20 webhooks, in real
// Chromium over real HTTP on 127.0.0.1, against the built package on a SQLite file.
// Run: npm run build && node bench/dashboard-load.mjs [--runs=15]
// Each "cold" load is a fresh browser context (empty cache, new connection); each "warm" load is
// a reload in the same context (the hashed assets come from the cache, as for a returning user).
// The time is read in the page: the element's 'webhooks-dashboard:render' performance mark.

import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhooks, generateSigningKey } from 'identity-webhooks';
import { toNodeHandler } from 'identity-webhooks/http';
import { sqliteStore } from 'identity-webhooks/sqlite';
import { chromium } from 'playwright-core';
import { loadAssets } from '../dist/src/dashboard/assets.js';
import { createDashboard } from '../dist/src/dashboard/index.js';
import { benchArgs, numberArg } from './lib/args.mjs';

const values = benchArgs(import.meta.url, {
  runs: { type: 'string' },
});
const runs = numberArg('runs', values.runs, 15, { min: 1, integer: true });
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  console.error(`dashboard-load: no Chromium at ${executablePath} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'iw-dashboard-bench-'));
const authorize = (request) => (/(?:^|;\s*)session=bench/.test(request.headers.get('cookie') ?? '') ? { environment: 'bench' } : null);
const hooks = createWebhooks({
  store: sqliteStore({ filename: join(dir, 'bench.db') }),
  keys: [await generateSigningKey()],
  issuer: 'https://auth.example.com',
  authorize,
});
const types = hooks.eventTypes.list().map((t) => t.code);
for (let i = 0; i < 20; i++) {
  await hooks.webhooks.create({
    environment: 'bench',
    name: `CRM system ${i + 1}`,
    description: 'Keeps the CRM’s records in step',
    endpoint: `https://hooks-${i + 1}.example.com/identity/events`,
    eventTypes: types.slice(0, 1 + (i % 8)),
  });
}
// A log to open: 25 events of a type every webhook takes (pending: the engine is not started).
for (let i = 0; i < 25; i++) {
  await hooks.emit({
    environment: 'bench',
    type: types[0],
    source: 'api',
    data: {
      user: {
        id: `kp_${i}`,
        email: `user${i}@example.com`,
        first_name: 'Ada',
        last_name: 'Lovelace',
        phone: null,
        username: null,
        is_password_reset_requested: false,
        is_suspended: false,
        organizations: [],
      },
    },
  });
}
const dashboard = createDashboard({ api: hooks.handler, authorize, onError: (m, e) => console.error(m, e) });
const server = http.createServer(toNodeHandler(dashboard));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
const url = `${origin}/settings/webhooks`;

const browser = await chromium.launch({
  executablePath,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-background-networking',
    '--disable-gpu',
    '--no-first-run',
    '--disable-component-update',
    '--disable-sync',
  ],
});

/** Navigation start → the list rendered with all 20 cards, in ms, read in the page. */
async function measure(page, navigate) {
  await navigate();
  return page
    .waitForFunction(
      () => {
        const mark = performance.getEntriesByName('webhooks-dashboard:render')[0];
        const cards = document.querySelector('webhooks-dashboard')?.shadowRoot?.querySelectorAll('.card').length;
        if (!mark || cards !== 20) return false;
        // Also from the page's first byte: what the dashboard costs once the browser has a
        // renderer and a connection (a fresh context spends most of its cold load before that).
        const nav = performance.getEntriesByType('navigation')[0];
        const resources = performance.getEntriesByType('resource');
        // (the views the element loads when idle, after the render, are not part of it)
        const modules = resources.filter((r) => r.name.endsWith('.js') && r.startTime < mark.startTime);
        const list = resources.find((r) => r.name.endsWith('/api/v1/webhooks'));
        const stats = resources.find((r) => r.name.includes('/api/v1/webhooks/stats') || r.name.endsWith('/stats'));
        const css = resources.filter((r) => r.name.endsWith('.css'));
        return {
          total: mark.startTime,
          // the document and every request that ended before the render (icon, styles, modules, API)
          requests: 1 + resources.filter((r) => r.responseEnd <= mark.startTime).length,
          requested: resources.filter((r) => r.responseEnd <= mark.startTime).map((r) => new URL(r.name).pathname.split('/').pop()),
          fromFirstByte: mark.startTime - (nav?.responseStart ?? 0),
          // where one load's time goes (ms from navigation start)
          phases: {
            document: nav?.responseEnd ?? 0,
            modulesRequested: Math.min(...modules.map((r) => r.startTime)),
            modulesIn: Math.max(...modules.map((r) => r.responseEnd)),
            domContentLoaded: nav?.domContentLoadedEventStart ?? 0,
            listRequested: list?.startTime ?? 0,
            listIn: list?.responseEnd ?? 0,
            statsIn: stats?.responseEnd ?? 0,
            stylesIn: Math.max(...css.map((r) => r.responseEnd)),
            rendered: mark.startTime,
          },
        };
      },
      null,
      { polling: 'raf', timeout: 10_000 },
    )
    .then((handle) => handle.jsonValue());
}

/**
 * From the list, a click on a webhook to its page with the first 20 rows of its log: a log page
 * as a reader reaches it (in the page, the modules already loaded), in ms.
 */
async function logPage(page) {
  return page.evaluate(async () => {
    const root = document.querySelector('webhooks-dashboard').shadowRoot;
    const t0 = performance.now();
    root.querySelector('.card-title button').click();
    for (;;) {
      await new Promise((resolve) => requestAnimationFrame(resolve));
      if (root.querySelectorAll('tbody.delivery').length === 20) return performance.now() - t0;
      if (performance.now() - t0 > 10_000) throw new Error('the log did not show 20 rows within 10 s');
    }
  });
}

const cold = [];
const warm = [];
const logPages = [];
const coldFromFirstByte = [];
const coldPhases = [];
const coldRequests = [];
for (let i = 0; i < runs + 2; i++) {
  const context = await browser.newContext();
  await context.addCookies([{ name: 'session', value: 'bench', url: origin }]);
  const page = await context.newPage();
  const first = await measure(page, () => page.goto(url));
  const again = await measure(page, () => page.reload());
  const toLog = await logPage(page);
  if (i >= 2) {
    // the first two warm up the JIT of both processes
    cold.push(first.total);
    coldFromFirstByte.push(first.fromFirstByte);
    coldPhases.push(first.phases);
    coldRequests.push(first.requests);
    if (i === 2) console.log(`requests before the render: ${first.requests} (document, ${first.requested.join(', ')})`);
    warm.push(again.total);
    logPages.push(toLog);
  }
  await context.close();
}
await browser.close();
server.closeAllConnections();
server.close();
await hooks.close();
rmSync(dir, { recursive: true, force: true });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Nearest rank: the smallest value with at least p of the loads at or below it. */
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(p * xs.length) - 1)];
const show = (label, xs) =>
  console.log(
    `${label}: median ${median(xs).toFixed(1)} ms, p95 ${percentile(xs, 0.95).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}, ${xs.length} loads)`,
  );
// Every file the dashboard serves (the page names some, they import the rest), as built and as served.
const assetDir = new URL('../dist/src/dashboard/assets/', import.meta.url);
const assetFiles = readdirSync(assetDir);
const assetBytes = assetFiles.reduce((sum, name) => sum + statSync(new URL(name, assetDir)).size, 0);
const servedBytes = (await loadAssets(assetDir)).totalBytes;
console.log(`dashboard first load to the rendered list of 20 webhooks (target < 300 ms), Chromium ${browser.version()}`);
show('cold (fresh context, empty cache)', cold);
show("cold, from the page's first byte", coldFromFirstByte);
show('warm (reload, cached assets)', warm);
show('a log page (list → a webhook, its first 20 rows; target < 200 ms)', logPages);
console.log(
  `requests to the first render (document included): median ${median(coldRequests)}, max ${Math.max(...coldRequests)} (target ≤ 6)`,
);
console.log(
  `cold, where the time goes (median ms from navigation start): ${Object.keys(coldPhases[0])
    .map((k) => `${k} ${median(coldPhases.map((p) => p[k])).toFixed(0)}`)
    .join(', ')}`,
);
console.log(
  `assets: ${assetFiles.length} files, ${(servedBytes / 1024).toFixed(1)} KB uncompressed as served (${(assetBytes / 1024).toFixed(1)} KB as written)`,
);
console.log(
  `load average at the end (1, 5, 15 min): ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ${new Date().toISOString()}`,
);
