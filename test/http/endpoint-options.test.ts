import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { useCleanups } from '../helpers/cleanup.js';
import { createBody, engineAndClient, type makeHttpEngine } from './setup.js';

/**
 * Endpoint options on the wire (docs/endpoint-options.md): `headers`, `timeout_ms` and
 * `rate_limit_per_second` on POST and PATCH /api/v1/webhooks, shown on every read (credential
 * values masked), each refusal a 400 naming the field, with nothing written. Every response is
 * checked against the OpenAPI document (setup.ts).
 */

const cleanups = useCleanups();
const secretsKey = randomBytes(32).toString('base64');
const SECRET = 'Bearer wire-s3cr3t-41d2';
const setup = (options: Parameters<typeof makeHttpEngine>[0] = { secretsKey }) => engineAndClient('direct', cleanups, options);

describe('endpoint options over the management API', () => {
  test('create and patch them; reads show credential values masked, never the value', async () => {
    const { api } = await setup();
    const created = await api('POST', '/api/v1/webhooks', {
      body: createBody({ headers: { 'X-Tenant': 'acme', Authorization: SECRET }, timeout_ms: 5000, rate_limit_per_second: 20 }),
    });
    expect(created.status).toBe(200);
    const id = created.json.webhook.id as string;
    const got = await api('GET', `/api/v1/webhooks/${id}`);
    expect(got.json.webhook).toMatchObject({
      headers: { 'X-Tenant': 'acme', Authorization: '••••••••' },
      timeout_ms: 5000,
      rate_limit_per_second: 20,
    });
    // The mask sent back keeps the value; null clears an option.
    const patched = await api('PATCH', `/api/v1/webhooks/${id}`, {
      body: { headers: { Authorization: '••••••••', 'X-Other': 'b' }, timeout_ms: null, rate_limit_per_second: 5 },
    });
    expect(patched.status).toBe(200);
    const list = await api('GET', '/api/v1/webhooks');
    expect(list.json.webhooks[0]).toMatchObject({
      headers: { Authorization: '••••••••', 'X-Other': 'b' },
      timeout_ms: null,
      rate_limit_per_second: 5,
    });
    expect(JSON.stringify([got.json, list.json])).not.toContain('s3cr3t');
  });

  test.each([
    [{ headers: { 'Content-Type': 'text/plain' } }, 'INVALID_HEADERS'],
    [{ headers: { host: 'x' } }, 'INVALID_HEADERS'],
    [{ headers: { 'webhook-timestamp': '1' } }, 'INVALID_HEADERS'],
    [{ headers: { 'Transfer-Encoding': 'chunked' } }, 'INVALID_HEADERS'],
    [{ headers: { 'X-A': 'a\r\nX-B: b' } }, 'INVALID_HEADERS'],
    [{ headers: { 'X-A': 'a\u0000' } }, 'INVALID_HEADERS'],
    [{ headers: { 'X A': 'a' } }, 'INVALID_HEADERS'],
    [{ headers: { 'X-A': 'é' } }, 'INVALID_HEADERS'],
    [{ headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-${i}`, 'v'])) }, 'INVALID_HEADERS'],
    [{ headers: 'X-A: b' }, 'INVALID_HEADERS'],
    [{ timeout_ms: 500 }, 'INVALID_TIMEOUT_MS'],
    [{ timeout_ms: 30_001 }, 'INVALID_TIMEOUT_MS'],
    [{ rate_limit_per_second: 0 }, 'INVALID_RATE_LIMIT_PER_SECOND'],
    [{ rate_limit_per_second: 1001 }, 'INVALID_RATE_LIMIT_PER_SECOND'],
    [{ rate_limit_per_second: '20' }, 'INVALID_RATE_LIMIT_PER_SECOND'],
  ])('refused with 400, nothing written: %j', async (fields, code) => {
    const { api, engine } = await setup();
    const res = await api('POST', '/api/v1/webhooks', { body: createBody(fields) });
    expect(res.status).toBe(400);
    expect(res.json.errors[0].code).toBe(code);
    // The same on PATCH of an existing webhook, which stays as it was.
    const id = (await api('POST', '/api/v1/webhooks', { body: createBody() })).json.webhook.id;
    const patch = await api('PATCH', `/api/v1/webhooks/${id}`, { body: { name: 'changed', ...fields } });
    expect(patch.status).toBe(400);
    expect(patch.json.errors[0].code).toBe(code);
    const db = new Database(engine.file, { readonly: true });
    const rows = db.prepare('select name, headers, timeout_ms, rate_limit_per_second from iw_webhooks').all();
    db.close();
    expect(rows).toEqual([{ name: 'CRM sync', headers: null, timeout_ms: null, rate_limit_per_second: null }]);
  });

  test('a credential header without secretsKey: 400 SECRETS_KEY_REQUIRED, nothing written', async () => {
    const { api } = await setup({});
    const res = await api('POST', '/api/v1/webhooks', { body: createBody({ headers: { 'X-Api-Key': 'k' } }) });
    expect(res.status).toBe(400);
    expect(res.json.errors[0].code).toBe('SECRETS_KEY_REQUIRED');
    expect((await api('GET', '/api/v1/webhooks')).json.webhooks).toEqual([]);
  });
});
