import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { renderEventTypes } from '../../scripts/event-types.js';
import { BUILTIN_EVENT_TYPES } from '../../src/catalog/builtins.js';
import { Catalog } from '../../src/catalog/catalog.js';
import type {
  EventMap,
  RoleCreatedData,
  UserAuthenticationFailedData,
  UserCreatedData,
  UserCreatedEvent,
  WebhookEvent,
  WebhookEventMap,
} from '../../src/receiver/index.js';

const generated = new URL('../../src/receiver/event-types.generated.ts', import.meta.url);

describe('generated event types', () => {
  test('the committed file is exactly what the catalog renders (GEN_EVENT_TYPES=1 rewrites it)', () => {
    const expected = renderEventTypes(BUILTIN_EVENT_TYPES);
    if (process.env.GEN_EVENT_TYPES === '1') writeFileSync(generated, expected);
    expect(readFileSync(generated, 'utf8')).toBe(expected);
  });

  test('every built-in code is a member of the union, and nothing else is', () => {
    const text = readFileSync(generated, 'utf8');
    const mapBody = text.slice(text.indexOf('export type WebhookEventMap'));
    const codes = [...mapBody.matchAll(/^ {2}'([a-z_.]+)': /gm)].map((m) => m[1]);
    expect(codes).toEqual(BUILTIN_EVENT_TYPES.map((d) => d.code));
  });

  test('a payload the catalog accepts has the generated type (checked by tsc and at run time)', () => {
    const data: UserCreatedData = {
      user: {
        id: 'kp_1',
        email: null,
        first_name: 'Ada',
        last_name: '',
        phone: null,
        username: null,
        is_password_reset_requested: false,
        is_suspended: false,
        organizations: [{ code: 'org_1', permissions: ['read', { key: 'write' }], roles: null }],
      },
    };
    const failed: UserAuthenticationFailedData = { user: { email: 'x@example.com', reason: null } };
    const role: RoleCreatedData = { role: { id: 'r1', key: 'admin', extra: 1 } };
    const catalog = new Catalog();
    expect(() => catalog.validateEvent('user.created', data)).not.toThrow();
    expect(() => catalog.validateEvent('user.authentication_failed', failed)).not.toThrow();
    expect(() => catalog.validateEvent('role.created', role)).not.toThrow();
  });
});

describe('type-level (enforced by `npx tsc -p tsconfig.json --noEmit`)', () => {
  test('the union is discriminated on type', () => {
    expectTypeOf<WebhookEvent['type']>().toEqualTypeOf<keyof WebhookEventMap>();
    expectTypeOf<Extract<WebhookEvent, { type: 'user.created' }>>().toEqualTypeOf<UserCreatedEvent>();
    const narrow = (e: WebhookEvent) => {
      if (e.type === 'user.created') expectTypeOf(e.data.user.email).toEqualTypeOf<string | null>();
      if (e.type === 'organization.deleted') expectTypeOf(e.data.organization.code).toEqualTypeOf<string>();
      if (e.type === 'user.authentication_failed') expectTypeOf(e.data.user.id).toEqualTypeOf<string | null | undefined>();
    };
    expect(typeof narrow).toBe('function');
  });

  test('closed schemas stay closed, open ones keep unknown extras', () => {
    const closed: UserCreatedData['user'] = {
      id: 'x',
      email: null,
      first_name: '',
      last_name: '',
      phone: null,
      username: null,
      is_password_reset_requested: false,
      is_suspended: false,
      organizations: [],
      // @ts-expect-error user objects are additionalProperties: false
      nickname: 'x',
    };
    const open: RoleCreatedData = { role: { id: 'r', key: 'k', future_field: true } };
    expectTypeOf(open.role.future_field).toEqualTypeOf<unknown>();
    expect(closed && open).toBeTruthy();
  });

  test('the built-in map fits EventMap, so hosts can extend it with their own types', () => {
    expectTypeOf<WebhookEventMap>().toExtend<EventMap>();
  });
});
