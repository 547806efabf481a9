import { describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import type { Transport, Webhooks } from '../../src/index.js';
import { until, useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';

const cleanups = useCleanups();

/** An engine whose endpoint answers 500 to everything, one webhook, one event emitted at t0 and its first attempt made. */
async function failingOnce(overrides: Parameters<typeof makeEngine>[0]) {
  const attempts: number[] = [];
  const env = await makeEngine({
    transport: { send: async () => (attempts.push(env.clock.now()), { status: 500, excerpt: '' }) },
    ...overrides,
  });
  cleanups.push(() => env.close());
  const { hooks, clock } = env;
  await hooks.start();
  await hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
  const t0 = clock.now();
  await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
  await hooks.drain();
  return { attempts, hooks, clock, t0 };
}

/** A SQLite store on a file of its own, removed after the test. */
function tempStore(file: string) {
  const dir = tempDir();
  cleanups.push(() => dir.cleanup());
  return sqliteStore({ filename: dir.file(file) });
}

/** A transport that holds every request until released, and tracks how many are in flight. */
/**
 * Earns every webhook of these environments its full bound before a test of bounds (slow start,
 * decision 026: a webhook starts at one slot and earns one more per success): `events` answered
 * deliveries each, while `answer(true)` makes the transport answer at once.
 */
async function earnBounds(hooks: Webhooks, answer: (now: boolean) => void, environments: string[], events = 8): Promise<void> {
  answer(true);
  for (let i = 0; i < events; i++)
    for (const environment of environments) await hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment });
  await hooks.drain();
  answer(false);
}

function gatedTransport() {
  let inflight = 0;
  const perHost = new Map<string, number>();
  const stats = { max: 0, maxPerHost: new Map<string, number>(), sent: 0 };
  let open: (() => void) | null = null;
  let gate = new Promise<void>((r) => (open = r));
  const control = { pass: false };
  const transport: Transport = {
    async send(req) {
      if (control.pass) return { status: 200, excerpt: '' }; // earning bounds: answered at once, not counted
      const host = new URL(req.url).pathname;
      inflight++;
      perHost.set(host, (perHost.get(host) ?? 0) + 1);
      stats.max = Math.max(stats.max, inflight);
      stats.maxPerHost.set(host, Math.max(stats.maxPerHost.get(host) ?? 0, perHost.get(host)!));
      await gate;
      inflight--;
      perHost.set(host, perHost.get(host)! - 1);
      stats.sent++;
      return { status: 200, excerpt: '' };
    },
  };
  return {
    transport,
    stats,
    control,
    release() {
      open!();
      gate = new Promise<void>((r) => (open = r));
    },
    releaseAll() {
      gate = Promise.resolve();
      open!();
    },
    get inflight() {
      return inflight;
    },
    /** Requests in flight whose path starts with `/{prefix}/`. */
    inflightOf(prefix: string) {
      let n = 0;
      for (const [path, count] of perHost) if (path.startsWith(`/${prefix}/`)) n += count;
      return n;
    },
  };
}

/** Customer `small`: one webhook at /retry with one delivery; customer `big`: one webhook at /busy with `busy` deliveries. */
async function retryBesideBusy(hooks: Webhooks, busy: number, before?: () => Promise<void>) {
  await hooks.webhooks.create({ name: 'retry', endpoint: 'https://example.com/retry', eventTypes: ['user.created'], environment: 'small' });
  await hooks.webhooks.create({ name: 'busy', endpoint: 'https://example.com/busy', eventTypes: ['user.created'], environment: 'big' });
  await before?.();
  await hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment: 'small' });
  for (let i = 0; i < busy; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment: 'big' });
}

describe('scheduler', () => {
  test('global and per-endpoint concurrency are bounded', async () => {
    const gated = gatedTransport();
    const env = await makeEngine({
      transport: gated.transport,
      delivery: { concurrency: 6, perWebhookConcurrency: 2, batchSize: 4, pollIntervalMs: 3600_000 },
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    await hooks.start();
    // Three customers, so the global bound (6) is what binds, not one customer's fair share
    // (here 2, and up to 6 - 2 = 4 with nobody else waiting).
    const environments = ['e1', 'e1', 'e2', 'e3'];
    for (const [i, name] of ['a', 'b', 'c', 'd'].entries())
      await hooks.webhooks.create({
        name,
        endpoint: `https://example.com/${name}`,
        eventTypes: ['user.created'],
        environment: environments[i],
      });
    await earnBounds(hooks, (on) => (gated.control.pass = on), ['e1', 'e2', 'e3'], 2);
    for (let i = 0; i < 10; i++)
      for (const environment of ['e1', 'e2', 'e3'])
        await hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment });
    await until('six attempts in flight', () => gated.inflight >= 6);
    await new Promise((r) => setTimeout(r, 50));
    expect(gated.inflight).toBe(6);
    gated.releaseAll();
    await hooks.drain();
    expect(gated.stats.sent).toBe(40);
    expect(gated.stats.max).toBe(6);
    for (const [, n] of gated.stats.maxPerHost) expect(n).toBeLessThanOrEqual(2);
    for (const environment of ['e1', 'e2', 'e3']) {
      const delivered = (await hooks.deliveries.list({ status: 'delivered', limit: 100, environment })).deliveries.length;
      // (with the two events each that earned the bounds)
      expect([environment, delivered]).toEqual([environment, environment === 'e1' ? 24 : 12]);
    }
  });

  test('while one customer is over its share, the reserve goes to customers with nothing in flight: one slot each', async () => {
    // 12 slots, 2 per webhook (the reserve: the last 2 slots), a share of 3 per customer.
    const gated = gatedTransport();
    const env = await makeEngine({
      transport: gated.transport,
      delivery: { concurrency: 12, perWebhookConcurrency: 2, perEnvironmentConcurrency: 3, batchSize: 12, pollIntervalMs: 3600_000 },
    });
    cleanups.push(() => env.close());
    cleanups.push(async () => gated.releaseAll()); // first, so close() does not wait on the gate
    const { hooks } = env;
    await hooks.start();
    const hook = (environment: string, i: number) =>
      hooks.webhooks.create({
        name: `${environment}${i}`,
        endpoint: `https://example.com/${environment}/${i}`,
        eventTypes: ['user.created'],
        environment,
      });
    for (let i = 0; i < 5; i++) await hook('noisy', i);
    for (let i = 0; i < 2; i++) await hook('second', i);
    await hook('third', 0);
    await earnBounds(hooks, (on) => (gated.control.pass = on), ['noisy', 'second', 'third'], 2);
    const emit = (environment: string) => hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment });
    // The noisy customer alone: it borrows idle slots up to the hard bound, 12 - 2.
    for (let i = 0; i < 4; i++) await emit('noisy');
    await until('the noisy customer at its hard bound', () => gated.inflightOf('noisy') === 10);
    // A second customer with four deliveries gets ONE reserved slot, not the whole reserve.
    for (let i = 0; i < 2; i++) await emit('second');
    await until('the second customer started', () => gated.inflightOf('second') === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect([gated.inflightOf('noisy'), gated.inflightOf('second')]).toEqual([10, 1]);
    // So a third customer's delivery still starts at once.
    await emit('third');
    await until('the third customer started', () => gated.inflightOf('third') === 1);
    expect(gated.inflight).toBe(12);
    gated.releaseAll();
    await hooks.drain();
    expect(gated.stats.sent).toBe(20 + 4 + 1);
  });

  test('one busy webhook with a deep backlog: every claimed delivery is attempted, none given back, each claimed once', async () => {
    const store = tempStore('busy.db');
    const counts = { claims: 0, claimed: 0, released: 0 };
    const claimDue = store.claimDue.bind(store);
    const release = store.release.bind(store);
    store.claimDue = async (args) => {
      const rows = await claimDue(args);
      counts.claims++;
      counts.claimed += rows.length;
      return rows;
    };
    store.release = async (ids, ...rest) => {
      counts.released += ids.length;
      return release(ids, ...rest);
    };
    let inflight = 0;
    let max = 0;
    const env = await makeEngine({
      store,
      // Defaults otherwise: 64 slots, 8 per webhook, claims of 64.
      transport: {
        async send() {
          max = Math.max(max, ++inflight);
          await new Promise((r) => setTimeout(r, 1));
          inflight--;
          return { status: 200, excerpt: '' };
        },
      },
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    await hooks.webhooks.create({ name: 'busy', endpoint: 'https://example.com/busy', eventTypes: ['user.created'] });
    for (let i = 0; i < 400; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.start();
    await hooks.drain();
    const left = await hooks.deliveries.list({ status: 'pending', limit: 100 });
    expect(max).toBeLessThanOrEqual(8);
    expect(counts.released).toBe(0);
    expect(counts.claimed).toBe(400);
    expect(left.deliveries).toEqual([]);
  });

  test('one customer with more webhooks than its share: it borrows idle slots without giving claimed deliveries back', async () => {
    const store = tempStore('share.db');
    const counts = { claimed: 0, released: 0 };
    const claimDue = store.claimDue.bind(store);
    const release = store.release.bind(store);
    store.claimDue = async (args) => {
      const rows = await claimDue(args);
      counts.claimed += rows.length;
      return rows;
    };
    store.release = async (ids, ...rest) => {
      counts.released += ids.length;
      return release(ids, ...rest);
    };
    let inflight = 0;
    let max = 0;
    const env = await makeEngine({
      store,
      // Defaults otherwise: 64 slots, 8 per webhook, a share of 16 per customer, claims of 64.
      transport: {
        async send() {
          max = Math.max(max, ++inflight);
          await new Promise((r) => setTimeout(r, 2));
          inflight--;
          return { status: 200, excerpt: '' };
        },
      },
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    for (let i = 0; i < 10; i++) {
      await hooks.webhooks.create({ name: `w${i}`, endpoint: `https://example.com/w${i}`, eventTypes: ['user.created'] });
    }
    for (let i = 0; i < 60; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.start();
    await hooks.drain();
    const left = await hooks.deliveries.list({ status: 'pending', limit: 100 });
    expect(left.deliveries).toEqual([]);
    // Alone on the engine it goes past its share of 16 (nobody else has due work), never past
    // the hard bound (all but the reserve of 8), and keeps what it claimed over its share.
    expect(max).toBeGreaterThan(16);
    expect(max).toBeLessThanOrEqual(56);
    expect(counts.released).toBe(0);
    expect(counts.claimed).toBe(600);
  });

  test('a customer alone over its share claims a full batch ahead of its free slots and holds the rest: none given back, never past the hard bound', async () => {
    const store = tempStore('ahead.db');
    // Requests hang until the test ends them, oldest first.
    const hanging: Array<() => void> = [];
    let sent = 0;
    let max = 0;
    let warming = false;
    const transport: Transport = {
      async send() {
        if (warming) return { status: 200, excerpt: '' };
        await new Promise<void>((done) => {
          hanging.push(done);
          max = Math.max(max, hanging.length);
        });
        sent++;
        return { status: 200, excerpt: '' };
      },
    };
    const finish = (n: number) => {
      for (const done of hanging.splice(0, n)) done();
    };
    // The rows of each claim, and whether it came once the customer was at its hard bound.
    const claims: Array<{ rows: number; refill: boolean }> = [];
    let refill = false;
    let released = 0;
    // Claims wait while the test emits, so the first one finds the whole backlog.
    let emitted: Promise<void> = Promise.resolve();
    const claimDue = store.claimDue.bind(store);
    const release = store.release.bind(store);
    store.claimDue = async (args) => {
      await emitted;
      const rows = await claimDue(args);
      if (rows.length > 0) claims.push({ rows: rows.length, refill });
      return rows;
    };
    store.release = async (ids, ...rest) => {
      released += ids.length;
      return release(ids, ...rest);
    };
    // Defaults otherwise: 64 slots, 8 per webhook, a share of 16 per customer, claims of 64.
    const env = await makeEngine({ store, transport });
    cleanups.push(() => env.close());
    cleanups.push(async () => {
      // first, so close() does not wait on the requests
      transport.send = async () => ({ status: 200, excerpt: '' });
      finish(hanging.length);
    });
    const { hooks } = env;
    for (let i = 0; i < 10; i++)
      await hooks.webhooks.create({ name: `w${i}`, endpoint: `https://example.com/w${i}`, eventTypes: ['user.created'] });
    await hooks.start();
    await earnBounds(hooks, (on) => (warming = on), ['default']);
    claims.length = 0;
    let allEmitted!: () => void;
    emitted = new Promise((r) => (allEmitted = r));
    for (let i = 0; i < 60; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    allEmitted();
    // Alone, it fills every slot but the reserve: 56 requests hang.
    await until('the customer at its hard bound', () => hanging.length === 56);
    refill = true;
    // 40 end: the 8 held start, and the claim that refills the free slots (24 to 40 of them,
    // depending on how many had ended when it was asked) takes a full batch of 64; what cannot
    // start waits here for the next slots.
    finish(40);
    await until('the customer back at its hard bound', () => hanging.length === 56);
    expect(Math.max(...claims.filter((c) => c.refill).map((c) => c.rows))).toBe(64);
    expect(max).toBe(56);
    transport.send = async () => (sent++, { status: 200, excerpt: '' });
    finish(hanging.length);
    await hooks.drain();
    expect(released).toBe(0);
    expect(claims.reduce((n, c) => n + c.rows, 0)).toBe(600);
    expect(sent).toBe(600);
    expect((await hooks.deliveries.list({ status: 'pending', limit: 100 })).deliveries).toEqual([]);
  });

  test('what a customer over its share holds here gives way: the slots it frees go to another customer with due work', async () => {
    // 12 slots, 2 per webhook (the reserve: the last 2), a share of 3 per customer.
    const pending: Array<{ path: string; done: () => void }> = [];
    let warming = false;
    const transport: Transport = {
      async send(req) {
        if (warming) return { status: 200, excerpt: '' };
        await new Promise<void>((done) => pending.push({ path: new URL(req.url).pathname, done }));
        return { status: 200, excerpt: '' };
      },
    };
    const inflightOf = (customer: string) => pending.filter((p) => p.path.startsWith(`/${customer}/`)).length;
    const finish = (customer: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const at = pending.findIndex((p) => p.path.startsWith(`/${customer}/`));
        pending.splice(at, 1)[0]!.done();
      }
    };
    const env = await makeEngine({
      transport,
      delivery: { concurrency: 12, perWebhookConcurrency: 2, perEnvironmentConcurrency: 3, batchSize: 12, pollIntervalMs: 3600_000 },
    });
    cleanups.push(() => env.close());
    cleanups.push(async () => {
      // first, so close() does not wait on the transport
      transport.send = async () => ({ status: 200, excerpt: '' });
      for (const p of pending.splice(0)) p.done();
    });
    const { hooks } = env;
    for (let i = 0; i < 5; i++)
      await hooks.webhooks.create({
        name: `big${i}`,
        endpoint: `https://example.com/big/${i}`,
        eventTypes: ['user.created'],
        environment: 'big',
      });
    for (let i = 0; i < 3; i++)
      await hooks.webhooks.create({
        name: `small${i}`,
        endpoint: `https://example.com/small/${i}`,
        eventTypes: ['user.created'],
        environment: 'small',
      });
    const emit = (environment: string) => hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment });
    await hooks.start();
    await earnBounds(hooks, (on) => (warming = on), ['big', 'small'], 2);
    // Alone, the big customer borrows idle slots up to its hard bound (12 - 2), and holds what
    // its first claims brought beyond that.
    for (let i = 0; i < 8; i++) await emit('big');
    await until('the big customer at its hard bound', () => inflightOf('big') === 10);
    // The small customer's work arrives: it gets one reserved slot at once.
    for (let i = 0; i < 3; i++) await emit('small');
    await until('the small customer started', () => inflightOf('small') === 1);
    // Six of the big customer's attempts end: their slots go to the small customer (up to its
    // share of 3), not to what the big customer holds here.
    finish('big', 6);
    await until('the small customer at its share', () => inflightOf('small') === 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(inflightOf('small')).toBe(3);
    expect(pending.length).toBeLessThanOrEqual(12);
    // Once the small customer has nothing more due, the big one takes the idle slots again.
    transport.send = async () => ({ status: 200, excerpt: '' });
    for (const p of pending.splice(0)) p.done();
    await hooks.drain();
    const delivered = async (environment: string) =>
      (await hooks.deliveries.list({ status: 'delivered', limit: 100, environment })).deliveries.length;
    expect([await delivered('big'), await delivered('small')]).toEqual([40 + 10, 9 + 6]); // (+ what earned the bounds)
  });

  test('around a busy webhook, a claim that left it out and found nothing is not asked again until something could have come due, and a retry coming due is still claimed on time', async () => {
    const store = tempStore('proof.db');
    // Claims that left a webhook out and came back short: what the proof saves. A refill that
    // happens to leave out the retry's webhook (its attempt still in flight) and fills up with
    // busy deliveries is an ordinary claim, whether it comes depends on timing: not counted.
    let claimsLeavingOut = 0;
    const claimDue = store.claimDue.bind(store);
    store.claimDue = async (args) => {
      const claimed = await claimDue(args);
      if ((args.excludeWebhookIds?.length ?? 0) + (args.excludeEnvironments?.length ?? 0) > 0 && claimed.length < args.limit)
        claimsLeavingOut++;
      return claimed;
    };
    const order: string[] = [];
    let busyRequests = 0;
    let env!: Awaited<ReturnType<typeof makeEngine>>;
    env = await makeEngine({
      store,
      backoff: { schedule: [10_000], jitter: 0 },
      transport: {
        async send(req) {
          const path = new URL(req.url).pathname;
          order.push(path);
          if (path === '/retry')
            return order.filter((p) => p === '/retry').length === 1 ? { status: 500, excerpt: 'once' } : { status: 200, excerpt: '' };
          // A third of the way through the busy backlog, the retry comes due (nothing wakes the engine for it).
          if (++busyRequests === 200) void env.clock.advance(10_000);
          await new Promise((r) => setTimeout(r, 1));
          return { status: 200, excerpt: '' };
        },
      },
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    await retryBesideBusy(hooks, 600);
    await hooks.start();
    await hooks.drain();
    expect(order.length).toBe(602);
    // The retry went out within a refill or two of coming due (a claim every ~57 busy
    // deliveries), not after the busy backlog.
    const busyBeforeRetry = order.slice(0, order.lastIndexOf('/retry')).filter((p) => p === '/busy').length;
    expect(busyBeforeRetry).toBeGreaterThanOrEqual(200);
    expect(busyBeforeRetry).toBeLessThan(330);
    // ~10 refills, each of which used to be followed by a claim leaving the busy webhook out
    // (reading its whole due backlog to find nothing); now one per proof: at the start, after
    // the failure voided it, and once the retry came due; and once more when the clock's 10 s
    // jump made the busy attempts then in flight overdue (their slots freed: Slots.overdue).
    expect(claimsLeavingOut).toBeLessThanOrEqual(5);
  });

  test('a claim leaving webhooks out reads along the due index after one came back full that left out as much; every delivery still goes out once', async () => {
    const store = tempStore('forms.db');
    const leaving: Array<{ byWebhook: boolean | undefined; limit: number; took: number; leftOut: Set<string> }> = [];
    const claimDue = store.claimDue.bind(store);
    store.claimDue = async (args) => {
      const claimed = await claimDue(args);
      if ((args.excludeWebhookIds?.length ?? 0) + (args.excludeEnvironments?.length ?? 0) > 0)
        leaving.push({
          byWebhook: args.byWebhook,
          limit: args.limit,
          took: claimed.length,
          leftOut: new Set([...(args.excludeWebhookIds ?? []), ...(args.excludeEnvironments ?? []).map((e) => `env:${e}`)]),
        });
      return claimed;
    };
    const sent: string[] = [];
    const env = await makeEngine({
      store,
      delivery: { timeoutMs: 2000, pollIntervalMs: 3600_000, concurrency: 12, perWebhookConcurrency: 4, batchSize: 4 },
      transport: {
        async send(req) {
          sent.push(req.headers['webhook-id']!);
          await new Promise((r) => setTimeout(r, 1));
          return { status: 200, excerpt: '' };
        },
      },
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    // Six customers with a webhook each, claims of 4, 4 slots per webhook (under each customer's
    // share): some webhooks are saturated while the others still have due work.
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) {
      await hooks.webhooks.create({ name, endpoint: `https://example.com/${name}`, eventTypes: ['user.created'], environment: name });
      for (let i = 0; i < 50; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData(), environment: name });
    }
    await hooks.start();
    await hooks.drain();
    expect(sent).toHaveLength(300);
    expect(new Set(sent).size).toBe(300);
    // The first claim leaving something out went per webhook; each one after a full one that left
    // out no less went along the due index (after a short one, or one leaving out more, the
    // cheaper form so far: see claim-form.test.ts).
    expect(leaving[0]!.byWebhook).toBe(true);
    const within = (a: Set<string>, b: Set<string>) => [...a].every((k) => b.has(k));
    for (let i = 1; i < leaving.length; i++) {
      const before = leaving[i - 1]!;
      if (before.took === before.limit && within(leaving[i]!.leftOut, before.leftOut)) expect(leaving[i]!.byWebhook).toBe(false);
    }
    expect(leaving.some((c) => c.byWebhook === false)).toBe(true);
  });

  test('while every attempt in flight hangs, a retry that comes due is claimed when it does, not when an attempt ends', async () => {
    const hanging: Array<() => void> = [];
    let retries = 0;
    let warming = false;
    const transport: Transport = {
      async send(req) {
        if (warming) return { status: 200, excerpt: '' };
        if (new URL(req.url).pathname === '/retry')
          return ++retries === 1 ? { status: 500, excerpt: 'once' } : { status: 200, excerpt: '' };
        await new Promise<void>((done) => hanging.push(done));
        return { status: 200, excerpt: '' };
      },
    };
    const env = await makeEngine({ transport, backoff: { schedule: [10_000], jitter: 0 } });
    cleanups.push(() => env.close());
    cleanups.push(async () => {
      // first, so close() does not wait on the hanging attempts
      transport.send = async () => ({ status: 200, excerpt: '' });
      for (const done of hanging.splice(0)) done();
    });
    const { hooks, clock } = env;
    await retryBesideBusy(hooks, 20, async () => {
      await hooks.start();
      await earnBounds(hooks, (on) => (warming = on), ['big']);
    });
    await until('the busy webhook at its bound and the first try failed', () => hanging.length === 8 && retries === 1);
    const [delivery] = (await hooks.deliveries.list({ environment: 'small', limit: 1 })).deliveries;
    await until(
      'the failure recorded',
      async () => (await hooks.deliveries.get(delivery!.id, { environment: 'small' })).attemptCount === 1,
    );
    await new Promise((r) => setTimeout(r, 50)); // the claim after that failure runs and finds nothing due
    expect(retries).toBe(1);
    // Nothing wakes the engine and no attempt ends: only time passes.
    await clock.advance(10_000);
    await until('the retry went out', () => retries === 2);
    expect(hanging.length).toBe(8);
  });

  test('with fewer slots than one webhook may use (no room beyond the reserve), what waits for a probing webhook is given back, not kept until its lease ends', async () => {
    // concurrency 4 < perWebhookConcurrency 8: the hard bound (4 - 8) admits nothing from the
    // waiting queues, so a held delivery must go back to be claimed again in the same pass.
    let requests = 0;
    const env = await makeEngine({
      delivery: { concurrency: 4, timeoutMs: 2000, pollIntervalMs: 3600_000 },
      transport: {
        async send() {
          requests++;
          return { status: 500, excerpt: 'down' };
        },
      },
    });
    cleanups.push(() => env.close());
    const { hooks } = env;
    await hooks.start();
    await hooks.webhooks.create({ name: 'failing', endpoint: 'https://example.com/failing', eventTypes: ['user.created'] });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect(requests).toBe(1); // it failed: the webhook is now a one-at-a-time probe
    // Two more while no scheduler runs (a restart): the first claim brings both, one starts as
    // the probe and the other waits for it.
    const again = await env.restart();
    await again.emit({ type: 'user.created', source: 'admin', data: userData() });
    await again.emit({ type: 'user.created', source: 'admin', data: userData() });
    await again.start();
    await again.drain();
    // Both were tried in this pass, one after the other.
    expect(requests).toBe(3);
  });

  test('one timer, however many deliveries wait at different times', async () => {
    const env = await makeEngine({ transport: { send: async () => ({ status: 500, excerpt: '' }) } });
    cleanups.push(() => env.close());
    const { hooks, clock } = env;
    await hooks.start();
    await hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
    for (let i = 0; i < 30; i++) {
      await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
      await clock.advance(1_000);
      expect(clock.pendingTimers).toBeLessThanOrEqual(1);
    }
    await hooks.drain();
    expect(clock.pendingTimers).toBe(1);
    const pending = (await hooks.deliveries.list({ status: 'pending' })).deliveries;
    expect(new Set(pending.map((d) => d.nextAttemptAt)).size).toBeGreaterThan(1);
  });

  test('the timer is armed for the earliest due delivery, not the poll interval', async () => {
    const { attempts, clock, t0 } = await failingOnce({ backoff: { schedule: [7_000], jitter: 0 } });
    await clock.advance(60_000);
    expect(attempts.map((t) => t - t0)).toEqual([0, 7_000]);
  });

  test('an idle pass whose empty claim says when the next delivery is due arms its timer from that: one store call, and the retry still goes out on time', async () => {
    const store = tempStore('webhooks.db');
    // As PostgreSQL's claim does: taking nothing, it answers what nextDueAt would (read here, for a store that cannot).
    const calls = { claims: 0, nextDueAt: 0 };
    const claimDue = store.claimDue.bind(store);
    const nextDueAt = store.nextDueAt.bind(store);
    store.claimDue = async (args) => {
      calls.claims++;
      const claimed = await claimDue(args);
      return claimed.length > 0 ? claimed : Object.defineProperty([], 'nextDueAt', { value: await nextDueAt() });
    };
    store.nextDueAt = () => (calls.nextDueAt++, nextDueAt());
    const { attempts, hooks, clock, t0 } = await failingOnce({
      store,
      backoff: { schedule: [7_000, 7_000], jitter: 0 },
      delivery: { timeoutMs: 2000, pollIntervalMs: 1_000 },
      notifier: undefined, // (the notice outbox reads nextDueAt itself once per poll interval)
    });
    expect(attempts.map((t) => t - t0)).toEqual([0]);
    // Six idle passes (the poll interval is 1 s) before the retry: each one claim, no nextDueAt.
    const before = { ...calls };
    for (let i = 0; i < 6; i++) await clock.advance(1_000);
    expect(calls.claims - before.claims).toBeGreaterThanOrEqual(6);
    expect(calls.nextDueAt - before.nextDueAt).toBe(0);
    await clock.advance(1_000);
    await hooks.drain();
    expect(attempts.map((t) => t - t0)).toEqual([0, 7_000]);
    // That pass's last claim came after the outcome was recorded, so it saw the next retry.
    await clock.advance(7_000);
    await hooks.drain();
    expect(attempts.map((t) => t - t0)).toEqual([0, 7_000, 14_000]);
  });

  test('close() waits for attempts in flight and records them', async () => {
    const gated = gatedTransport();
    const env = await makeEngine({ transport: gated.transport });
    const { hooks } = env;
    await hooks.start();
    await hooks.webhooks.create({ name: 'w', endpoint: 'https://example.com/w', eventTypes: ['user.created'] });
    const ev = await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await until('one attempt in flight', () => gated.inflight === 1);
    const closing = hooks.close();
    gated.releaseAll();
    await closing;
    const again = await env.restart();
    expect(await again.deliveries.get(ev.deliveryIds[0]!)).toMatchObject({ status: 'delivered' });
    await env.close();
  });
});

describe('transient retries of store calls', () => {
  test('each adapter classifies its own database: connection loss, refusals, busy locks and serialisation failures are transient; bugs are not', async () => {
    const postgres = (await import('../../adapters/postgres/transient.js')).isTransient;
    const sqlite = (await import('../../adapters/sqlite/transient.js')).isTransient;
    const pgTransient = [
      { code: 'ECONNREFUSED' },
      { code: '57P01', message: 'terminating connection due to administrator command' },
      { code: '55000', message: 'database "x" is not currently accepting connections' },
      { code: '08006' },
      { code: '40001' },
      new Error('Connection terminated unexpectedly'),
    ];
    for (const e of pgTransient) expect(postgres(e), JSON.stringify(e)).toBe(true);
    for (const e of [{ code: 'SQLITE_BUSY' }, { code: 'ECONNRESET' }, new Error('database is locked')])
      expect(sqlite(e), JSON.stringify(e)).toBe(true);
    // Each knows only its own database: SQLite's busy code means nothing to PostgreSQL, and back.
    expect(postgres({ code: 'SQLITE_BUSY' })).toBe(false);
    expect(sqlite({ code: '57P01' })).toBe(false);
    for (const isTransient of [postgres, sqlite]) {
      for (const e of [{ code: '23505', message: 'duplicate key' }, new TypeError('x is undefined'), { code: '42P01' }, null]) {
        expect(isTransient(e), JSON.stringify(e)).toBe(false);
      }
    }
  });

  test('a transient failure is retried until it clears; a bug gives up after 5 tries', async () => {
    const { transient } = await import('../../src/transient.js');
    const refused = (e: unknown) => (e as { code?: string }).code === 'ECONNREFUSED';
    let calls = 0;
    const value = await transient(
      refused,
      async () => {
        if (++calls < 8) throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
        return 'ok';
      },
      10_000,
    );
    expect([value, calls]).toEqual(['ok', 8]);
    calls = 0;
    await expect(transient(refused, async () => (calls++, Promise.reject(new Error('bug'))), 10_000)).rejects.toThrow('bug');
    expect(calls).toBe(6);
    // The budget counts from the first try: one that used it all up is not tried again.
    calls = 0;
    const slowRefusal = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 250));
      throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    };
    await expect(transient(refused, slowRefusal, 200)).rejects.toThrow('refused');
    expect(calls).toBe(1);
  });
});
