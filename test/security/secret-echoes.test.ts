import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { ManualClock, type Store, ValidationError } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * Secrets that come back in an echo, tenant text that reads like a sealed value, and what a
 * webhook's headers and OAuth2 may send: on both databases where the store is involved.
 */
const cleanups = useCleanups();
const secretsKey = randomBytes(32).toString('base64');
const CLIENT_SECRET = 'cs-Sup3r+secret/with=odd&chars"';
const HEADER_SECRET = 'k3y-V4lue+/=&"\\';

let pg: TestPostgres;
beforeAll(async () => {
  pg = await useTestPostgres('secret_echoes');
});
afterAll(async () => {
  await pg?.close();
});

/** A server on 127.0.0.1 answering with `answer(request, body)`. */
async function serve(answer: (req: http.IncomingMessage, body: string) => { status: number; body: string; type?: string }) {
  const seen: Array<{ headers: http.IncomingHttpHeaders; raw: string[]; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ headers: req.headers, raw: req.rawHeaders, body });
      const a = answer(req, body);
      res.writeHead(a.status, { 'content-type': a.type ?? 'text/plain' });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** Every form a secret can be echoed in (what must not be stored). */
function forms(secret: string): string[] {
  const b64 = Buffer.from(secret).toString('base64');
  return [secret, b64, b64.replace(/=+$/, ''), encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
}

describe.each([
  ['SQLite', async (): Promise<(() => Store) | undefined> => undefined],
  [
    'PostgreSQL',
    async (): Promise<(() => Store) | undefined> => {
      const schema = await createSchema(pg.url, 'echo');
      cleanups.push(() => schema.drop());
      return () => postgresStore({ connectionString: schema.url });
    },
  ],
] as const)('secrets and echoes (%s)', (name, makeStore) => {
  async function engine() {
    const open = await makeStore();
    const env = await makeEngine({
      clock: new ManualClock(Date.parse('2026-01-01T00:00:00Z')),
      secretsKey,
      ...(open ? { store: open() } : {}),
    });
    cleanups.push(() => env.close());
    await env.hooks.start();
    /** The same database again (a restart): PostgreSQL needs a store of its own, the closed one is done. */
    const again = () => (open ? { store: open() } : {});
    return { ...env, again };
  }

  test("a token endpoint and an endpoint that echo what they got leave no secret in the log, the webhook's last error or the database", async () => {
    const { hooks, filename } = await engine();
    // The token endpoint refuses, echoing its request's headers and body, raw and as JSON.
    const tokens = await serve((req, body) => ({
      status: 401,
      type: 'application/json',
      body: JSON.stringify({ error: 'invalid_client', got: { authorization: req.headers.authorization, body } }) + body,
    }));
    const oauth = await hooks.webhooks.create({
      name: 'oauth',
      endpoint: 'http://127.0.0.1:9/never',
      eventTypes: ['user.created'],
      auth: { type: 'oauth2_client_credentials', tokenUrl: `${tokens.url}/token`, clientId: 'client-1', clientSecret: CLIENT_SECRET },
    });
    // The endpoint echoes its headers, JSON-escaped and base64.
    const echo = await serve((req) => ({
      status: 500,
      body: `${JSON.stringify(req.headers)} ${Buffer.from(String(req.headers.apikey)).toString('base64')} ${encodeURIComponent(String(req.headers['x-password']))}`,
    }));
    const headers = await hooks.webhooks.create({
      name: 'headers',
      endpoint: echo.url,
      eventTypes: ['user.created'],
      headers: { apikey: HEADER_SECRET, 'X-Password': HEADER_SECRET, 'X-Plain': 'visible' },
    });
    // Names such as apikey and X-Password are credentials: write-only.
    expect(headers.headers).toEqual({ apikey: '••••••••', 'X-Password': '••••••••', 'X-Plain': 'visible' });
    await hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await hooks.drain();
    expect(tokens.seen.length).toBeGreaterThan(0);
    expect(echo.seen[0]!.headers.apikey).toBe(HEADER_SECRET);
    const texts: string[] = [];
    for (const webhook of [oauth, headers]) {
      const [delivery] = (await hooks.deliveries.list({ webhookId: webhook.id })).deliveries;
      for (const attempt of await hooks.deliveries.attempts(delivery!.id)) texts.push(JSON.stringify(attempt));
      texts.push(JSON.stringify(await hooks.webhooks.get(webhook.id)));
      texts.push(JSON.stringify(await hooks.deliveries.message(delivery!.id)));
    }
    expect(texts.join('\n')).toContain('invalid_client'); // the echo itself is kept
    for (const secret of [CLIENT_SECRET, HEADER_SECRET])
      for (const form of forms(secret)) expect(texts.join('\n'), `${secret} as ${form}`).not.toContain(form);
    // And nothing in the database file (SQLite: the bytes of the file and its WAL).
    if (name === 'SQLite') {
      const { readFileSync, existsSync } = await import('node:fs');
      const bytes = [filename, `${filename}-wal`]
        .filter(existsSync)
        .map((f) => readFileSync(f).toString('latin1'))
        .join('');
      for (const secret of [CLIENT_SECRET, HEADER_SECRET]) for (const form of forms(secret)) expect(bytes).not.toContain(form);
    }
  });

  test('tenant text that reads like a sealed value is never opened: rotation of secretsKey goes through', async () => {
    const env = await engine();
    const sealedLooking = 'sealed:v1:k1:AAAA:BBBB';
    await env.hooks.webhooks.create({
      name: 'tricky',
      endpoint: 'https://receiver.example.com/h',
      eventTypes: ['user.created'],
      headers: { 'X-Note': sealedLooking, apikey: 'real-secret-value' },
    });
    const keyB = randomBytes(32).toString('base64');
    const hooks = await env.restart({ secretsKey: [keyB, secretsKey], ...env.again() });
    await hooks.start();
    expect(await hooks.webhooks.resealSecrets()).toEqual({ resealed: 1 });
    const [webhook] = await hooks.webhooks.list();
    expect(webhook!.headers).toEqual({ 'X-Note': sealedLooking, apikey: '••••••••' });
  });
});

describe('what a webhook may send', () => {
  test('credential names are words: X-Author and X-Bypass-Cache are plain; eight short credentials save again as the dashboard sends them', async () => {
    const env = await makeEngine({ secretsKey });
    cleanups.push(() => env.close());
    const creds = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`X-Api-Key-${i}`, `k${i}-secret`]));
    const created = await env.hooks.webhooks.create({
      name: 'words',
      endpoint: 'https://r.example.com/h',
      eventTypes: ['user.created'],
      headers: { 'X-Author': 'ada', 'X-Bypass-Cache': '1', ...creds },
    });
    expect(created.headers).toMatchObject({ 'X-Author': 'ada', 'X-Bypass-Cache': '1', 'X-Api-Key-0': '••••••••' });
    // Saved again with every credential masked (what the dashboard does): their stored lengths count.
    await expect(env.hooks.webhooks.update(created.id, { headers: created.headers, name: 'again' })).resolves.toMatchObject({
      name: 'again',
    });
  });

  test('headers are bounded in all to what common servers accept: 20 of 1,024 characters is refused, 8 KiB passes a default Node server', async () => {
    const env = await makeEngine({ secretsKey });
    cleanups.push(() => env.close());
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, 'v'.repeat(1024)]));
    await expect(
      env.hooks.webhooks.create({ name: 'big', endpoint: 'https://r.example.com/h', eventTypes: ['user.created'], headers: many }),
    ).rejects.toThrow(ValidationError);
    const receiver = await serve(() => ({ status: 200, body: 'ok' }));
    const fits = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`X-H${i}`, 'v'.repeat(1024)]));
    await env.hooks.webhooks.create({ name: 'fits', endpoint: receiver.url, eventTypes: ['user.created'], headers: fits });
    await env.hooks.start();
    await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
    await env.hooks.drain();
    expect(receiver.seen).toHaveLength(1);
  });

  test('OAuth2 beside a custom Authorization header: one Authorization line, the token; a long token answer and expires_in 0 work', async () => {
    const env = await makeEngine({ secretsKey, clock: new ManualClock(Date.parse('2026-01-01T00:00:00Z')) });
    cleanups.push(() => env.close());
    let issued = 0;
    const tokens = await serve(() => ({
      status: 200,
      type: 'application/json',
      // A token answer past 4 KiB (a JWT with many claims), good for this attempt only.
      body: JSON.stringify({ access_token: `tok_${++issued}`, expires_in: 0, padding: 'x'.repeat(6000) }),
    }));
    const endpoint = await serve(() => ({ status: 200, body: 'ok' }));
    await env.hooks.webhooks.create({
      name: 'both',
      endpoint: endpoint.url,
      eventTypes: ['user.created'],
      headers: { Authorization: 'Bearer custom' },
      auth: { type: 'oauth2_client_credentials', tokenUrl: `${tokens.url}/token`, clientId: 'c', clientSecret: 'cs-Sup3r-secret' },
    });
    await env.hooks.start();
    for (let i = 0; i < 2; i++) {
      await env.hooks.emit({ type: 'user.created', source: 'api', data: userData() });
      await env.hooks.drain();
      await env.clock.advance(1000);
    }
    expect(endpoint.seen).toHaveLength(2);
    for (const [i, request] of endpoint.seen.entries()) {
      const lines = request.raw.filter((_, k) => k % 2 === 0 && request.raw[k]!.toLowerCase() === 'authorization');
      expect(lines).toHaveLength(1);
      expect(request.headers.authorization).toBe(`Bearer tok_${i + 1}`);
    }
    expect(issued).toBe(2); // expires_in 0: never kept
  });
});
