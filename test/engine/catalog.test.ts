import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { Catalog } from '../../src/catalog/catalog.js';
import type { EmitInput, EventTypeDefinition } from '../../src/index.js';
import { BUILTIN_EVENT_TYPES, createWebhooks, ValidationError, WebhooksError } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';

const cleanups = useCleanups();

const SAMPLES: Record<string, Record<string, unknown>> = {
  'user.created': userData(),
  'user.updated': userData({
    email: null,
    phone: '+15555550100',
    username: 'ada',
    last_name: '',
    organizations: [{ code: 'org_1', permissions: ['read:users'], roles: [{ id: 'r1', key: 'admin' }] }],
  }),
  'user.deleted': { user: { id: 'kp_1' } },
  'user.authenticated': { user: { id: 'kp_1' }, organization: { code: 'org_1' } },
  'user.authentication_failed': { user: { email: 'who@example.com' } },
  'organization.created': { organization: { code: 'org_1', name: 'Acme' } },
  'organization.updated': { organization: { code: 'org_1', name: 'Acme Inc' } },
  'organization.deleted': { organization: { code: 'org_1' } },
  'membership.created': { membership: { id: 'm1', organization_code: 'org_1', user_id: 'kp_1', roles: ['member'] } },
  'membership.updated': { membership: { id: 'm1', organization_code: 'org_1', user_id: 'kp_1', roles: [{ id: 'admin', key: 'admin' }] } },
  'membership.deleted': { membership: { id: 'm1', organization_code: 'org_1', user_id: 'kp_1', roles: null } },
  'invitation.created': {
    invitation: { id: 'i1', organization_code: 'org_1', email: 'a@example.com', roles: ['member'], status: 'pending' },
  },
  'invitation.accepted': { invitation: { id: 'i1', organization_code: 'org_1', email: 'a@example.com', roles: null, status: 'accepted' } },
  'invitation.rejected': { invitation: { id: 'i1', organization_code: 'org_1', email: null, roles: null, status: 'rejected' } },
  'invitation.canceled': {
    invitation: { id: 'i1', organization_code: 'org_1', email: null, roles: null, status: 'canceled', inviter_id: 'kp_2' },
  },
  'role.created': { role: { id: 'r1', key: 'admin', name: 'Admin' } },
  'role.updated': { role: { id: 'r1', key: 'admin', name: 'Administrator' } },
  'role.deleted': { role: { id: 'r1' } },
  'permission.created': { permission: { id: 'p1', key: 'read:users', name: 'Read users' } },
  'permission.updated': { permission: { id: 'p1', key: 'read:users', name: 'Read users', description: null } },
  'permission.deleted': { permission: { id: 'p1' } },
  'subscriber.created': { subscriber: { id: 's1', email: 'news@example.com' } },
  'access_request.created': { access_request: { id: 'ar1', user_id: 'kp_1' } },
};

describe('event catalog', () => {
  test('has every built-in identity event type, each with a schema that accepts a real sample', () => {
    const codes = BUILTIN_EVENT_TYPES.map((t) => t.code).sort();
    expect(codes).toEqual(Object.keys(SAMPLES).sort());
    const catalog = new Catalog();
    for (const [type, data] of Object.entries(SAMPLES)) expect(() => catalog.validateEvent(type, data), type).not.toThrow();
  });

  test.each([
    ['missing user', {}, 'data.user', /is required/],
    ['email must be string or null', userData({ email: 5 }), 'data.user.email', /must be a string or null/],
    ['email format', userData({ email: 'not-an-email' }), 'data.user.email', /email address/],
    ['missing last_name', { user: { ...userData().user, last_name: undefined } }, 'data.user.last_name', /is required/],
    ['last_name null is not allowed (may be empty string)', userData({ last_name: null }), 'data.user.last_name', /must be a string/],
    ['is_suspended boolean', userData({ is_suspended: 'no' }), 'data.user.is_suspended', /must be a boolean/],
    ['organizations array', userData({ organizations: {} }), 'data.user.organizations', /must be an array/],
    ['organization code required', userData({ organizations: [{}] }), 'data.user.organizations[0].code', /is required/],
    ['unexpected user field', userData({ password: 'x' }), 'data.user.password', /not an allowed property/],
  ])('user.created rejects %s', async (_label, data, field, message) => {
    const catalog = new Catalog();
    const err = (() => {
      try {
        catalog.validateEvent('user.created', data);
      } catch (e) {
        return e as WebhooksError;
      }
    })();
    expect(err).toBeInstanceOf(WebhooksError);
    expect(err).toMatchObject({ code: 'ERR_VALIDATION', field });
    expect(err!.message).toMatch(message);
  });

  test('hosts register their own types; emit accepts them and rejects bad data', async () => {
    const env = await makeEngine({
      eventTypes: [
        {
          code: 'billing.invoice_paid',
          name: 'Invoice paid',
          origin: 'acme',
          schema: {
            type: 'object',
            required: ['invoice_id', 'amount'],
            properties: { invoice_id: { type: 'string' }, amount: { type: 'integer', minimum: 0 } },
          },
        },
      ],
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    expect(hooks.eventTypes.list().find((t) => t.code === 'billing.invoice_paid')).toMatchObject({
      origin: 'acme',
      name: 'Invoice paid',
      id: 'evtype_billing_invoice_paid',
    });
    await hooks.webhooks.create({ name: 'b', endpoint: 'https://example.com/b', eventTypes: ['billing.invoice_paid'] });
    const ev = await hooks.emit({ type: 'billing.invoice_paid', source: 'api', data: { invoice_id: 'in_1', amount: 1200 } });
    expect(ev.deliveryIds).toHaveLength(1);
    await expect(
      hooks.emit({ type: 'billing.invoice_paid', source: 'api', data: { invoice_id: 'in_1', amount: -1 } }),
    ).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'data.amount' });
  });

  test('a host schema using a keyword the validator would not enforce is refused at startup', () => {
    expect(() => new Catalog([{ code: 'x.y', name: 'X', origin: 'h', schema: { type: 'object', pattern: '^a' } as never }])).toThrow(
      /keyword "pattern" is not supported/,
    );
    expect(() => new Catalog([{ code: 'Bad Code', name: 'X', origin: 'h', schema: {} }])).toThrow(TypeError);
    expect(() => new Catalog([{ code: 'user.created', name: 'X', origin: 'h', schema: {} }])).toThrow(/already/);
  });

  // A test event carries the type's example, so a type without a usable one is refused before
  // the engine exists, not when someone first presses "send test event".
  const invoicePaid: EventTypeDefinition = {
    code: 'billing.invoice_paid',
    name: 'Invoice paid',
    origin: 'acme',
    schema: {
      type: 'object',
      required: ['invoice_id', 'amount'],
      properties: { invoice_id: { type: 'string' }, amount: { type: 'integer', minimum: 0 } },
    },
  };
  test.each<[string, EventTypeDefinition, RegExp]>([
    [
      'an example that does not validate against its schema',
      { ...invoicePaid, example: { invoice_id: 'in_1', amount: -5 } },
      /^eventTypes: "billing\.invoice_paid" has an `example` that does not match its schema.*data\.amount must be >= 0/,
    ],
    [
      'an example that is not an object',
      { ...invoicePaid, example: ['in_1'] as never },
      /^eventTypes: "billing\.invoice_paid" has an `example` that does not match its schema.*data must be an object/,
    ],
    [
      'no example, and none can be built from its schema (the smallest string is too long for maxLength)',
      {
        ...invoicePaid,
        schema: { type: 'object', required: ['currency'], properties: { currency: { type: 'string', maxLength: 3 } } },
      },
      /^eventTypes: "billing\.invoice_paid" needs an `example`: none could be built from its schema.*data\.currency must be at most 3 characters long/,
    ],
  ])('a host type with %s is refused with a TypeError by createWebhooks', async (_label, type, message) => {
    const dir = tempDir('iw-catalog-');
    cleanups.push(() => dir.cleanup());
    const store = sqliteStore({ filename: dir.file('webhooks.db') });
    cleanups.push(() => store.close());
    const keys = [await testKey()];
    const options = { store, keys, issuer: 'https://id.example.com', logger: { warn: () => {}, error: () => {} } };
    const refused = (() => {
      try {
        createWebhooks({ ...options, eventTypes: [type] });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).message).toMatch(message);
    // The same options with a valid example start (the refusal was the example's, nothing else).
    const hooks = createWebhooks({ ...options, eventTypes: [{ ...invoicePaid, example: { invoice_id: 'in_1', amount: 0 } }] });
    await hooks.start();
    await hooks.close();
  });
});

describe('subjects (ordered delivery per subject, docs/ordering.md)', () => {
  test('built-in types name theirs; the pointer is followed into data; missing or not text: none', () => {
    const catalog = new Catalog();
    const subject = (code: string) => catalog.entry(code)?.subject;
    expect(subject('user.created')).toBe('/user/id');
    expect(subject('organization.deleted')).toBe('/organization/code');
    expect(BUILTIN_EVENT_TYPES.every((t) => typeof t.subject === 'string')).toBe(true);
    expect(catalog.subjectOf('user.updated', userData({ id: 'kp_42' }))).toBe('kp_42');
    expect(catalog.subjectOf('organization.updated', { organization: { code: 'org_7', name: 'Acme' } })).toBe('org_7');
    expect(catalog.subjectOf('user.authentication_failed', { user: { email: 'x@example.com' } })).toBeNull();
    expect(catalog.subjectOf('user.authentication_failed', { user: { id: null } })).toBeNull();
    expect(catalog.subjectOf('user.deleted', { user: { id: '' } })).toBeNull();
  });

  test('a host type names its own by a JSON pointer (escapes followed), or has none; a bad pointer is refused at startup', () => {
    const schema = { type: 'object' } as const;
    const catalog = new Catalog([
      { code: 'billing.invoice_paid', name: 'Invoice paid', origin: 'acme', schema, subject: '/account/a~1b' },
      { code: 'billing.ping', name: 'Ping', origin: 'acme', schema },
    ]);
    expect(catalog.subjectOf('billing.invoice_paid', { account: { 'a/b': 12 } })).toBe('12');
    expect(catalog.subjectOf('billing.ping', { account: 'c' })).toBeNull();
    expect(catalog.entry('billing.ping')?.subject).toBeNull();
    expect(() => new Catalog([{ code: 'billing.bad', name: 'Bad', origin: 'acme', schema, subject: 'account_id' }])).toThrow(TypeError);
  });
});

describe('emit validation: nothing is written for bad input', () => {
  const base = { type: 'user.created', source: 'admin' as const, data: userData() };
  test.each([
    ['unknown type', { ...base, type: 'user.exploded' }, 'ERR_UNKNOWN_EVENT_TYPE', 'type'],
    ['missing type', { ...base, type: undefined }, 'ERR_VALIDATION', 'type'],
    ['bad source', { ...base, source: 'robot' }, 'ERR_VALIDATION', 'source'],
    ['data not an object', { ...base, data: [1] }, 'ERR_VALIDATION', 'data'],
    ['data not matching', { ...base, data: userData({ id: 1 }) }, 'ERR_VALIDATION', 'data.user.id'],
    ['bad event timestamp', { ...base, eventTimestamp: Number.NaN }, 'ERR_VALIDATION', 'eventTimestamp'],
    [
      'data too large',
      { ...base, type: 'user.deleted', data: { user: { id: 'kp_1', blob: 'x'.repeat(300_000) } } },
      'ERR_PAYLOAD_TOO_LARGE',
      'data',
    ],
  ])('%s', async (_label, input, code, field) => {
    const env = await makeEngine();
    cleanups.push(() => env.close());
    await env.hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created', 'user.deleted'] });
    await expect(env.hooks.emit(input as never)).rejects.toMatchObject({ code, field });
    expect((await env.hooks.deliveries.list()).deliveries).toEqual([]);
  });

  test('data that is not JSON (BigInt, a cycle) is a ValidationError; the event is stored in its JSON form', async () => {
    const env = await makeEngine();
    cleanups.push(() => env.close());
    const cyclic: Record<string, unknown> = { id: 'kp_1' };
    cyclic.self = cyclic;
    await expect(env.hooks.emit({ type: 'user.deleted', source: 'admin', data: { user: { id: 1n } } } as never)).rejects.toMatchObject({
      code: 'ERR_VALIDATION',
      field: 'data',
    });
    await expect(
      env.hooks.emit({ type: 'user.deleted', source: 'admin', data: { user: cyclic } } as unknown as EmitInput),
    ).rejects.toMatchObject({
      code: 'ERR_VALIDATION',
      field: 'data',
    });
    const ev = await env.hooks.emit({
      type: 'user.deleted',
      source: 'admin',
      data: { user: { id: 'kp_1', gone: undefined, at: new Date(0) } },
    });
    expect(ev.data).toEqual({ user: { id: 'kp_1', at: '1970-01-01T00:00:00.000Z' } });
    expect((await env.hooks.events.get(ev.id)).data).toEqual(ev.data);
  });

  test('a toJSON() that yields nothing, at the top or nested, is a ValidationError naming where; a Date still serialises', async () => {
    const env = await makeEngine();
    cleanups.push(() => env.close());
    await env.hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.deleted'] });
    const empty = () => ({ toJSON: () => undefined });
    const cases: Array<[unknown, string]> = [
      [empty(), 'data'],
      [{ user: empty() }, 'data.user'],
      [{ user: { id: 'kp_1', profile: { avatar: empty() } } }, 'data.user.profile.avatar'],
      [{ user: { id: 'kp_1', tags: ['a', empty()] } }, 'data.user.tags[1]'],
      [{ user: { id: 'kp_1', f: { toJSON: () => () => 1 } } }, 'data.user.f'],
      [{ user: { toJSON: () => ({ id: 'kp_1', inner: empty() }) } }, 'data.user.inner'],
    ];
    for (const [data, field] of cases) {
      const attempt = env.hooks.emit({ type: 'user.deleted', source: 'admin', data } as unknown as EmitInput);
      await expect(attempt, field).rejects.toBeInstanceOf(ValidationError);
      await expect(attempt, field).rejects.toMatchObject({ code: 'ERR_VALIDATION', field, message: expect.stringContaining('toJSON()') });
    }
    expect((await env.hooks.deliveries.list()).deliveries).toEqual([]);
    const ev = await env.hooks.emit({
      type: 'user.deleted',
      source: 'admin',
      data: { user: { id: 'kp_1', at: new Date(0), custom: { toJSON: () => 'x' }, nothing: undefined } },
    });
    expect(ev.data).toEqual({ user: { id: 'kp_1', at: '1970-01-01T00:00:00.000Z', custom: 'x' } });
  });

  test('the payload cap is configurable', async () => {
    const env = await makeEngine({ limits: { maxPayloadBytes: 100 } });
    cleanups.push(() => env.close());
    await expect(env.hooks.emit({ type: 'user.deleted', source: 'admin', data: { user: { id: 'x'.repeat(200) } } })).rejects.toMatchObject({
      code: 'ERR_PAYLOAD_TOO_LARGE',
    });
  });
});
