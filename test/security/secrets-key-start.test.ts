import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import type { Store } from '../../src/index.js';
import { createSealer } from '../../src/secrets/seal.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * `secretsKey` is checked when the engine starts: its length and that it is random at
 * createWebhooks, and that it opens the secrets stored at start(), on both databases. Before, a
 * wrong or missing key showed only as failed deliveries, and an all-zero key was accepted.
 */
const cleanups = useCleanups();
let pg: TestPostgres;
beforeAll(async () => {
  pg = await useTestPostgres('secrets_key_start');
});
afterAll(async () => {
  await pg?.close();
});

test('a key that is not 32 random bytes is a TypeError before anything is sealed', () => {
  const bad = [
    Buffer.alloc(32).toString('base64'),
    Buffer.alloc(32, 7),
    'ab'.repeat(32),
    Buffer.from('x'.repeat(16) + 'y'.repeat(16)),
    'c2hvcnQ=',
  ];
  for (const secretsKey of bad) expect(() => createSealer(secretsKey), String(secretsKey)).toThrow(TypeError);
  expect(() => createSealer(randomBytes(32).toString('base64'))).not.toThrow();
  // An older key listed after the sealing one, to open what it sealed, is not judged.
  expect(() => createSealer([randomBytes(32).toString('base64'), Buffer.alloc(32).toString('base64')])).not.toThrow();
});

describe.each([
  ['SQLite', async (): Promise<(() => Store) | undefined> => undefined],
  [
    'PostgreSQL',
    async (): Promise<(() => Store) | undefined> => {
      const schema = await createSchema(pg.url, 'skey');
      cleanups.push(() => schema.drop());
      return () => postgresStore({ connectionString: schema.url });
    },
  ],
] as const)('start() opens what is stored (%s)', (_name, makeStore) => {
  test('the right key starts; a wrong key and no key fail start() with ERR_SECRETS_KEY_REQUIRED; a new key first with the old one starts', async () => {
    const open = await makeStore();
    const again = () => (open ? { store: open() } : {});
    const key = randomBytes(32).toString('base64');
    const env = await makeEngine({ secretsKey: key, ...again() });
    cleanups.push(() => env.close());
    await env.hooks.start();
    await env.hooks.webhooks.create({
      name: 's',
      endpoint: 'https://r.example.com/h',
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
      headers: { 'X-Api-Key': 'k-123456' },
    });
    const wrong = await env.restart({ secretsKey: randomBytes(32).toString('base64'), ...again() });
    await expect(wrong.start()).rejects.toMatchObject({ code: 'ERR_SECRETS_KEY_REQUIRED' });
    const none = await env.restart({ secretsKey: undefined, ...again() });
    await expect(none.start()).rejects.toMatchObject({ code: 'ERR_SECRETS_KEY_REQUIRED' });
    const newKey = randomBytes(32).toString('base64');
    const rotating = await env.restart({ secretsKey: [newKey, key], ...again() });
    await expect(rotating.start()).resolves.toBeUndefined();
    // A second webhook sealed under the new key; the old key dropped before a reseal: the first
    // webhook's secrets no longer open, the second's do. start() goes on and says which.
    await rotating.webhooks.create({
      name: 't',
      endpoint: 'https://r.example.com/t',
      eventTypes: ['user.created'],
      format: 'standard-webhooks',
    });
    const dropped = await env.restart({ secretsKey: newKey, ...again() });
    await expect(dropped.start()).resolves.toBeUndefined();
    expect(env.logged.some((line) => line.includes('do not open under secretsKey'))).toBe(true);
  });
});
