import { describe, expect, test } from 'vitest';
import type { WebhookInput } from '../../src/index.js';
import { WebhooksError } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';

const cleanups = useCleanups();

async function engine(overrides: Parameters<typeof makeEngine>[0] = {}) {
  const env = await makeEngine(overrides);
  cleanups.push(() => env.close());
  return env;
}

const ok = { name: 'CRM sync', endpoint: 'https://crm.example.com/hooks', eventTypes: ['user.created'] } satisfies WebhookInput;

describe('webhooks: create / get / list / update / delete', () => {
  test('webhooks created within one millisecond are listed in the order they were created', async () => {
    const { hooks } = await engine(); // a ManualClock that does not move: every id has the same millisecond
    const names = Array.from({ length: 20 }, (_, i) => `w${i}`);
    for (const name of names) await hooks.webhooks.create({ ...ok, name });
    const listed = await hooks.webhooks.list();
    expect(listed.map((w) => w.name)).toEqual(names);
    expect(new Set(listed.map((w) => w.createdAt)).size).toBe(1);
  });

  test('round trip', async () => {
    const { hooks, clock } = await engine();
    const created = await hooks.webhooks.create({ ...ok, description: 'Sends users to the CRM' });
    expect(created).toMatchObject({
      name: 'CRM sync',
      description: 'Sends users to the CRM',
      endpoint: 'https://crm.example.com/hooks',
      eventTypes: ['user.created'],
      status: 'enabled',
      environment: 'default',
      createdAt: clock.now(),
    });
    expect(await hooks.webhooks.get(created.id)).toEqual(created);
    await clock.advance(1000);
    const second = await hooks.webhooks.create({ ...ok, name: 'Second', eventTypes: ['user.deleted', 'user.deleted', 'role.created'] });
    expect(second.eventTypes).toEqual(['user.deleted', 'role.created']); // duplicates folded
    expect((await hooks.webhooks.list()).map((w) => w.name)).toEqual(['CRM sync', 'Second']);

    const updated = await hooks.webhooks.update(created.id, {
      name: '  Renamed  ',
      eventTypes: ['user.updated'],
      endpoint: 'https://new.example.com/h',
      description: null,
    });
    expect(updated).toMatchObject({
      name: 'Renamed',
      eventTypes: ['user.updated'],
      endpoint: 'https://new.example.com/h',
      description: null,
      updatedAt: clock.now(),
    });
    expect(updated.createdAt).toBe(created.createdAt);

    await hooks.webhooks.delete(created.id);
    await expect(hooks.webhooks.get(created.id)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    await expect(hooks.webhooks.delete(created.id)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect(await hooks.webhooks.list()).toHaveLength(1);
  });

  test('environments are invisible to each other', async () => {
    const { hooks } = await engine();
    const prod = await hooks.webhooks.create({ ...ok, environment: 'prod' });
    await hooks.webhooks.create({ ...ok, environment: 'staging' });
    expect((await hooks.webhooks.list({ environment: 'prod' })).map((w) => w.id)).toEqual([prod.id]);
    expect(await hooks.webhooks.list()).toEqual([]);
    for (const call of [
      () => hooks.webhooks.get(prod.id, { environment: 'staging' }),
      () => hooks.webhooks.update(prod.id, { name: 'x' }, { environment: 'staging' }),
      () => hooks.webhooks.delete(prod.id, { environment: 'staging' }),
      () => hooks.webhooks.disable(prod.id, { environment: 'staging' }),
      () => hooks.webhooks.enable(prod.id, { environment: 'staging' }),
      () => hooks.webhooks.get(prod.id),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    }
    expect(await hooks.webhooks.get(prod.id, { environment: 'prod' })).toMatchObject({ name: 'CRM sync', status: 'enabled' });
    const ev = await hooks.emit({ type: 'user.deleted', source: 'admin', data: { user: { id: 'kp_1' } }, environment: 'prod' });
    await expect(hooks.events.get(ev.id, { environment: 'staging' })).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    expect(await hooks.events.get(ev.id, { environment: 'prod' })).toMatchObject({
      type: 'user.deleted',
      source: 'admin',
      data: { user: { id: 'kp_1' } },
    });
  });

  test('the per-environment cap is enforced with ERR_LIMIT_REACHED and writes nothing', async () => {
    const { hooks } = await engine({ limits: { maxWebhooks: (env) => (env === 'free' ? 2 : 3) } });
    await hooks.webhooks.create({ ...ok, environment: 'free' });
    await hooks.webhooks.create({ ...ok, environment: 'free' });
    const err = await hooks.webhooks.create({ ...ok, environment: 'free' }).catch((e) => e);
    expect(err).toBeInstanceOf(WebhooksError);
    expect(err).toMatchObject({ code: 'ERR_LIMIT_REACHED', limit: 2 });
    expect(err.message).toMatch(/maximum of 2 webhooks/);
    expect(await hooks.webhooks.list({ environment: 'free' })).toHaveLength(2);
    // Another environment has its own count.
    for (let i = 0; i < 3; i++) await hooks.webhooks.create({ ...ok, environment: 'pro' });
    await expect(hooks.webhooks.create({ ...ok, environment: 'pro' })).rejects.toMatchObject({ code: 'ERR_LIMIT_REACHED' });
    // Deleting frees a slot.
    const [first] = await hooks.webhooks.list({ environment: 'free' });
    await hooks.webhooks.delete(first!.id, { environment: 'free' });
    await hooks.webhooks.create({ ...ok, environment: 'free' });
  });

  test('the cap holds under concurrent creates', async () => {
    const { hooks } = await engine({ limits: { maxWebhooks: 5 } });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => hooks.webhooks.create(ok)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(await hooks.webhooks.list()).toHaveLength(5);
  });
});

describe('webhooks: every validation error is a WebhooksError naming the field, and writes nothing', () => {
  const long = (n: number) => 'a'.repeat(n);
  const cases: Array<[string, Record<string, unknown>, string, RegExp, string?]> = [
    ['missing name', { ...ok, name: undefined }, 'name', /name is required/],
    ['non-string name', { ...ok, name: 42 }, 'name', /name is required/],
    ['blank name', { ...ok, name: '   ' }, 'name', /must not be empty/],
    ['long name', { ...ok, name: long(256) }, 'name', /at most 255/],
    ['control chars in name', { ...ok, name: 'a\u0007b' }, 'name', /control characters/],
    ['non-string description', { ...ok, description: 5 }, 'description', /must be a string/],
    ['long description', { ...ok, description: long(1001) }, 'description', /at most 1000/],
    ['missing endpoint', { ...ok, endpoint: undefined }, 'endpoint', /endpoint is required/],
    ['relative endpoint', { ...ok, endpoint: '/hooks' }, 'endpoint', /absolute URL/],
    ['ftp endpoint', { ...ok, endpoint: 'ftp://example.com/x' }, 'endpoint', /http or https/],
    ['javascript endpoint', { ...ok, endpoint: 'javascript:alert(1)' }, 'endpoint', /http or https/],
    ['credentials in endpoint', { ...ok, endpoint: 'https://u:p@example.com/' }, 'endpoint', /user name or password/],
    ['fragment in endpoint', { ...ok, endpoint: 'https://example.com/#x' }, 'endpoint', /fragment/],
    ['long endpoint', { ...ok, endpoint: `https://example.com/${long(2048)}` }, 'endpoint', /at most 2048/],
    ['missing event types', { ...ok, eventTypes: undefined }, 'event_types', /must be an array/],
    ['empty event types', { ...ok, eventTypes: [] }, 'event_types', /at least one/],
    ['too many event types', { ...ok, eventTypes: Array(51).fill('user.created') }, 'event_types', /at most 50/],
    ['non-string event type', { ...ok, eventTypes: ['user.created', 7] }, 'event_types[1]', /must be a string/],
    [
      'unknown event type',
      { ...ok, eventTypes: ['user.created', 'user.exploded'] },
      'event_types[1]',
      /not a known event type/,
      'ERR_UNKNOWN_EVENT_TYPE',
    ],
    ['bad environment', { ...ok, environment: '' }, 'environment', /environment must be/],
  ];
  test.each(cases)('%s', async (_label, input, field, message, code = 'ERR_VALIDATION') => {
    const { hooks } = await engine();
    const err = await hooks.webhooks.create(input as never).catch((e) => e);
    expect(err).toBeInstanceOf(WebhooksError);
    expect(err).toMatchObject({ code, field });
    expect(err.message).toMatch(message);
    expect(await hooks.webhooks.list()).toEqual([]);
  });

  test('update validates the same way and leaves the record untouched', async () => {
    const { hooks } = await engine();
    const wh = await hooks.webhooks.create(ok);
    for (const patch of [{ name: '' }, { endpoint: 'nope' }, { eventTypes: [] }, { eventTypes: ['nope.nope'] }, { description: 1 }]) {
      await expect(hooks.webhooks.update(wh.id, patch as never)).rejects.toBeInstanceOf(WebhooksError);
    }
    expect(await hooks.webhooks.get(wh.id)).toEqual(wh);
    await expect(hooks.webhooks.update(wh.id, null as never)).rejects.toMatchObject({ code: 'ERR_VALIDATION' });
  });

  test('ids that cannot exist are simply not found', async () => {
    const { hooks } = await engine();
    for (const id of ['', 'event_123', `webhook_${'x'.repeat(500)}`, 42 as never]) {
      await expect(hooks.webhooks.get(id)).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    }
    await expect(hooks.events.get('event_nope')).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    await expect(hooks.deliveries.get('msg_nope')).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
    await expect(hooks.deliveries.list({ limit: 0 })).rejects.toMatchObject({ code: 'ERR_VALIDATION', field: 'limit' });
  });
});
