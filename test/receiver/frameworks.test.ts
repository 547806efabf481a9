import type { AddressInfo } from 'node:net';
import express from 'express';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { jwksResponse } from '../../src/http/jwks.js';
import { ManualClock } from '../../src/index.js';
import { createReceiver, createVerifier } from '../../src/receiver/index.js';
import { importSigningKey } from '../../src/signing/keys.js';
import { KeySet } from '../../src/signing/keyset.js';
import { buildClaims, signClaims } from '../../src/signing/token.js';
import { testKey, userEvent } from '../helpers/fixtures.js';
import { serveHandler } from '../helpers/http.js';

// The README's three examples, as written there, each served over real HTTP.
const clock = new ManualClock(Date.parse('2026-03-01T12:00:00.000Z'));
let issuer: string;
let sign: () => Promise<string>;
const closers: Array<() => Promise<void>> = [];
beforeAll(async () => {
  const key = await testKey();
  const keys = new KeySet([key]);
  const site = await serveHandler(async (req) => jwksResponse(keys.jwks(), req.method));
  closers.push(site.close);
  issuer = site.url;
  const event = userEvent(clock.now(), { source: 'admin' });
  sign = async () => signClaims(buildClaims(event, issuer, clock.now()), await importSigningKey(key));
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** The receiver of the README examples; `contacts` stands in for the account holder's CRM. */
function makeReceive(contacts: string[]) {
  return createReceiver({
    verifier: createVerifier({ issuer, clock }),
    on: {
      'user.created': async (event) => {
        contacts.push(event.data.user.email ?? event.data.user.id);
      },
    },
  });
}

async function exercise(url: string, contacts: string[]) {
  const post = (body: string, headers: Record<string, string>) => fetch(url, { method: 'POST', headers, body });
  const token = await sign();
  const ok = await post(token, { 'content-type': 'application/jwt', 'webhook-id': 'msg_1' });
  expect([ok.status, await ok.json()]).toEqual([200, { message: 'processed' }]);
  const again = await post(token, { 'content-type': 'application/jwt', 'webhook-id': 'msg_1' });
  expect([again.status, await again.json()]).toEqual([200, { message: 'already processed' }]);
  const legacy = await post(JSON.stringify({ type: 'user.created' }), { 'content-type': 'application/json', 'webhook-id': 'msg_2' });
  expect(legacy.status).toBe(400);
  const tampered = await post(`${token.slice(0, -4)}AAAA`, { 'content-type': 'application/jwt', 'webhook-id': 'msg_3' });
  expect(tampered.status).toBe(400);
  const empty = await post('', { 'content-type': 'application/jwt', 'webhook-id': 'msg_4' });
  expect(empty.status).toBe(400);
  expect(contacts).toEqual(['ada@example.com']);
}

describe('README examples', () => {
  test('Express', async () => {
    const contacts: string[] = [];
    const receive = makeReceive(contacts);
    // --- README: Express ---
    const app = express();
    app.post('/webhooks', express.text({ type: '*/*', limit: '1mb' }), async (req, res) => {
      const response = await receive(
        new Request(`http://${req.headers.host}${req.originalUrl}`, {
          method: 'POST',
          headers: { 'content-type': req.get('content-type') ?? '', 'webhook-id': req.get('webhook-id') ?? '' },
          body: typeof req.body === 'string' ? req.body : '',
        }),
      );
      res
        .status(response.status)
        .type('json')
        .send(await response.text());
    });
    // --- end ---
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
    await exercise(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, contacts);
  });

  test('Next.js route handler (app/webhooks/route.ts)', async () => {
    const contacts: string[] = [];
    // --- README: Next.js --- export const POST = createReceiver({ ... });
    const POST: (request: Request) => Promise<Response> = makeReceive(contacts);
    // --- end ---
    const site = await serveHandler(POST);
    closers.push(site.close);
    await exercise(`${site.url}/webhooks`, contacts);
  });

  test('Hono', async () => {
    const contacts: string[] = [];
    const receive = makeReceive(contacts);
    // --- README: Hono ---
    const app = new Hono();
    app.post('/webhooks', (c) => receive(c.req.raw));
    // --- end ---
    const site = await serveHandler(async (req) => app.fetch(req));
    closers.push(site.close);
    await exercise(`${site.url}/webhooks`, contacts);
  });
});
