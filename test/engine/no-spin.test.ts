import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresStore } from '../../adapters/postgres/index.js';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import type { Store, WebhooksOptions } from '../../src/index.js';
import { makeEngine } from '../helpers/engine.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * The loop cannot spin: whatever the endpoints answer (429 and 503 with any Retry-After, 410,
 * a 429 to a rate-limited webhook, 500) and whatever the webhooks are (paced, ordered, both), the
 * scheduler's store calls in a simulated second are bounded by the attempts it started and
 * recorded in it, not by the deliveries that wait. Time is a ManualClock: a loop that spins at one
 * instant would run until the store wrapper below stops it.
 */

/** One answer of an endpoint. */
interface Answer {
  status: 200 | 410 | 429 | 500 | 503;
  retryAfter?: string;
}

/** Per simulated second, the store calls and the attempts that began or were recorded. */
interface Tally {
  /** Counting starts with the engine (the set-up's writes are not the loop's). */
  on: boolean;
  calls: Map<number, number>;
  work: Map<number, number>;
  /** Most calls at one instant of the clock (a spin makes this unbounded). */
  maxAtInstant: number;
}

/** At one instant, more calls than this is a spin: the wrapper then fails every call, so a broken loop stops rather than hangs the file. */
const SPIN_STOP = 5_000;

/** The store, each call counted at the clock's second; the attempts' records counted as work. */
function counting(store: Store, now: () => number, tally: Tally): Store {
  let instant = Number.NaN;
  let atInstant = 0;
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'isTransient') return value;
      return (...args: unknown[]) => {
        if (!tally.on) return (value as (...a: unknown[]) => unknown).apply(target, args);
        const t = now();
        if (t !== instant) {
          instant = t;
          atInstant = 0;
        }
        atInstant++;
        tally.maxAtInstant = Math.max(tally.maxAtInstant, atInstant);
        const second = Math.floor(t / 1000);
        tally.calls.set(second, (tally.calls.get(second) ?? 0) + 1);
        if (key === 'recordAttempts') tally.work.set(second, (tally.work.get(second) ?? 0) + 2 * (args[0] as unknown[]).length);
        if (atInstant > SPIN_STOP) return Promise.reject(new Error(`spin: ${atInstant} store calls at one instant`));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const answer: fc.Arbitrary<Answer> = fc.oneof(
  fc.constant<Answer>({ status: 200 }),
  fc.constant<Answer>({ status: 500 }),
  fc.constant<Answer>({ status: 410 }),
  fc.record({
    status: fc.constantFrom<429 | 503>(429, 503),
    retryAfter: fc.option(
      fc.oneof(
        fc.integer({ min: 0, max: 5 }).map(String),
        fc.constant('3600'),
        fc.constant('soon'),
        fc.integer({ min: -2, max: 4 }).map((s) => `@${s}`), // an HTTP date, s seconds from the clock's now
      ),
      { nil: undefined },
    ),
  }),
);

const webhookSpec = fc.record({
  environment: fc.constantFrom('a', 'b'),
  rateLimit: fc.option(fc.integer({ min: 1, max: 20 }), { nil: null }),
  ordered: fc.boolean(),
  answers: fc.array(answer, { minLength: 1, maxLength: 4 }),
  deliveries: fc.integer({ min: 0, max: 90 }),
});

const scenario = fc.record({
  webhooks: fc.array(webhookSpec, { minLength: 1, maxLength: 4 }),
  batchSize: fc.constantFrom(4, 16, 64),
  perWebhookConcurrency: fc.constantFrom(1, 8),
  disableOnGone: fc.boolean(),
});

/** Store calls allowed in a second: a few dozen for the timers and chores, and a handful per attempt begun or recorded. */
const bound = (work: number) => 60 + 6 * work;

function describeNoSpin(name: string, makeStore: () => Promise<{ store: Store; close(): Promise<void> }>, runs: number) {
  describe(`the loop cannot spin (${name})`, () => {
    const worst = { calls: 0, work: 0, atInstant: 0 };
    test('random mixes of answers, paces and orders: store calls per simulated second stay bounded by the work', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          const tally: Tally = { on: false, calls: new Map(), work: new Map(), maxAtInstant: 0 };
          const { store, close } = await makeStore();
          let clockNow = () => 0;
          const counted = counting(store, () => clockNow(), tally);
          const next = new Map<string, number>();
          const receiver = await startReceiver((req) => {
            const i = Number(req.path.slice(2));
            const spec = s.webhooks[i]!;
            const n = next.get(req.path) ?? 0;
            next.set(req.path, n + 1);
            const a = spec.answers[n % spec.answers.length]!;
            if (a.retryAfter === undefined) return a.status;
            const value = a.retryAfter.startsWith('@')
              ? new Date(clockNow() + Number(a.retryAfter.slice(1)) * 1000).toUTCString()
              : a.retryAfter;
            return { status: a.status, headers: { 'retry-after': value } };
          });
          const options: Partial<WebhooksOptions> = {
            store: counted,
            disableOnGone: s.disableOnGone,
            delivery: { timeoutMs: 2000, batchSize: s.batchSize, perWebhookConcurrency: s.perWebhookConcurrency },
            backoff: { schedule: [1000, 3000, 10_000], jitter: 0 },
          };
          const engine = await makeEngine(options);
          clockNow = () => engine.clock.now();
          try {
            const { hooks, clock } = engine;
            for (const [i, w] of s.webhooks.entries()) {
              const created = await hooks.webhooks.create({
                environment: w.environment,
                name: `w${i}`,
                endpoint: `${receiver.url}/w${i}`,
                eventTypes: ['user.created'],
                rateLimit: w.rateLimit === null ? null : { perSecond: w.rateLimit },
                ordering: w.ordered ? 'per-subject' : 'none',
              });
              for (let k = 0; k < w.deliveries; k++) await hooks.webhooks.test(created.id, { environment: w.environment }).catch(() => {});
            }
            tally.on = true;
            await hooks.start();
            // 30 simulated seconds in tenths: every timer that falls due runs, attempts included.
            for (let step = 0; step < 300; step++) {
              await clock.advance(100);
              await hooks.drain();
            }
            await hooks.close();
          } finally {
            await engine.close();
            await receiver.close();
            await close();
          }
          worst.atInstant = Math.max(worst.atInstant, tally.maxAtInstant);
          expect(tally.maxAtInstant).toBeLessThan(SPIN_STOP);
          for (const [second, calls] of tally.calls) {
            const work = tally.work.get(second) ?? 0;
            if (calls > worst.calls) Object.assign(worst, { calls, work });
            if (calls > bound(work)) throw new Error(`second ${second}: ${calls} store calls for ${work} attempts begun or recorded`);
          }
        }),
        {
          numRuns: runs,
          // The reproductions first: the account holder's 100 test sends to an endpoint answering
          // 429 with Retry-After (it froze a SQLite host), and a rate-limited webhook slowed by 429s.
          examples: [
            [
              {
                webhooks: [
                  { environment: 'a', rateLimit: null, ordered: false, answers: [{ status: 429, retryAfter: '1' }], deliveries: 100 },
                ],
                batchSize: 64,
                perWebhookConcurrency: 8,
                disableOnGone: false,
              },
            ],
            [
              {
                webhooks: [
                  { environment: 'a', rateLimit: null, ordered: false, answers: [{ status: 503, retryAfter: '2' }], deliveries: 100 },
                ],
                batchSize: 64,
                perWebhookConcurrency: 8,
                disableOnGone: false,
              },
            ],
            [
              {
                webhooks: [{ environment: 'a', rateLimit: 5, ordered: false, answers: [{ status: 429 }], deliveries: 100 }],
                batchSize: 64,
                perWebhookConcurrency: 8,
                disableOnGone: false,
              },
            ],
          ],
          seed: Number(process.env.NO_SPIN_SEED ?? 0x5eed),
          endOnFailure: true,
        },
      );
      console.info(
        `[no-spin ${name}] most store calls in a simulated second: ${worst.calls} (work ${worst.work}); at one instant: ${worst.atInstant}`,
      );
    }, 240_000);
  });
}

describeNoSpin(
  'SQLite',
  async () => {
    const dir = tempDir();
    const store = sqliteStore({ filename: dir.file('spin.db') });
    return { store, close: async () => dir.cleanup() };
  },
  8,
);

let pg: TestPostgres;
beforeAll(async () => {
  pg = await useTestPostgres('no_spin');
});
afterAll(async () => {
  await pg?.close();
});

describeNoSpin(
  'PostgreSQL',
  async () => {
    const schema = await createSchema(pg.url, 'spin');
    const store = postgresStore({ connectionString: schema.url });
    return { store, close: () => schema.drop() };
  },
  4,
);
