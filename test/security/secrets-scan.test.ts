import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { serveHandler, startReceiver } from '../helpers/http.js';
import { testSdk, useContextManager } from '../telemetry/sdk.js';

const cleanups = useCleanups();
let stopContext: () => void;
beforeAll(() => {
  stopContext = useContextManager();
});
afterAll(() => stopContext());

/**
 * Issue 37's bar: with every kind of secret a webhook can carry (a signing secret and its
 * rotation, an Ed25519 key, an OAuth2 client secret and the tokens it gets, an mTLS private key),
 * through deliveries that succeed and fail, a scan of every store row (select * from every
 * table), every log line, every span attribute, every attempt's error and every API response
 * finds none of them in clear. The signing secret's explicit reveal is the one exception.
 */
test('no secret in clear in any store row, log line, span attribute, attempt error or API response', async () => {
  const sdk = testSdk();
  const receiver = await startReceiver((req) => (req.path.startsWith('/fail') ? { status: 500, body: JSON.stringify(req.headers) } : 200));
  cleanups.push(() => receiver.close());
  const tokens: string[] = [];
  const tokenServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const token = `tok_${randomBytes(12).toString('hex')}`;
      tokens.push(token);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, expires_in: 3600 }));
    });
  });
  await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (tokenServer.closeAllConnections(), tokenServer.close(() => r()))));
  const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;

  const dir = mkdtempSync(join(tmpdir(), 'iw-scan-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=c',
      '-keyout',
      join(dir, 'k.pem'),
      '-out',
      join(dir, 'c.pem'),
    ],
    { stdio: 'ignore' },
  );
  const certificate = readFileSync(join(dir, 'c.pem'), 'utf8');
  const privateKey = readFileSync(join(dir, 'k.pem'), 'utf8');

  const lines: string[] = [];
  const capture = (level: string) => (message: string, meta?: unknown) =>
    void lines.push(`${level} ${message} ${JSON.stringify(meta ?? {})}`);
  const env = await makeEngine({
    clock: new ManualClock(Date.now()),
    secretsKey: randomBytes(32).toString('base64'),
    telemetry: sdk.telemetry,
    logger: { warn: capture('warn'), error: capture('error'), info: capture('info'), debug: capture('debug') } as never,
    authorize: () => ({ environment: 'default' }),
  });
  cleanups.push(() => env.close());
  const { hooks } = env;
  await hooks.start();
  const site = await serveHandler((req) => hooks.handler(req));
  cleanups.push(() => site.close());
  const responses: string[] = [];
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${site.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
  };
  const kept = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, body);
    responses.push(r.text);
    return r;
  };

  const clientSecret = `cs_${randomBytes(12).toString('hex')}`;
  const std = await kept('POST', '/api/v1/webhooks', {
    name: 'std',
    endpoint: `${receiver.url}/std`,
    event_types: ['user.created'],
    format: 'standard-webhooks',
    asymmetric: true,
  });
  const oauth = await kept('POST', '/api/v1/webhooks', {
    name: 'oauth',
    endpoint: `${receiver.url}/fail/oauth`,
    event_types: ['user.created'],
    format: 'standard-webhooks',
    auth: { type: 'oauth2_client_credentials', token_url: tokenUrl, client_id: 'c1', client_secret: clientSecret },
  });
  const mtls = await kept('POST', '/api/v1/webhooks', {
    name: 'mtls',
    endpoint: `${receiver.url}/fail/mtls`,
    event_types: ['user.created'],
    auth: { type: 'mtls', certificate, private_key: privateKey },
  });
  const ids = [std, oauth, mtls].map((r) => r.json.webhook.id as string);
  // The explicit reveals: kept aside, not scanned.
  const first = (await api('GET', `/api/v1/webhooks/${ids[0]}/secret`)).json.secret.secret as string;
  const rotated = (await api('POST', `/api/v1/webhooks/${ids[0]}/secret/rotate`, { grace_ms: 60_000 })).json.secret.secret as string;
  const second = (await api('GET', `/api/v1/webhooks/${ids[1]}/secret`)).json.secret.secret as string;

  await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
  await hooks.drain();
  await hooks.webhooks.resealSecrets();
  await kept('GET', '/api/v1/webhooks');
  for (const id of ids) {
    await kept('GET', `/api/v1/webhooks/${id}`);
    const log = await kept('GET', `/api/v1/webhooks/${id}/deliveries`);
    for (const d of log.json.deliveries) await kept('GET', `/api/v1/webhooks/${id}/deliveries/${d.id}/attempts`);
  }
  await kept('PATCH', `/api/v1/webhooks/${ids[1]}`, {
    auth: { type: 'oauth2_client_credentials', token_url: tokenUrl, client_id: 'c1', client_secret: 'x' },
  });
  expect(receiver.requests.length).toBeGreaterThanOrEqual(3);
  expect(tokens.length).toBeGreaterThanOrEqual(1);

  const secrets = [
    first,
    rotated,
    second,
    first.slice(6),
    rotated.slice(6),
    clientSecret,
    ...tokens,
    privateKey.split('\n')[1]!, // a line of the key's base64
  ];
  const db = new Database(env.filename, { readonly: true });
  const tables = db.prepare(`select name from sqlite_master where type = 'table'`).all() as { name: string }[];
  const rows = tables.flatMap(({ name }) =>
    db
      .prepare(`select * from "${name}"`)
      .all()
      .map((r) => JSON.stringify(r)),
  );
  db.close();
  expect(rows.some((r) => r.includes('sealed:v1:'))).toBe(true); // the secrets are there, sealed
  const spans = sdk.spans().map((s) => JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events, status: s.status }));
  const haystacks = { rows, lines, spans, responses, logged: env.logged };
  for (const [where, texts] of Object.entries(haystacks)) {
    for (const text of texts) for (const secret of secrets) expect(text.includes(secret), `${where}: ${text.slice(0, 200)}`).toBe(false);
  }
});
