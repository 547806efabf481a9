import { describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { webhooks } from '../../src/better-auth/index.js';
import { createWebhooks, UnknownOptionError } from '../../src/index.js';
import { testKey } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';

/** An unknown option is refused at once, by name, with the nearest known one. */
function refused(run: () => unknown, option: string, suggestion: string | undefined) {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(UnknownOptionError);
  expect(caught).toBeInstanceOf(TypeError);
  const error = caught as UnknownOptionError;
  expect(error.code).toBe('ERR_UNKNOWN_OPTION');
  expect(error.option).toBe(option);
  expect(error.suggestion).toBe(suggestion);
  expect(error.message).toContain(JSON.stringify(option));
  if (suggestion) expect(error.message).toContain(`did you mean ${JSON.stringify(suggestion)}`);
}

describe('unknown options', () => {
  test('createWebhooks: at the top and in every nested object, with the nearest option named', async () => {
    const dir = tempDir();
    const store = sqliteStore({ filename: dir.file('u.db') });
    const base = { store, keys: [await testKey()], issuer: 'https://auth.example.com' };
    refused(() => createWebhooks({ ...base, retry: { schedule: [1000] } } as never), 'retry', 'backoff');
    refused(() => createWebhooks({ ...base, notifer: {} } as never), 'notifer', 'notifier');
    refused(() => createWebhooks({ ...base, delivery: { timeout: 1000 } } as never), 'delivery.timeout', 'delivery.timeoutMs');
    refused(() => createWebhooks({ ...base, delivery: { batchsize: 10 } } as never), 'delivery.batchsize', 'delivery.batchSize');
    refused(() => createWebhooks({ ...base, limits: { maxWebhook: 1 } } as never), 'limits.maxWebhook', 'limits.maxWebhooks');
    refused(() => createWebhooks({ ...base, backoff: { shedule: [1] } } as never), 'backoff.shedule', 'backoff.schedule');
    refused(() => createWebhooks({ ...base, dashboard: { urls: 'x' } } as never), 'dashboard.urls', 'dashboard.url');
    refused(() => createWebhooks({ ...base, dashboard: { theme: { colour: 'red' } } } as never), 'dashboard.theme.colour', undefined);
    refused(() => createWebhooks({ ...base, frobnicate: true } as never), 'frobnicate', undefined);
    // Nothing was started: the store is still the caller's to close.
    await store.close();
    dir.cleanup();
  });

  test('the stores', () => {
    const dir = tempDir();
    refused(() => sqliteStore({ filename: dir.file('u.db'), busyTimeout: 10 } as never), 'busyTimeout', 'busyTimeoutMs');
    refused(() => postgresStore({ connectionString: 'postgres://x@127.0.0.1/x', max: 5 } as never), 'max', undefined);
    refused(
      () => postgresStore({ connectionString: 'postgres://x@127.0.0.1/x', maxConnection: 5 } as never),
      'maxConnection',
      'maxConnections',
    );
    dir.cleanup();
  });

  test("the better-auth plugin: createWebhooks' options but the three it sets, its own, and its event overrides", async () => {
    const keys = [await testKey()];
    refused(() => webhooks({ keys, retry: { schedule: [1] } } as never), 'retry', 'backoff');
    refused(() => webhooks({ keys, store: {} } as never), 'store', undefined);
    refused(() => webhooks({ keys, mange: () => null } as never), 'mange', 'manage');
    refused(() => webhooks({ keys, events: { 'user.create': false } } as never), 'events.user.create', 'events.user.created');
    expect(() => webhooks({ keys, path: '/hooks', events: { 'user.created': false }, delivery: { timeoutMs: 1000 } })).not.toThrow();
  });
});
