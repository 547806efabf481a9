import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';

const cleanups = useCleanups();
const secretsKey = randomBytes(32).toString('base64');

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return (server.address() as AddressInfo).port;
}

/** A real OAuth2 token server (client_secret_basic) and an endpoint that wants its current token. */
async function oauthPair(expiresIn = 3600) {
  const state = { issued: [] as string[], tokenRequests: 0, failWith: 0, revoked: new Set<string>(), seenAuth: [] as string[] };
  const tokenServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.tokenRequests++;
      const form = new URLSearchParams(body);
      const [id, secret] = Buffer.from(String(req.headers.authorization).replace(/^Basic /, ''), 'base64')
        .toString()
        .split(':');
      if (state.failWith) {
        res.writeHead(state.failWith, { 'content-type': 'application/json' });
        return res.end('{"error":"invalid_client","error_description":"the client is locked"}');
      }
      if (form.get('grant_type') !== 'client_credentials' || id !== 'client-1' || decodeURIComponent(secret!) !== 'cs-Sup3r-secret') {
        res.writeHead(401);
        return res.end('{"error":"invalid_client"}');
      }
      const token = `tok_${randomBytes(8).toString('hex')}`;
      state.issued.push(token);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope: form.get('scope') }));
    });
  });
  const endpoint = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const auth = String(req.headers.authorization ?? '');
      state.seenAuth.push(auth);
      const token = auth.replace(/^Bearer /, '');
      const ok = state.issued.includes(token) && !state.revoked.has(token);
      res.writeHead(ok ? 200 : 401);
      res.end(ok ? 'ok' : 'bad token');
    });
  });
  const tokenPort = await listen(tokenServer);
  const endpointPort = await listen(endpoint);
  return { state, tokenUrl: `http://127.0.0.1:${tokenPort}/oauth/token`, endpointUrl: `http://127.0.0.1:${endpointPort}/hooks` };
}

async function engine(overrides: Parameters<typeof makeEngine>[0] = {}) {
  const env = await makeEngine({ clock: new ManualClock(Date.parse('2026-01-01T00:00:00Z')), secretsKey, ...overrides });
  cleanups.push(() => env.close());
  await env.hooks.start();
  return env;
}

const oauth = (tokenUrl: string) =>
  ({ type: 'oauth2_client_credentials', tokenUrl, clientId: 'client-1', clientSecret: 'cs-Sup3r-secret', scope: 'webhooks' }) as const;

describe('OAuth2 client credentials', () => {
  test('one token request for 100 deliveries within its lifetime; a new one after it expires; once more on a 401', async () => {
    const { state, tokenUrl, endpointUrl } = await oauthPair(3600);
    const { hooks, clock } = await engine();
    const wh = await hooks.webhooks.create({ name: 'o', endpoint: endpointUrl, eventTypes: ['user.created'], auth: oauth(tokenUrl) });
    expect(wh.auth).toEqual({ ...oauth(tokenUrl), clientSecret: '********', audience: null });
    for (let i = 0; i < 100; i++) await hooks.emit({ type: 'user.created', source: 'api', data: userData({ id: `kp_${i}` }) });
    await hooks.drain();
    expect(state.seenAuth).toHaveLength(100);
    expect(state.tokenRequests).toBe(1);
    expect(new Set(state.seenAuth)).toEqual(new Set([`Bearer ${state.issued[0]}`]));

    // Past its lifetime (less the margin): fetched again.
    await clock.advance(3600_000);
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(state.tokenRequests).toBe(2);
    expect(state.seenAuth.at(-1)).toBe(`Bearer ${state.issued[1]}`);

    // The endpoint refuses the cached token: fetched again once, and delivered.
    state.revoked.add(state.issued[1]!);
    const ev = await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(state.tokenRequests).toBe(3);
    expect(await hooks.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'delivered', attemptCount: 1 });
  });

  test('a failing token endpoint fails the attempt with error kind auth and a clear excerpt', async () => {
    const { state, tokenUrl, endpointUrl } = await oauthPair();
    state.failWith = 400;
    const { hooks } = await engine();
    await hooks.webhooks.create({ name: 'o', endpoint: endpointUrl, eventTypes: ['user.created'], auth: oauth(tokenUrl) });
    const ev = await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const [attempt] = await hooks.deliveries.attempts(ev.deliveryIds[0]!);
    expect(attempt).toMatchObject({ success: false, errorKind: 'auth', statusCode: null });
    expect(attempt!.errorMessage).toMatch(/^the token endpoint answered 400: .*the client is locked/);
    expect(state.seenAuth).toHaveLength(0); // the endpoint was never called without a token
    expect(JSON.stringify(attempt)).not.toContain('cs-Sup3r-secret');
  });

  test('a token URL at a private address is refused without allowPrivateNetworks', async () => {
    const { hooks } = await engine({ allowPrivateNetworks: false });
    const error = await hooks.webhooks
      .create({ name: 'o', endpoint: 'https://93.184.216.34/hooks', eventTypes: ['user.created'], auth: oauth('http://127.0.0.1:9/token') })
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'ERR_ENDPOINT_NOT_ALLOWED' });
    expect(await hooks.webhooks.list()).toEqual([]);
  });

  test('without secretsKey, auth is refused with ERR_SECRETS_KEY_REQUIRED', async () => {
    const { tokenUrl, endpointUrl } = await oauthPair();
    const { hooks } = await engine({ secretsKey: undefined });
    await expect(
      hooks.webhooks.create({ name: 'o', endpoint: endpointUrl, eventTypes: ['user.created'], auth: oauth(tokenUrl) }),
    ).rejects.toMatchObject({ code: 'ERR_SECRETS_KEY_REQUIRED', field: 'auth' });
  });
});

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A self-signed certificate and its key, made with openssl. */
function selfSigned(dir: string, name: string, subject: string, san?: string): { cert: string; key: string } {
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', subject];
  if (san) args.push('-addext', `subjectAltName=${san}`);
  args.push('-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.pem`));
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { cert: readFileSync(join(dir, `${name}.pem`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

describe.skipIf(!hasOpenssl())('mTLS', () => {
  test('the configured client certificate is presented on its own pool: accepted with it, refused without', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iw-mtls-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = selfSigned(dir, 'server', '/CN=127.0.0.1', 'IP:127.0.0.1');
    const client = selfSigned(dir, 'client', '/CN=customer-client');
    const stranger = selfSigned(dir, 'stranger', '/CN=someone-else');
    const seen: string[] = [];
    const tls = https.createServer(
      { key: server.key, cert: server.cert, ca: client.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        seen.push((req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN as string);
        req.resume();
        res.end('ok');
      },
    );
    tls.on('tlsClientError', () => {});
    const port = await listen(tls);
    const { hooks } = await engine();
    const endpoint = `https://127.0.0.1:${port}/hooks`;
    const good = await hooks.webhooks.create({
      name: 'good',
      endpoint,
      eventTypes: ['user.created'],
      auth: { type: 'mtls', certificate: client.cert, privateKey: client.key, ca: server.cert },
    });
    expect(good.auth).toMatchObject({ type: 'mtls', privateKey: '********', certificate: client.cert });
    const other = await hooks.webhooks.create({
      name: 'stranger',
      endpoint: `${endpoint}?other`,
      eventTypes: ['user.created'],
      auth: { type: 'mtls', certificate: stranger.cert, privateKey: stranger.key, ca: server.cert },
    });
    const none = await hooks.webhooks.create({ name: 'none', endpoint: `${endpoint}?none`, eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    const byWebhook = new Map((await Promise.all(ev.deliveryIds.map((id) => hooks.deliveries.get(id)))).map((d) => [d.webhookId, d]));
    expect(byWebhook.get(good.id)).toMatchObject({ status: 'delivered' });
    expect(byWebhook.get(other.id)?.status).toBe('pending');
    expect(byWebhook.get(none.id)?.status).toBe('pending');
    expect(seen).toEqual(['customer-client']);
    const [refused] = await hooks.deliveries.attempts(byWebhook.get(other.id)!.id);
    expect(refused).toMatchObject({ success: false, errorKind: 'network' });
  });

  test('a new certificate with the stored key: checked as a pair on update, presented from the next attempt without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iw-mtls-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = selfSigned(dir, 'server', '/CN=127.0.0.1', 'IP:127.0.0.1');
    const client = selfSigned(dir, 'client', '/CN=client-one');
    const stranger = selfSigned(dir, 'stranger', '/CN=stranger');
    // A second certificate for the same key, as a renewal gives.
    execFileSync(
      'openssl',
      ['req', '-x509', '-key', join(dir, 'client.key'), '-days', '1', '-subj', '/CN=client-two', '-out', join(dir, 'renewed.pem')],
      {
        stdio: 'ignore',
      },
    );
    const renewed = readFileSync(join(dir, 'renewed.pem'), 'utf8');
    const seen: string[] = [];
    const tls = https.createServer(
      { key: server.key, cert: server.cert, ca: [client.cert, renewed], requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        seen.push((req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN as string);
        req.resume();
        res.end('ok');
      },
    );
    tls.on('tlsClientError', () => {});
    const port = await listen(tls);
    const { hooks } = await engine();
    const webhook = await hooks.webhooks.create({
      name: 'renewing',
      endpoint: `https://127.0.0.1:${port}/hooks`,
      eventTypes: ['user.created'],
      auth: { type: 'mtls', certificate: client.cert, privateKey: client.key, ca: server.cert },
    });
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    // Another key's certificate with the stored key: refused now, not after a restart.
    await expect(
      hooks.webhooks.update(webhook.id, { auth: { type: 'mtls', certificate: stranger.cert, privateKey: '********', ca: server.cert } }),
    ).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'auth.certificate' });
    await hooks.webhooks.update(webhook.id, { auth: { type: 'mtls', certificate: renewed, privateKey: '********', ca: server.cert } });
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(seen).toEqual(['client-one', 'client-two']);
  });

  test('a key that is not the certificate’s is refused at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'iw-mtls-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const a = selfSigned(dir, 'a', '/CN=a');
    const b = selfSigned(dir, 'b', '/CN=b');
    const { hooks } = await engine();
    await expect(
      hooks.webhooks.create({
        name: 'x',
        endpoint: 'https://127.0.0.1:1/x',
        eventTypes: ['user.created'],
        auth: { type: 'mtls', certificate: a.cert, privateKey: b.key },
      }),
    ).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'auth.privateKey' });
  });
});
