import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { Catalog } from '../../src/catalog/catalog.js';
import { checkEndpoint } from '../../src/delivery/guard/check.js';
import { createGuard, type Resolver } from '../../src/delivery/guard/guard.js';
import { TransportError } from '../../src/delivery/transport-error.js';
import type { EmitInput } from '../../src/index.js';
import { BUILTIN_EVENT_TYPES, createWebhooks, type WebhookRecord, type Webhooks, WebhooksError } from '../../src/index.js';
import * as v from '../../src/validate.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';

// Property-based tests over the management functions and emit. For every
// input: the call either succeeds and the stored record reads back as returned, or it rejects
// with a WebhooksError of a caller-facing code and the store is exactly as before. Never a store
// error, a TypeError, an unhandled rejection or a half-written record.

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const TIME = 30_000 + RUNS * 40; // generous: SQLite on a shared 2-core machine
const CALLER_CODES = [
  'ERR_VALIDATION',
  'ERR_UNKNOWN_EVENT_TYPE',
  'ERR_NOT_FOUND',
  'ERR_LIMIT_REACHED',
  'ERR_PAYLOAD_TOO_LARGE',
  'ERR_ENDPOINT_NOT_ALLOWED',
];
const open = { code: 'host.open', name: 'Open', origin: 'host', schema: { type: 'object' as const } };
const TYPES = [...BUILTIN_EVENT_TYPES.map((t) => t.code), open.code];

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => void process.on('unhandledRejection', onUnhandled));
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

/** No network in these tests: names resolve by rule, instantly. */
const resolver: Resolver = async (host) => {
  if (host.startsWith('nx')) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  if (host.includes('internal')) return [{ address: '10.0.0.1', family: 4 }];
  if (host.includes('rebind'))
    return [
      { address: '93.184.215.14', family: 4 },
      { address: '::1', family: 6 },
    ];
  return [{ address: '93.184.215.14', family: 4 }];
};

// ---- arbitraries: hostile text first, then everything else JavaScript can hand us ----

const hostileConstants = [
  `'; DROP TABLE iw_webhooks; --`,
  `" OR 1=1 --`,
  'a\u0000b',
  '\u0000',
  'x\ud800',
  '\udfff',
  '\u202e',
  '\u2028',
  ' ',
  '',
  '%',
  '_',
  '\\',
  '$1',
  '?',
  ':p',
  '🦄'.repeat(300),
  'x'.repeat(3000),
  'é'.repeat(256),
  '\t\n',
  '__proto__',
  'constructor',
];
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 64 }), // lone surrogates too
  fc.string({ unit: 'grapheme', minLength: 200, maxLength: 1100 }),
  fc.constantFrom(...hostileConstants),
);
const junk = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(text, { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  fc.anything({ maxDepth: 1 }),
);
const endpoint = fc.oneof(
  fc.webUrl({ withQueryParameters: true }),
  fc.constantFrom(
    'http://127.0.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://0/',
    'http://internal.example/x',
    'https://nx.example/x',
    'https://rebind.example/',
    'https://ok.example/hooks',
    'ftp://ok.example/',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'https://user:pw@ok.example/',
    'https://ok.example/#frag',
    `https://ok.example/${'a'.repeat(2100)}`,
    'https://ok.example/\u0000',
    'https://ok.example/\ud800',
    'https://[::1',
    'http://0x7f.1/',
    'https://xn--n3h.example/',
    'https://☃.example/',
  ),
  text,
);
const eventTypes = fc.oneof(
  fc.subarray(TYPES, { minLength: 1 }),
  fc.array(fc.oneof(fc.constantFrom(...TYPES), text, junk), { maxLength: 55 }),
  junk,
);
const webhookFields = fc.record(
  {
    name: fc.oneof(text, junk),
    description: fc.oneof(text, junk),
    endpoint: fc.oneof(endpoint, junk),
    eventTypes,
    environment: fc.oneof(fc.constant(undefined), fc.constantFrom('default', 'other'), text, junk),
  },
  { requiredKeys: [] },
);
/** Near-valid input (hostile but legal text, public endpoints), so the success path is fuzzed too. */
const plausibleFields = fc.record({
  name: fc.oneof(
    fc.string({ minLength: 1, maxLength: 255 }),
    fc.constantFrom(`'; DROP TABLE iw_webhooks; --`, `" OR 1=1 --`, '🦄'.repeat(255), '\u202e', '%_\\'),
  ),
  description: fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.string({ maxLength: 1000 }),
    fc.string({ unit: 'grapheme', maxLength: 1000 }),
  ),
  endpoint: fc.oneof(
    fc.webUrl({ withQueryParameters: true }).filter((u) => u.length <= 2048),
    fc.constantFrom('https://ok.example/hooks', 'https://nx.example/x', 'https://☃.example/', 'http://93.184.215.14:8080/x'),
  ),
  eventTypes: fc.subarray(TYPES, { minLength: 1 }),
  environment: fc.constantFrom(undefined, 'default', 'other'),
});
const createInput = fc.oneof(
  { weight: 5, arbitrary: webhookFields },
  { weight: 4, arbitrary: plausibleFields },
  { weight: 1, arbitrary: junk },
);
const idLike = (prefix: string, known: () => string[]) =>
  fc.oneof(
    fc.constantFrom(0, 1, 2).map((i) => known()[i] ?? `${prefix}_none`),
    fc.constant(`${prefix}_' OR '1'='1`),
    text.map((s) => `${prefix}_${s}`),
    text,
    junk,
  );

// ---- the engine under test: a real SQLite file ----

let hooks: Webhooks;
let cleanup: () => Promise<void>;
let count: (table: 'iw_webhooks' | 'iw_events' | 'iw_deliveries') => Promise<number>;
const catalog = new Catalog([open]);

beforeAll(async () => {
  const dir = tempDir('iw-fuzz-');
  const store = sqliteStore({ filename: dir.file('fuzz.db') });
  hooks = createWebhooks({
    store,
    keys: [await testKey()],
    issuer: 'https://auth.example.com',
    resolver,
    eventTypes: [open],
    limits: { maxWebhooks: 10_000 },
  });
  const reader = sqliteStore({ filename: dir.file('fuzz.db') });
  count = async (table) =>
    Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(reader.kysely)).rows[0]!.n);
  cleanup = async () => {
    await hooks.close();
    await reader.close();
    dir.cleanup();
  };
  await hooks.webhooks.list(); // migrate; the scheduler is never started, so nothing is delivered
});
afterAll(() => cleanup());

/** Runs `call`; returns its value, or checks the rejection is a caller-facing WebhooksError. */
async function settle<T>(call: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: WebhooksError }> {
  let value: T;
  try {
    value = await call();
  } catch (error) {
    if (!(error instanceof WebhooksError)) throw new Error(`not a WebhooksError: ${String(error)}`, { cause: error });
    expect(CALLER_CODES).toContain(error.code);
    return { ok: false, error };
  }
  return { ok: true, value };
}

/** A stored webhook must be one the validators would accept as input. */
function assertStoredIsValid(w: WebhookRecord) {
  expect(
    v.webhookInput({ name: w.name, description: w.description, endpoint: w.endpoint, eventTypes: w.eventTypes }, catalog),
  ).toMatchObject({
    name: w.name,
    description: w.description,
    endpoint: w.endpoint,
    eventTypes: w.eventTypes,
  });
  v.environmentOf(w.environment);
}

/** What was stored passes the guard again (a DNS failure is allowed: such names are accepted). */
async function expectEndpointAllowed(endpoint: string) {
  const error = await checkEndpoint(endpoint, policy).then(
    () => null,
    (e: unknown) => e,
  );
  if (error !== null) expect(error).toBeInstanceOf(TransportError);
}
const policy = createGuard({ resolver });

const created: WebhookRecord[] = [];
const knownIds = () => created.map((w) => w.id);
afterEach(() => expect(unhandled).toEqual([]));

describe('management functions', () => {
  test(
    `webhooks.create: ${RUNS} arbitrary inputs`,
    async () => {
      await fc.assert(
        fc.asyncProperty(createInput, async (input) => {
          const before = await count('iw_webhooks');
          const r = await settle(() => hooks.webhooks.create(input as never));
          if (!r.ok) return void expect(await count('iw_webhooks')).toBe(before);
          created.push(r.value);
          expect(await count('iw_webhooks')).toBe(before + 1);
          expect(await hooks.webhooks.get(r.value.id, { environment: r.value.environment })).toEqual(r.value);
          assertStoredIsValid(r.value);
          await expectEndpointAllowed(r.value.endpoint);
        }),
        { numRuns: RUNS },
      );
      expect(created.length).toBeGreaterThan(RUNS / 20); // the generator does reach the success path
    },
    TIME,
  );

  test(
    `webhooks.update: ${RUNS} arbitrary (id, patch, environment)`,
    async () => {
      if (created.length === 0)
        created.push(await hooks.webhooks.create({ name: 'seed', endpoint: 'https://ok.example/x', eventTypes: ['user.created'] }));
      await fc.assert(
        fc.asyncProperty(
          idLike('webhook', knownIds),
          webhookFields,
          fc.oneof(fc.constant(undefined), fc.constantFrom('default', 'other'), text),
          async (id, patch, environment) => {
            const snapshot = await hooks.webhooks.list({ environment: 'default' });
            const r = await settle(() => hooks.webhooks.update(id as string, patch as never, { environment } as never));
            const after = await hooks.webhooks.list({ environment: 'default' });
            if (!r.ok) return void expect(after).toEqual(snapshot); // nothing half-applied
            expect(await hooks.webhooks.get(r.value.id, { environment: r.value.environment })).toEqual(r.value);
            assertStoredIsValid(r.value);
            const i = created.findIndex((w) => w.id === r.value.id);
            if (i >= 0) created[i] = r.value;
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIME,
  );

  test(
    `get / delete / disable / enable: ${RUNS} arbitrary ids and environments`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('get', 'delete', 'disable', 'enable'),
          idLike('webhook', knownIds),
          fc.oneof(fc.constant(undefined), text, junk),
          async (op, id, environment) => {
            const before = await count('iw_webhooks');
            const r = await settle(() =>
              (hooks.webhooks[op] as (id: string, o: object) => Promise<unknown>)(id as string, { environment }),
            );
            expect(await count('iw_webhooks')).toBe(op === 'delete' && r.ok ? before - 1 : before);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIME,
  );
});

describe('emit', () => {
  const source = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('admin', 'api', 'user') },
    { weight: 2, arbitrary: fc.oneof(text, junk) },
  );
  const type = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...TYPES) }, { weight: 2, arbitrary: fc.oneof(text, junk) });
  const data = fc.oneof(
    fc.dictionary(text, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }),
    fc
      .record({
        user: fc.record(
          { id: text, email: fc.oneof(fc.constant(null), fc.emailAddress(), text), first_name: text, last_name: text },
          { requiredKeys: [] },
        ),
      })
      .map((d) => ({ user: { ...userData().user, ...d.user } })),
    fc.constant(userData()),
    fc.nat({ max: 300_000 }).map((n) => ({ blob: 'x'.repeat(n) })),
    fc.object({ maxDepth: 3, withNullPrototype: true }),
    junk,
  );
  const emitInput = fc.record(
    {
      type,
      source,
      data,
      eventTimestamp: fc.oneof(fc.constant(undefined), fc.date({ noInvalidDate: false }), fc.integer(), fc.double(), junk),
      environment: fc.oneof(fc.constant(undefined), fc.constantFrom('default', 'other'), text, junk),
    },
    { requiredKeys: [] },
  );

  const plausibleEmit = fc.record({
    type: fc.constant(open.code),
    source: fc.constantFrom('admin', 'api', 'user'),
    data: fc.oneof(
      fc.dictionary(text, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }),
      fc.nat({ max: 300_000 }).map((n) => ({ blob: 'é'.repeat(n / 2) })),
    ),
    environment: fc.constantFrom(undefined, 'default', 'other'),
  });

  test(
    `${RUNS} arbitrary events: stored whole with one delivery per subscriber, or refused with nothing written`,
    async () => {
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof({ weight: 10, arbitrary: emitInput }, { weight: 9, arbitrary: plausibleEmit }, { weight: 1, arbitrary: junk }),
          async (input) => {
            const [events, deliveries] = [await count('iw_events'), await count('iw_deliveries')];
            const r = await settle(() => hooks.emit(input as never));
            if (!r.ok) {
              expect([await count('iw_events'), await count('iw_deliveries')]).toEqual([events, deliveries]);
              return;
            }
            accepted++;
            expect(await count('iw_events')).toBe(events + 1);
            expect(await count('iw_deliveries')).toBe(deliveries + r.value.deliveryIds.length);
            const stored = await hooks.events.get(r.value.id, { environment: r.value.environment });
            expect(stored.data).toEqual(JSON.parse(JSON.stringify((input as { data: unknown }).data)));
            expect(Buffer.byteLength(JSON.stringify(stored.data))).toBeLessThanOrEqual(256 * 1024);
          },
        ),
        { numRuns: RUNS },
      );
      expect(accepted).toBeGreaterThan(RUNS / 20);
    },
    TIME,
  );

  test('data that is not JSON (BigInt, cycles) is refused with nothing written', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const before = await count('iw_events');
    for (const data of [{ n: 1n }, cyclic]) {
      const error = await hooks.emit({ type: open.code, source: 'api', data } as EmitInput).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
    }
    expect(await count('iw_events')).toBe(before);
  });
});
