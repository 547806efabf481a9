import { describe, expect, expectTypeOf, test } from 'vitest';
import type { sqliteStore } from '../../adapters/sqlite/index.js';
import { createWebhooks, type EmitInput, type EventType, type WebhookInput, type Webhooks } from '../../src/index.js';

/**
 * The sending side is typed from the catalog (the receiving side already was). These checks run
 * in `npm run typecheck` (tsc over test/): an unused `@ts-expect-error` is itself an error, so
 * each misspelling below MUST fail to compile for the typecheck to pass.
 */

// A host's own event types, as a host declares them (here on the source entry point).
declare module '../../src/index.js' {
  interface CustomEventTypes {
    'billing.invoice_paid': { invoice_id: string; amount: number };
    'host.blob': Record<string, unknown>;
  }
}

declare const hooks: Webhooks;

describe('typed emit (compile time)', () => {
  test('built-in types carry their own data; misspellings are compile errors', () => {
    const ok: EmitInput = {
      type: 'user.created',
      source: 'admin',
      data: {
        user: {
          id: 'kp_1',
          email: null,
          first_name: 'Ada',
          last_name: '',
          phone: null,
          username: null,
          is_password_reset_requested: false,
          is_suspended: false,
          organizations: [],
        },
      },
    };
    // @ts-expect-error an unknown type
    const unknownType: EmitInput = { type: 'user.exploded', source: 'admin', data: { usr: 1 } };
    // @ts-expect-error the right type, the wrong data
    const wrongData: EmitInput = { type: 'user.deleted', source: 'admin', data: { usr: 1 } };
    // @ts-expect-error source is 'admin' | 'api' | 'user'
    const wrongSource: EmitInput = { type: 'user.deleted', source: 'cron', data: { user: { id: 'kp_1' } } };
    const create = () => {
      // @ts-expect-error a misspelt event type in a subscription
      void hooks.webhooks.create({ name: 'x', endpoint: 'https://example.com/', eventTypes: ['user.craeted'] });
    };
    expect([ok, unknownType, wrongData, wrongSource, create].length).toBe(5);
  });

  test("a host's own type is accepted once declared, with its own data", () => {
    const paid: EmitInput = { type: 'billing.invoice_paid', source: 'api', data: { invoice_id: 'in_1', amount: 1200 } };
    // @ts-expect-error its data is typed too
    const unpaid: EmitInput = { type: 'billing.invoice_paid', source: 'api', data: { invoice: 'in_1' } };
    const input: WebhookInput = { name: 'b', endpoint: 'https://example.com/b', eventTypes: ['billing.invoice_paid', 'user.created'] };
    expectTypeOf<'billing.invoice_paid'>().toMatchTypeOf<EventType>();
    expectTypeOf<'user.created'>().toMatchTypeOf<EventType>();
    expect([paid, unpaid, input].length).toBe(3);
  });

  test('the host transaction is typed by the store: a wrong object is a compile error', () => {
    const never = (store: ReturnType<typeof sqliteStore>, event: EmitInput) => {
      const typed = createWebhooks({ store, keys: [], issuer: 'https://auth.example.com' });
      void typed.emit(event, { transaction: store.kysely }); // a Kysely on the same database
      // @ts-expect-error not a Kysely transaction
      void typed.emit(event, { transaction: { query: () => {} } });
    };
    expect(typeof never).toBe('function');
  });

  test('emit narrows on type', () => {
    const describe = (e: EmitInput) => (e.type === 'organization.created' ? e.data.organization.code : e.type);
    expectTypeOf(describe).returns.toEqualTypeOf<string>();
  });
});
