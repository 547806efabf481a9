import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { type Webhooks, WebhooksError, type WebhooksOptions } from '../../src/index.js';
import { LIMITS } from '../../src/validate.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';

// Input bounds on what the engine stores, and SQL that treats hostile strings as data.

const cleanups = useCleanups();

const blob = { code: 'host.blob', name: 'Blob', origin: 'host', schema: { type: 'object' as const } };

async function engine(overrides: Partial<WebhooksOptions> = {}) {
  const e = await makeEngine({ eventTypes: [blob], ...overrides });
  const store = sqliteStore({ filename: e.filename });
  cleanups.push(
    () => e.close(),
    () => store.close(),
  );
  await e.hooks.start();
  const count = async (table: 'iw_events' | 'iw_deliveries' | 'iw_webhooks') =>
    Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(store.kysely)).rows[0]!.n);
  return { ...e, count };
}

async function code(p: Promise<unknown>): Promise<string> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhooksError);
  return (error as WebhooksError).code;
}

const create = (hooks: Webhooks, fields: Record<string, unknown>) =>
  hooks.webhooks.create({ name: 'w', endpoint: 'http://127.0.0.1:9/x', eventTypes: ['user.created'], ...fields } as never);

describe('event data size', () => {
  test('256 KiB of JSON by default: at the limit accepted, one byte over refused with a clear error, nothing written', async () => {
    const { hooks, count } = await engine();
    await create(hooks, { eventTypes: ['host.blob'] });
    const limit = 256 * 1024;
    const wrapper = Buffer.byteLength('{"blob":""}');
    await hooks.emit({ type: 'host.blob', source: 'api', data: { blob: 'x'.repeat(limit - wrapper) } });
    expect(await count('iw_events')).toBe(1);
    const error = await hooks
      .emit({ type: 'host.blob', source: 'api', data: { blob: 'x'.repeat(limit - wrapper + 1) } })
      .catch((e: WebhooksError) => e);
    expect(error).toMatchObject({ code: 'ERR_PAYLOAD_TOO_LARGE', field: 'data' });
    expect((error as Error).message).toContain(String(limit));
    // Bytes, not characters: 2-byte characters reach the limit at half the length.
    expect(await code(hooks.emit({ type: 'host.blob', source: 'api', data: { blob: 'é'.repeat(limit / 2) } }))).toBe(
      'ERR_PAYLOAD_TOO_LARGE',
    );
    expect(await count('iw_events')).toBe(1);
    expect(await count('iw_deliveries')).toBe(1);
  });

  test('the limit is configurable', async () => {
    const { hooks, count } = await engine({ limits: { maxPayloadBytes: 1024 } });
    expect(await code(hooks.emit({ type: 'host.blob', source: 'api', data: { blob: 'x'.repeat(1024) } }))).toBe('ERR_PAYLOAD_TOO_LARGE');
    await hooks.emit({ type: 'host.blob', source: 'api', data: { blob: 'x'.repeat(1000) } });
    expect(await count('iw_events')).toBe(1);
  });
});

describe('field lengths', () => {
  test('name, description, endpoint and event type list are capped; the longest allowed value round-trips', async () => {
    const { hooks, count } = await engine();
    const emoji = '🦄'; // 2 UTF-16 units, 4 UTF-8 bytes: the cap is in characters
    const longestName = emoji.repeat(LIMITS.nameLength);
    const longestDescription = '𝕏'.repeat(LIMITS.descriptionLength);
    const base = 'http://127.0.0.1:9/';
    const longestEndpoint = base + 'a'.repeat(LIMITS.endpointLength - base.length);
    const w = await create(hooks, { name: longestName, description: longestDescription, endpoint: longestEndpoint });
    expect(await hooks.webhooks.get(w.id)).toMatchObject({ name: longestName, description: longestDescription, endpoint: longestEndpoint });

    const tooLong: Array<Record<string, unknown>> = [
      { name: emoji.repeat(LIMITS.nameLength + 1) },
      { description: '𝕏'.repeat(LIMITS.descriptionLength + 1) },
      { endpoint: `${longestEndpoint}a` },
      { eventTypes: new Array(LIMITS.eventTypesPerWebhook + 1).fill('user.created') },
      { name: 'x'.repeat(1_000_000) },
    ];
    for (const fields of tooLong) {
      expect(await code(create(hooks, fields))).toBe('ERR_VALIDATION');
      expect(await code(hooks.webhooks.update(w.id, fields))).toBe('ERR_VALIDATION');
    }
    expect(await count('iw_webhooks')).toBe(1);
    expect(await hooks.webhooks.get(w.id)).toEqual(w);
  });
});

describe('hostile strings are data, never SQL', () => {
  const hostile = [
    `'; DROP TABLE iw_webhooks; --`,
    `" OR "1"="1`,
    `' OR '1'='1' --`,
    `\\'; SELECT sqlite_version(); --`,
    `%_[]^*?$1:name@p0`,
    '`backticks` and $$dollar$$ quotes',
    'mixed direction עברית العربية, zero\u200dwidth joiner', // U+2028 and bidi controls are refused now: test/security/text-fields.test.ts
    'Zalgo: Z̸̡̢̛̗̘̙̜̝̞̟̠ą̷̡̢̛̗̘̙̜̝̞̟̠',
    '🦄'.repeat(200),
  ];

  test('names and descriptions round-trip exactly; the table survives', async () => {
    const { hooks, count } = await engine();
    for (const s of hostile) {
      const name = [...s].slice(0, LIMITS.nameLength).join('');
      const w = await create(hooks, { name, description: s });
      expect(await hooks.webhooks.get(w.id)).toMatchObject({ name: name.trim(), description: s });
    }
    expect(await count('iw_webhooks')).toBe(hostile.length);
  });

  test('NUL and other control characters are refused in names; NUL refused in descriptions', async () => {
    const { hooks, count } = await engine();
    for (const fields of [{ name: 'a\u0000b' }, { name: 'a\u001bb' }, { description: 'a\u0000b' }])
      expect(await code(create(hooks, fields))).toBe('ERR_VALIDATION');
    expect(await count('iw_webhooks')).toBe(0);
  });

  test('event data with quotes, NUL, lone surrogates and long unicode round-trips through the store', async () => {
    const { hooks } = await engine();
    const data = {
      blob: hostile,
      nul: 'a\u0000b',
      lone: 'x\ud800y',
      quote: "'",
      long: '😀'.repeat(20_000),
      nested: { "k'ey": { '"': null } },
    };
    const ev = await hooks.emit({ type: 'host.blob', source: 'api', data });
    expect((await hooks.events.get(ev.id)).data).toEqual(data);
  });

  test('hostile ids and environments find nothing and leak nothing across tenants', async () => {
    const { hooks } = await engine();
    const w = await create(hooks, {});
    for (const id of [`webhook_' OR '1'='1`, `${w.id}' --`, `webhook_%`, `webhook_${'\u0000'}`]) {
      expect(await code(hooks.webhooks.get(id))).toBe('ERR_NOT_FOUND');
      expect(await code(hooks.webhooks.delete(id))).toBe('ERR_NOT_FOUND');
    }
    for (const environment of [`default' OR '1'='1`, `%`, `' UNION SELECT * FROM iw_webhooks --`]) {
      expect(await hooks.webhooks.list({ environment })).toEqual([]);
      expect(await code(hooks.webhooks.get(w.id, { environment }))).toBe('ERR_NOT_FOUND');
    }
    // NUL cannot be stored (PostgreSQL refuses it): an input environment with one is refused, on both stores.
    expect(await code(hooks.webhooks.list({ environment: 'default\u0000' }))).toBe('ERR_VALIDATION');
    expect(await hooks.webhooks.list()).toHaveLength(1);
  });

  test('strings that are not well-formed UTF-16 are refused where the store would rewrite them', async () => {
    // A lone surrogate has no UTF-8 form: SQLite returns other text than was written, and node-pg
    // sends U+FFFD, so 'tenant-\ud800' and 'tenant-\udbff' would share rows. Refused instead.
    const { hooks } = await engine();
    const a = await create(hooks, {}).then(() => hooks.webhooks.list());
    expect(await code(create(hooks, { environment: 'tenant-\ud800' }))).toBe('ERR_VALIDATION');
    expect(await code(create(hooks, { name: 'x\udfff' }))).toBe('ERR_VALIDATION');
    expect(await code(create(hooks, { description: 'x\ud800' }))).toBe('ERR_VALIDATION');
    expect(await hooks.webhooks.list()).toEqual(a);
  });
});

describe('the adapters build SQL only from parameters', () => {
  test('no raw SQL from values: sql.raw is unused, sql.lit only takes literals or constants', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts')) files.push(path);
      }
    };
    walk('adapters');
    walk('src');
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(text, `${file} uses sql.raw`).not.toMatch(/sql\.raw\s*\(/);
      for (const m of text.matchAll(/sql\.(lit|id|ref|table)\(([^)]*)\)/g)) {
        expect(m[2]!.trim(), `${file}: sql.${m[1]}(${m[2]}) takes a value that is not a literal or constant`).toMatch(
          /^('[^']*'|"[^"]*"|[A-Z][A-Z0-9_]*|table)$/,
        );
      }
      expect(text, `${file} interpolates into a raw statement`).not.toMatch(/\.(exec|prepare)\(\s*`[^`]*\$\{/);
    }
  });
});
