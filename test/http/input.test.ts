import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serveHandler } from '../helpers/http.js';
import { client, createBody, makeHttpEngine, type TestEngine } from './setup.js';

/**
 * Bad input: a specific code, a message naming the field, and nothing written. Every case runs
 * directly and over real HTTP.
 */

let engine: TestEngine;
let server: Awaited<ReturnType<typeof serveHandler>>;
let existing: string;
beforeAll(async () => {
  engine = await makeHttpEngine();
  server = await serveHandler(engine.handler);
  existing = (await client(engine.handler, null)('POST', '/api/v1/webhooks', { body: createBody({ description: 'keep me' }) })).json.webhook
    .id;
});
afterAll(async () => {
  await server.close();
  await engine.close();
});

type Case = [
  what: string,
  init: { body?: unknown; raw?: string; headers?: Record<string, string> },
  status: number,
  code: string,
  message: RegExp,
];
const long = (n: number) => 'x'.repeat(n);

const bodyCases: Case[] = [
  ['malformed JSON', { raw: '{"name": ', headers: { 'content-type': 'application/json' } }, 400, 'INVALID_JSON', /not valid JSON/],
  ['invalid UTF-8', { raw: undefined, headers: { 'content-type': 'application/json' } }, 400, 'INVALID_JSON', /UTF-8/], // raw set below
  ['an array body', { body: [createBody()] }, 400, 'INVALID_BODY', /JSON object/],
  ['a string body', { body: 'hello' }, 400, 'INVALID_BODY', /JSON object/],
  ['an empty body', { raw: '', headers: { 'content-type': 'application/json' } }, 400, 'INVALID_JSON', /empty/],
  ['an unknown field', { body: { eventTypes: ['user.created'] } }, 400, 'UNKNOWN_FIELD', /"eventTypes"/],
  ['name of the wrong type', { body: { name: 42 } }, 400, 'INVALID_NAME', /name/],
  ['an over-long name', { body: { name: long(256) } }, 400, 'INVALID_NAME', /name must be at most 255/],
  ['a blank name', { body: { name: '   ' } }, 400, 'INVALID_NAME', /name must not be empty/],
  ['description of the wrong type', { body: { description: ['a'] } }, 400, 'INVALID_DESCRIPTION', /description/],
  ['an over-long description', { body: { description: long(1001) } }, 400, 'INVALID_DESCRIPTION', /description must be at most 1000/],
  ['endpoint not a URL', { body: { endpoint: 'not a url' } }, 400, 'INVALID_ENDPOINT', /endpoint must be an absolute URL/],
  [
    'endpoint with another scheme',
    { body: { endpoint: 'ftp://example.com/x' } },
    400,
    'INVALID_ENDPOINT',
    /endpoint must use http or https/,
  ],
  ['endpoint with credentials', { body: { endpoint: 'https://u:p@example.com/' } }, 400, 'INVALID_ENDPOINT', /endpoint/],
  [
    'an over-long endpoint',
    { body: { endpoint: `https://example.com/${long(2048)}` } },
    400,
    'INVALID_ENDPOINT',
    /endpoint must be at most 2048/,
  ],
  ['endpoint of the wrong type', { body: { endpoint: { url: 'https://example.com' } } }, 400, 'INVALID_ENDPOINT', /endpoint/],
  ['empty event_types', { body: { event_types: [] } }, 400, 'INVALID_EVENT_TYPES', /event_types must contain at least one/],
  ['event_types not an array', { body: { event_types: 'user.created' } }, 400, 'INVALID_EVENT_TYPES', /event_types must be an array/],
  ['a non-string event type', { body: { event_types: ['user.created', 7] } }, 400, 'INVALID_EVENT_TYPES', /event_types\[1\]/],
  [
    'an unknown event type',
    { body: { event_types: ['user.created', 'user.teleported'] } },
    400,
    'UNKNOWN_EVENT_TYPE',
    /event_types\[1\].*user\.teleported/,
  ],
  ['too many event types', { body: { event_types: Array(51).fill('user.created') } }, 400, 'INVALID_EVENT_TYPES', /at most 50/],
  ['no content-type', { raw: JSON.stringify(createBody()) }, 415, 'UNSUPPORTED_MEDIA_TYPE', /application\/json/],
  [
    'text/plain',
    { raw: JSON.stringify(createBody()), headers: { 'content-type': 'text/plain' } },
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    /text\/plain/,
  ],
  [
    'a form',
    { raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    /application\/json/,
  ],
  [
    'JSON in latin1',
    { raw: JSON.stringify(createBody()), headers: { 'content-type': 'application/json; charset=iso-8859-1' } },
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    /charset/,
  ],
  ['a body over 64 KiB', { body: { name: long(70_000) } }, 413, 'PAYLOAD_TOO_LARGE', /at most 65536 bytes/],
];

/** POST cases are full bodies; the field cases are merged into a valid body. */
const asCreate = ([what, init, ...rest]: Case): Case => [
  what,
  init.body && typeof init.body === 'object' && !Array.isArray(init.body) && !('eventTypes' in init.body)
    ? { body: createBody(init.body as Record<string, unknown>) }
    : init,
  ...rest,
];

describe.each(['direct', 'http'] as const)('%s', (mode) => {
  const api = () => client(engine.handler, mode === 'http' ? server.url : null);
  const before = async () => JSON.stringify(await engine.hooks.webhooks.list({ environment: 'env-a' }));
  const fix = (init: Case[1], what: string) =>
    what === 'invalid UTF-8' ? { ...init, raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) as unknown as string } : init;

  test.each(bodyCases.map(asCreate))('POST /api/v1/webhooks with %s', async (what, init, status, code, message) => {
    const snapshot = await before();
    const res = await api()('POST', '/api/v1/webhooks', fix(init, what));
    expect([res.status, res.json.errors[0].code]).toEqual([status, code]);
    expect(res.json.errors[0].message).toMatch(message);
    expect(await before()).toBe(snapshot);
  });

  test.each(bodyCases)('PATCH /api/v1/webhooks/{id} with %s', async (what, init, status, code, message) => {
    const snapshot = await before();
    // A valid name beside the bad field proves the whole patch is refused, not half applied.
    const body =
      init.body && typeof init.body === 'object' && !Array.isArray(init.body) ? { name: 'half-written?', ...init.body } : init.body;
    const res = await api()('PATCH', `/api/v1/webhooks/${existing}`, fix({ ...init, body }, what));
    expect([res.status, res.json.errors[0].code]).toEqual([status, code]);
    expect(res.json.errors[0].message).toMatch(message);
    expect(await before()).toBe(snapshot);
  });

  test('PATCH with nulls: name/endpoint/event_types are left alone, description is cleared', async () => {
    const res = await api()('PATCH', `/api/v1/webhooks/${existing}`, {
      body: { name: null, endpoint: null, event_types: null, description: null },
    });
    expect(res.status).toBe(200);
    const w = await engine.hooks.webhooks.get(existing, { environment: 'env-a' });
    expect(w).toMatchObject({
      name: 'CRM sync',
      endpoint: 'https://crm.example.com/hooks',
      eventTypes: ['user.created'],
      description: null,
    });
    await engine.hooks.webhooks.update(existing, { description: 'keep me' }, { environment: 'env-a' });
  });

  test('a chunked body that runs past 64 KiB is refused (413) without reading it all', async () => {
    let sent = 0;
    // 1 MiB in 16 KiB chunks, no content-length: only the streamed count can catch it.
    const stream = Readable.from(
      (function* () {
        for (let i = 0; i < 64; i++) {
          sent++;
          yield Buffer.alloc(16 * 1024, 0x20);
        }
      })(),
    );
    const snapshot = await before();
    const res = await api()('POST', '/api/v1/webhooks', {
      raw: Readable.toWeb(stream) as unknown as string,
      headers: { 'content-type': 'application/json' },
    });
    expect([res.status, res.json.errors[0].code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    if (mode === 'direct') expect(sent).toBeLessThan(64);
    expect(await before()).toBe(snapshot);
  });
});
