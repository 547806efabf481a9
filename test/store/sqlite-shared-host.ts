import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { type SqliteStore, type SqliteStoreOptions, type SqliteTransaction, sqliteStore } from '../../adapters/sqlite/index.js';
import type { EmittedEvent } from '../../src/index.js';
import { createWebhooks, type Webhooks } from '../../src/index.js';
import type { WebhookRecord } from '../../src/model.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';

/** Webhooks of the load, each with its own path on the receiver (the engine's per-webhook limit). */
export const LOAD_WEBHOOKS = 8;

export interface HostOptions {
  journal?: 'wal' | 'delete';
  /** The store on the host's handle (default `sqliteStore({ database, onError })`). */
  store?: (database: Database.Database, file: string) => SqliteStore;
}

export interface SharedHost {
  database: Database.Database;
  file: string;
  store: SqliteStore;
  hooks: Webhooks<SqliteTransaction>;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  signups: WebhookRecord;
  /** What the store's onError was told. */
  warnings: string[];
  /** What the engine's logger was told (warnings and errors). */
  logged: string[];
  load(deliveries: number): Promise<void>;
  received(path: string): Map<string, number>;
}

/**
 * A host application on a SQLite file of its own (`app.db`, with a `users` table), the engine on
 * it through `store(database, file)`, and a real receiver on 127.0.0.1 that answers every
 * delivery after a few milliseconds (one in ten of the load with a 500). `signups` is the webhook that receives `user.created`; the
 * load webhooks receive `user.updated`.
 */
export function useSharedHost(): (options?: HostOptions) => Promise<SharedHost> {
  const cleanups = useCleanups();
  return async function open(options: HostOptions = {}): Promise<SharedHost> {
    const dir = tempDir('iw-shared-');
    cleanups.push(() => dir.cleanup());
    const file = dir.file('app.db');
    const database: Database.Database = new Database(file);
    cleanups.push(() => database.close());
    if (options.journal !== 'delete') database.pragma('journal_mode = WAL');
    database.exec('create table if not exists users (id text primary key, email text not null)');
    const warnings: string[] = [];
    const onError: SqliteStoreOptions['onError'] = (message) => void warnings.push(message);
    const store = options.store?.(database, file) ?? sqliteStore({ database, onError });
    // Every tenth delivery of the load fails (its next attempt is minutes away): recording a
    // failure is a transaction of several statements, the kind that used to be open across awaits.
    const receiver = await startReceiver((req, i) => ({ status: req.path.startsWith('/load/') && i % 10 === 0 ? 500 : 200, delayMs: 2 }));
    cleanups.push(() => receiver.close());
    const logged: string[] = [];
    const hooks = createWebhooks({
      store,
      keys: [await testKey()],
      issuer: 'https://auth.example.com',
      allowPrivateNetworks: true,
      authorize: () => null,
      logger: {
        warn: (m, meta) => logged.push(`${m} ${JSON.stringify(meta ?? {})}`),
        error: (m, meta) => logged.push(`${m} ${JSON.stringify(meta ?? {})}`),
      },
      delivery: { pollIntervalMs: 50 },
      backoff: { schedule: [600_000] }, // a failed delivery's next attempt falls after the test
    });
    cleanups.push(() => hooks.close());
    await hooks.start();
    const signups = await hooks.webhooks.create({ name: 'sign-ups', endpoint: `${receiver.url}/signups`, eventTypes: ['user.created'] });
    for (let i = 0; i < LOAD_WEBHOOKS; i++) {
      await hooks.webhooks.create({ name: `load ${i}`, endpoint: `${receiver.url}/load/${i}`, eventTypes: ['user.updated'] });
    }
    return {
      database,
      file,
      store,
      hooks,
      receiver,
      signups,
      warnings,
      logged,
      /** `deliveries` deliveries of `user.updated` waiting (a multiple of LOAD_WEBHOOKS), emitted outside any transaction. */
      async load(deliveries: number) {
        for (let i = 0; i < deliveries / LOAD_WEBHOOKS; i++) {
          await hooks.emit({ type: 'user.updated', source: 'api', data: userData({ id: `kp_load_${i}` }) });
        }
      },
      /** The delivery ids (`webhook-id`) the receiver got at `path` (or under it, for a path ending in /), with how many times each. */
      received(path: string): Map<string, number> {
        const counts = new Map<string, number>();
        for (const r of receiver.requests.filter((q) => (path.endsWith('/') ? q.path.startsWith(path) : q.path === path))) {
          const id = String(r.headers['webhook-id']);
          counts.set(id, (counts.get(id) ?? 0) + 1);
        }
        return counts;
      },
    };
  };
}

/** The user of sign-up `i`, as the host's row and as the event's data. */
export function user(i: number) {
  return { id: `kp_signup_${String(i).padStart(2, '0')}`, email: `user${i}@example.com` };
}

export function signupEvent(i: number) {
  const { id, email } = user(i);
  return { type: 'user.created' as const, source: 'user' as const, data: userData({ id, email }) };
}

/** Rejects with a clear message when `promise` takes longer than `ms`: a regression fails instead of hanging. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still not settled after ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * The backlog in flight (`backlog` deliveries, the sign-ups starting once `started` have
 * arrived), then `signups` sign-ups at once (the i-th after `i % stagger` ms): every user
 * committed, every event and every delivery of the backlog delivered exactly once, nothing
 * logged. Returns how much of the backlog was still to deliver when the last sign-up returned.
 */
export async function signUpUnderLoad(
  host: SharedHost,
  signUp: (i: number) => Promise<EmittedEvent>,
  { backlog, started, signups, stagger = 1 }: { backlog: number; started: number; signups: number; stagger?: number },
): Promise<number> {
  await host.load(backlog);
  await host.receiver.waitFor(started, 30_000);
  const outcomes = await Promise.allSettled(
    Array.from({ length: signups }, async (_, i) => {
      if (stagger > 1) await new Promise((r) => setTimeout(r, i % stagger));
      return signUp(i);
    }),
  );
  const loadDelivered = () => host.received('/load/').size;
  const backlogLeft = backlog - loadDelivered();
  expect(outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []))).toEqual([]);
  const emitted = outcomes.map((o) => (o as PromiseFulfilledResult<EmittedEvent>).value);
  expect(host.database.prepare('select count(*) as n from users').get()).toEqual({ n: signups });
  await until(
    'the backlog and the sign-ups delivered',
    () => loadDelivered() >= backlog && host.received('/signups').size >= signups,
    60_000,
    20,
  );
  await host.hooks.drain();
  const delivered = host.received('/signups');
  expect([...delivered.keys()].sort()).toEqual(emitted.map((e) => e.deliveryIds[0]).sort());
  expect([...delivered.values()].every((n) => n === 1)).toBe(true);
  // The backlog: each delivery attempted once (the failed tenth's next attempt is minutes away).
  expect(loadDelivered()).toBe(backlog);
  expect([...host.received('/load/').values()].every((n) => n === 1)).toBe(true);
  // Nothing went wrong on the way: no busy database, no transaction inside another, no warning.
  expect(host.logged).toEqual([]);
  expect(host.warnings).toEqual([]);
  expect(host.database.inTransaction).toBe(false);
  return backlogLeft;
}
