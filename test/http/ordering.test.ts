import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { useCleanups } from '../helpers/cleanup.js';
import { createBody, engineAndClient } from './setup.js';

/**
 * Ordered delivery per subject on the wire (docs/ordering.md): `ordering` on POST and PATCH
 * /api/v1/webhooks (`none` by default), shown on every read, a bad value a 400 INVALID_ORDERING
 * with nothing written; the event catalog lists each type's subject. Every response is checked
 * against the OpenAPI document (setup.ts).
 */
const cleanups = useCleanups();
const setup = () => engineAndClient('direct', cleanups);

describe('ordering over the management API', () => {
  test('created none by default or per-subject; patched; null in a PATCH leaves it; stored', async () => {
    const { api, engine } = await setup();
    const read = async (id: string) => (await api('GET', `/api/v1/webhooks/${id}`)).json.webhook.ordering;
    const plain = (await api('POST', '/api/v1/webhooks', { body: createBody() })).json.webhook.id as string;
    expect(await read(plain)).toBe('none');
    const created = await api('POST', '/api/v1/webhooks', { body: createBody({ name: 'Ordered', ordering: 'per-subject' }) });
    expect(created.status).toBe(200);
    const id = created.json.webhook.id as string;
    expect(await read(id)).toBe('per-subject');
    expect((await api('PATCH', `/api/v1/webhooks/${id}`, { body: { name: 'Still', ordering: null } })).status).toBe(200);
    expect(await read(id)).toBe('per-subject');
    expect((await api('PATCH', `/api/v1/webhooks/${id}`, { body: { ordering: 'none' } })).status).toBe(200);
    expect(await read(id)).toBe('none');
    expect((await api('PATCH', `/api/v1/webhooks/${plain}`, { body: { ordering: 'per-subject' } })).status).toBe(200);
    expect((await api('GET', '/api/v1/webhooks')).json.webhooks.map((w: { ordering: string }) => w.ordering).sort()).toEqual([
      'none',
      'per-subject',
    ]);
    const db = new Database(engine.file, { readonly: true });
    const rows = db.prepare('select name, ordering from iw_webhooks order by name').all();
    db.close();
    expect(rows).toEqual([
      { name: 'CRM sync', ordering: 'per-subject' },
      { name: 'Still', ordering: null },
    ]);
  });

  test.each([['fifo'], [true], ['PER-SUBJECT']])('refused with 400 INVALID_ORDERING, nothing written: %j', async (value) => {
    const { api, engine } = await setup();
    const res = await api('POST', '/api/v1/webhooks', { body: createBody({ ordering: value }) });
    expect(res.status).toBe(400);
    expect(res.json.errors[0].code).toBe('INVALID_ORDERING');
    const id = (await api('POST', '/api/v1/webhooks', { body: createBody() })).json.webhook.id;
    const patch = await api('PATCH', `/api/v1/webhooks/${id}`, { body: { name: 'changed', ordering: value } });
    expect(patch.status).toBe(400);
    expect(patch.json.errors[0].code).toBe('INVALID_ORDERING');
    const db = new Database(engine.file, { readonly: true });
    expect(db.prepare('select name, ordering from iw_webhooks').all()).toEqual([{ name: 'CRM sync', ordering: null }]);
    db.close();
  });

  test("the catalog lists each type's subject: the user's id, the organization's code", async () => {
    const { api } = await setup();
    const types = (await api('GET', '/api/v1/event_types')).json.event_types as Array<{ code: string; subject: string | null }>;
    const subject = Object.fromEntries(types.map((t) => [t.code, t.subject]));
    expect(subject['user.created']).toBe('/user/id');
    expect(subject['user.deleted']).toBe('/user/id');
    expect(subject['organization.updated']).toBe('/organization/code');
    expect(subject['role.created']).toBe('/role/id');
  });
});
