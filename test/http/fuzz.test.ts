import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { serveHandler } from '../helpers/http.js';
import { client, createBody, makeHttpEngine, type TestEngine } from './setup.js';

/**
 * Property-based: no input gets a 500, every answer is one the OpenAPI document declares (checked
 * by the wrapper in http-setup.ts), and a refused write changes nothing.
 */

export const RUNS = { direct: 400, http: 100 };

/** Outcomes per property, so a generator that never reaches success (or failure) is caught. */
const outcomes = new Map<string, Set<number>>();
const seen = (name: string, status: number) => outcomes.set(name, (outcomes.get(name) ?? new Set()).add(status));
afterAll(() => {
  expect([...outcomes.get('routes')!]).toEqual(expect.arrayContaining([200, 400, 403, 404, 405]));
  for (const name of ['create', 'patch', 'raw', 'http'])
    expect([name, [...(outcomes.get(name) ?? [])].sort()]).toEqual([name, expect.arrayContaining([200, 400])]);
  expect([...outcomes.get('raw')!]).toEqual(expect.arrayContaining([413, 415]));
  console.log('fast-check outcomes', Object.fromEntries([...outcomes].map(([k, v]) => [k, [...v].sort()])));
});

let engine: TestEngine;
let server: Awaited<ReturnType<typeof serveHandler>>;
let existing: string;
let event: string;
beforeAll(async () => {
  engine = await makeHttpEngine();
  server = await serveHandler(engine.handler);
  existing = (await client(engine.handler, null)('POST', '/api/v1/webhooks', { body: createBody() })).json.webhook.id;
  event = (await engine.hooks.emit({ type: 'user.deleted', source: 'api', data: { user: { id: 'kp_1' } }, environment: 'env-a' })).id;
});
afterAll(async () => {
  await server.close();
  await engine.close();
});

const snapshot = async () => JSON.stringify(await engine.hooks.webhooks.list({ environment: 'env-a' }));
const junk = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ minLength: 250, maxLength: 1100 }),
);
const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: good }, { weight: 1, arbitrary: junk });
const types = ['user.created', 'user.updated', 'user.deleted', 'organization.created', 'user.teleported', '', 'USER.CREATED'];
const valid = types.slice(0, 4);
/** Fields of a webhook, each usually valid and sometimes not. */
const fields = {
  name: field(
    fc.oneof(
      { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 60 }) },
      { weight: 1, arbitrary: fc.string({ minLength: 0, maxLength: 260 }) },
    ),
  ),
  endpoint: field(
    fc.oneof(
      fc.webUrl({ withQueryParameters: true }),
      fc.constantFrom('https://example.com/x', 'ftp://x', 'https://u:p@h.example/', 'http://[::1/', 'https://example.com/#f'),
    ),
  ),
  event_types: field(
    fc.oneof(
      { weight: 3, arbitrary: fc.uniqueArray(fc.constantFrom(...valid), { minLength: 1 }) },
      { weight: 1, arbitrary: fc.array(fc.constantFrom(...types), { maxLength: 52 }) },
    ),
  ),
  description: field(fc.option(fc.string({ maxLength: 1010 }))),
};
/**
 * Bodies that are often valid, often nearly valid, and sometimes anything at all. Each property
 * below must see both a 200 and a 400 (checked in afterAll), so valid bodies must not be rare: with
 * every field optional and any mix of event types, creates saw about five 200s in 400 runs.
 */
const webhookBody = fc.oneof(
  { weight: 3, arbitrary: fc.record(fields, { requiredKeys: ['name', 'endpoint', 'event_types'] }) },
  { weight: 2, arbitrary: fc.record(fields, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const ERROR_CODES =
  /^(INVALID_(JSON|BODY|NAME|DESCRIPTION|ENDPOINT|EVENT_TYPES|REQUEST)|UNKNOWN_(FIELD|EVENT_TYPE)|ENDPOINT_NOT_ALLOWED|PAYLOAD_TOO_LARGE)$/;

test('POST /api/v1/webhooks with generated bodies: 200 adds exactly one webhook, 400 adds none', async () => {
  const api = client(engine.handler, null);
  await fc.assert(
    fc.asyncProperty(webhookBody, async (body) => {
      const before = await engine.hooks.webhooks.list({ environment: 'env-a' });
      const res = await api('POST', '/api/v1/webhooks', { body });
      seen('create', res.status);
      const after = await engine.hooks.webhooks.list({ environment: 'env-a' });
      if (res.status === 200) {
        expect(after).toHaveLength(before.length + 1);
        expect(after.at(-1)!.id).toBe(res.json.webhook.id);
        expect(after.at(-1)!.name).toBe((body as { name: string }).name.trim());
      } else {
        expect([400, 413]).toContain(res.status);
        expect(res.json.errors[0].code).toMatch(ERROR_CODES);
        expect(after).toEqual(before);
      }
    }),
    { numRuns: RUNS.direct },
  );
});

test('PATCH /api/v1/webhooks/{id} with generated bodies: all or nothing', async () => {
  const api = client(engine.handler, null);
  await fc.assert(
    fc.asyncProperty(webhookBody, async (body) => {
      const before = await snapshot();
      const res = await api('PATCH', `/api/v1/webhooks/${existing}`, { body });
      seen('patch', res.status);
      if (res.status !== 200) {
        expect([400, 413]).toContain(res.status);
        expect(res.json.errors[0].code).toMatch(ERROR_CODES);
        expect(await snapshot()).toBe(before);
      } else if (typeof (body as { name?: unknown }).name === 'string') {
        expect((await engine.hooks.webhooks.get(existing, { environment: 'env-a' })).name).toBe((body as { name: string }).name.trim());
      }
    }),
    { numRuns: RUNS.direct },
  );
});

/** Content types: JSON ones half the time, so the properties below see their 200s. */
const contentTypes = fc.option(
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON') },
    {
      weight: 1,
      arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin1', 'multipart/form-data; boundary=x', ''),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  ),
);
const rawBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  webhookBody.map((b) => JSON.stringify(b)),
  { weight: 2, arbitrary: fc.constant(JSON.stringify(createBody())) },
  fc.integer({ min: 65_000, max: 70_000 }).map((n) => JSON.stringify(createBody({ description: 'd'.repeat(n) }))),
);

test('raw bodies with any content type: never a 500, and refusals change nothing', async () => {
  const api = client(engine.handler, null);
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('POST', 'PATCH'), rawBody, contentTypes, async (method, raw, type) => {
      const before = await snapshot();
      const path = method === 'POST' ? '/api/v1/webhooks' : `/api/v1/webhooks/${existing}`;
      const res = await api(method, path, { raw: raw as BodyInit as string, headers: type === null ? {} : { 'content-type': type } });
      seen('raw', res.status);
      expect([200, 400, 413, 415]).toContain(res.status);
      if (res.status !== 200) expect(await snapshot()).toBe(before);
    }),
    { numRuns: RUNS.direct },
  );
});

const segment = fc.oneof(
  fc.constantFrom(
    'api',
    'v1',
    'webhooks',
    'events',
    'event_types',
    'enable',
    'disable',
    '.well-known',
    'jwks',
    'jwks.json',
    'openapi.json',
    '',
    '..',
    '%',
    '%E0%A4%A',
    '%2F',
    'webhook_x',
  ),
  fc.webSegment(),
);
const id = fc.oneof(fc.constantFrom('<existing>', '<event>', 'webhook_x', 'event_x', '%', '%zz', ''), fc.webSegment());
/** Each route the API declares, with the methods it answers. */
const ROUTES: [string, string[]][] = [
  ['webhooks', ['GET', 'POST']],
  ['webhooks/{id}', ['GET', 'PATCH', 'DELETE']],
  ['webhooks/{id}/enable', ['POST']],
  ['webhooks/{id}/disable', ['POST']],
  ['events/{id}', ['GET']],
  ['event_types', ['GET']],
  ['openapi.json', ['GET']],
];
const TEMPLATES = ROUTES.map(([t]) => t);
const routePath = (template: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.array(fc.webSegment(), { maxLength: 2 }), template, id, fc.boolean())
    .map(([prefix, t, i, slash]) => `/${[...prefix, 'api', 'v1'].join('/')}/${t.replace('{id}', i)}${slash ? '/' : ''}`);
/** Mostly route-shaped paths (under a random prefix, with a random id), sometimes anything. */
const fuzzPath = fc.oneof(
  { weight: 3, arbitrary: routePath(fc.constantFrom(...TEMPLATES)) },
  { weight: 1, arbitrary: fc.array(segment, { maxLength: 6 }).map((s) => `/${s.join('/')}`) },
);
const method = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS', 'patch') },
  {
    weight: 1,
    arbitrary: fc.stringMatching(/^[A-Z]{1,10}$/).filter((m) => !['CONNECT', 'TRACE', 'TRACK'].includes(m)),
  },
);
/**
 * Any method on any path, and one time in three a declared route with one of its own methods: an
 * independent pick answers 405 or 404 most of the time, and left alone it reached a 400 only about
 * five times in 400 runs (so about one run in 150 saw none and failed the coverage check).
 */
const request = fc.oneof(
  { weight: 2, arbitrary: fc.tuple(method, fuzzPath) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(...ROUTES)
      .chain(([template, methods]) => fc.tuple(fc.constantFrom(...methods), routePath(fc.constant(template)))),
  },
);

test('any method on any path, with or without credentials: a declared answer, never a 500', async () => {
  const api = client(engine.handler, null);
  await fc.assert(
    fc.asyncProperty(request, fc.boolean(), fc.option(fc.jsonValue({ maxDepth: 2 })), async ([m, p], authed, body) => {
      const path = p.replace('<existing>', existing).replace('<event>', event);
      const res = await api(m, path, {
        env: authed ? 'env-fuzz' : null,
        ...(body === null || m === 'GET' || m === 'HEAD' ? {} : { body }),
      });
      expect([200, 400, 403, 404, 405, 413, 415]).toContain(res.status);
      seen('routes', res.status);
      if (!authed && res.status === 200) expect(path).toMatch(/jwks|openapi\.json/);
    }),
    { numRuns: RUNS.direct },
  );
  // env-fuzz may have created or changed its own webhooks, but never env-a's.
  expect((await engine.hooks.webhooks.get(existing, { environment: 'env-a' })).status).toBeDefined();
});

/** No lone surrogates (encodeURIComponent throws on them). */
const wellFormed = (s: string) => {
  try {
    encodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};

test('an authorize hook answering anything at all: 200 for a proper environment, otherwise 403, never a 500', async () => {
  let answer: unknown;
  const authEngine = await makeHttpEngine({ authorize: () => answer as { environment: string } });
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything(),
          fc.record({ environment: fc.oneof(fc.string({ maxLength: 140 }), fc.string({ unit: 'binary', maxLength: 8 }), fc.anything()) }),
        ),
        async (a) => {
          answer = a;
          const res = await authEngine.handler(new Request('http://x/api/v1/webhooks'));
          const env = typeof a === 'object' && a !== null ? (a as { environment?: unknown }).environment : undefined;
          const proper = typeof env === 'string' && env.length > 0 && env.length <= 128 && wellFormed(env) && !env.includes('\u0000');
          expect(res.status).toBe(proper ? 200 : 403);
        },
      ),
      { numRuns: RUNS.direct },
    );
  } finally {
    await authEngine.close();
  }
});

test('over real HTTP: generated bodies, raw bytes and content types, never a 500', async () => {
  const api = client(engine.handler, server.url);
  await fc.assert(
    fc.asyncProperty(rawBody, contentTypes, async (raw, type) => {
      const before = await snapshot();
      const res = await api('POST', '/api/v1/webhooks', {
        raw: raw as BodyInit as string,
        headers: type === null ? {} : { 'content-type': type },
      });
      seen('http', res.status);
      expect([200, 400, 413, 415]).toContain(res.status);
      if (res.status !== 200) expect(await snapshot()).toBe(before);
    }),
    // One well-formed create always among the runs, so the 200 path is seen (by chance it was
    // missed about once in seventy runs).
    { numRuns: RUNS.http, examples: [[JSON.stringify(createBody()), 'application/json']] },
  );
});
