import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, createBody, makeHttpEngine, type TestEngine } from './setup.js';

// Text-field and endpoint-length validation over the management API: refused text and over-long
// endpoints are 400 with the field's code, and nothing is stored. Every response is also checked
// against the OpenAPI document (setup.ts's afterAll).

let engine: TestEngine;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  engine = await makeHttpEngine();
  api = client(engine.handler, null);
});
afterAll(() => engine.close());

describe('POST /api/v1/webhooks and PATCH refuse text that displays as something else', () => {
  test.each([
    [{ name: 'invoice\u202egpj.exe' }, 'INVALID_NAME', 'name must not contain U+202E RIGHT-TO-LEFT OVERRIDE (character 8)'],
    [{ name: '\u200b\u200b' }, 'INVALID_NAME', 'name must contain visible text'],
    [{ name: 'ok\u001b[2Jcleared' }, 'INVALID_NAME', 'name must not contain U+001B ESCAPE (character 3)'],
    [{ description: 'one\u2028two' }, 'INVALID_DESCRIPTION', 'description must not contain U+2028 LINE SEPARATOR (character 4)'],
    [{ description: 'next\u0085line' }, 'INVALID_DESCRIPTION', 'description must not contain U+0085 NEXT LINE (character 5)'],
    [{ description: ' \u3164 ' }, 'INVALID_DESCRIPTION', 'description must contain visible text'],
    [
      { endpoint: `https://crm.example.com/${'ü'.repeat(400)}` },
      'INVALID_ENDPOINT',
      'endpoint must be at most 2048 characters once normalised',
    ],
  ])('%j is 400 %s', async (fields, code, message) => {
    const created = await api('POST', '/api/v1/webhooks', { body: createBody(fields) });
    expect(created.status).toBe(400);
    expect(created.json.errors).toEqual([{ code, message: expect.stringContaining(message) }]);

    const ok = await api('POST', '/api/v1/webhooks', { body: createBody() });
    expect(ok.status).toBe(200);
    const id = ok.json.webhook.id;
    const patched = await api('PATCH', `/api/v1/webhooks/${id}`, { body: { ...fields } });
    expect([patched.status, patched.json.errors[0].code]).toEqual([400, code]);
    expect((await api('GET', `/api/v1/webhooks/${id}`)).json.webhook).toMatchObject({
      name: 'CRM sync',
      endpoint: 'https://crm.example.com/hooks',
    });
    expect((await api('DELETE', `/api/v1/webhooks/${id}`)).status).toBe(200);
  });

  test('real text in any script is stored as sent', async () => {
    const name = 'Sync 👩‍💻 数据 مزامنة סנכרון می‌خواهم';
    const description = 'Line one\nLine two\r\nCafé 🏴󠁧󠁢󠁳󠁣󠁴󠁿';
    const created = await api('POST', '/api/v1/webhooks', { body: createBody({ name, description }) });
    expect(created.status).toBe(200);
    expect((await api('GET', `/api/v1/webhooks/${created.json.webhook.id}`)).json.webhook).toMatchObject({ name, description });
  });
});
