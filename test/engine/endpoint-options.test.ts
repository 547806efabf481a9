import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import { HEADER_MASK } from '../../src/endpoint-options.js';
import { type LogMeta, WebhooksError } from '../../src/index.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { userData } from '../helpers/fixtures.js';
import { type Responder, startReceiver, tempDir } from '../helpers/http.js';
import { testSdk, useContextManager } from '../telemetry/sdk.js';

const cleanups = useCleanups();
const SECRETS_KEY = randomBytes(32).toString('base64');
const SECRET = 'Bearer s3cr3t-7f3a9c-credential';
const API_KEY = 'k3y-7f3a9c-value';

async function setup(respond: Responder = () => 200, overrides: Parameters<typeof makeEngine>[0] = {}) {
  const receiver = await startReceiver(respond);
  const env = await makeEngine({ secretsKey: SECRETS_KEY, backoff: { jitter: 0 }, ...overrides });
  cleanups.push(
    () => receiver.close(),
    () => env.close(),
  );
  await env.hooks.start();
  return { receiver, ...env };
}

const base = (url: string) => ({ name: 'options', endpoint: `${url}/hook`, eventTypes: ['user.created' as const] });

describe('custom headers', () => {
  test('arrive exactly as set, beside ours, which they never replace', async () => {
    const { hooks, receiver } = await setup();
    const wh = await hooks.webhooks.create({
      ...base(receiver.url),
      headers: { 'X-Tenant': 'acme corp', Authorization: SECRET, 'X-Api-Key': API_KEY, 'X-Empty': '' },
    });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const [req] = receiver.requests;
    expect(req!.headers).toMatchObject({
      'x-tenant': 'acme corp',
      authorization: SECRET,
      'x-api-key': API_KEY,
      'x-empty': '',
      'content-type': 'application/jwt',
    });
    expect(req!.headers['webhook-id']).toMatch(/^msg_/);
    expect(req!.headers['user-agent']).toMatch(/^identity-webhooks\//);
    // Reads show credential values masked, names as given.
    const read = await hooks.webhooks.get(wh.id);
    expect(read.headers).toEqual({ 'X-Tenant': 'acme corp', Authorization: HEADER_MASK, 'X-Api-Key': HEADER_MASK, 'X-Empty': '' });
    expect(wh.headers).toEqual(read.headers);
  });

  test.each([
    ['Content-Type', 'text/plain'],
    ['content-length', '10'],
    ['Host', 'example.com'],
    ['webhook-id', 'msg_x'],
    ['Webhook-Signature', 'v1,x'],
    ['transfer-encoding', 'chunked'],
    ['Connection', 'close'],
    ['User-Agent', 'me'],
    ['traceparent', '00-x'],
    ['X-Bad Name', 'v'],
    ['X-Colon:', 'v'],
    ['', 'v'],
    ['X-'.padEnd(65, 'a'), 'v'],
    ['X-CRLF', 'a\r\nInjected: yes'],
    ['X-LF', 'a\nb'],
    ['X-NUL', 'a\u0000b'],
    ['X-Unicode', 'café'],
    ['X-Control', 'a\u0007b'],
    ['X-Long', 'v'.repeat(1025)],
    ['X-Spaces', ' padded '],
  ])('refused: %j, with nothing written', async (name, value) => {
    const { hooks, receiver } = await setup();
    const error = await hooks.webhooks.create({ ...base(receiver.url), headers: { [name]: value } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhooksError);
    expect(error).toMatchObject({ code: 'ERR_VALIDATION' });
    expect((error as WebhooksError).field).toMatch(/^headers/);
    expect(await hooks.webhooks.list()).toHaveLength(0);
  });

  test('refused: more than 20, two names differing by case, a non-string value, a masked value with nothing stored', async () => {
    const { hooks, receiver } = await setup();
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    for (const headers of [many, { 'X-A': 'v', 'x-a': 'w' }, { 'X-A': 1 }, { Authorization: HEADER_MASK }, ['X-A', 'v']]) {
      await expect(hooks.webhooks.create({ ...base(receiver.url), headers: headers as never })).rejects.toMatchObject({
        code: 'ERR_VALIDATION',
      });
    }
    expect(await hooks.webhooks.list()).toHaveLength(0);
  });

  test('a credential header without secretsKey: ERR_SECRETS_KEY_REQUIRED, nothing written; plain headers need no key', async () => {
    const receiver = await startReceiver();
    const env = await makeEngine();
    cleanups.push(
      () => receiver.close(),
      () => env.close(),
    );
    await expect(env.hooks.webhooks.create({ ...base(receiver.url), headers: { 'X-Auth-Token': 't' } })).rejects.toMatchObject({
      code: 'ERR_SECRETS_KEY_REQUIRED',
      field: 'headers',
    });
    expect(await env.hooks.webhooks.list()).toHaveLength(0);
    const plain = await env.hooks.webhooks.create({ ...base(receiver.url), headers: { 'X-Tenant': 'a' } });
    await expect(env.hooks.webhooks.update(plain.id, { headers: { Cookie: 'c=1' } })).rejects.toMatchObject({
      code: 'ERR_SECRETS_KEY_REQUIRED',
    });
    expect((await env.hooks.webhooks.get(plain.id)).headers).toEqual({ 'X-Tenant': 'a' });
  });

  test('update: the mask keeps a stored credential, a new value replaces it, null clears the set', async () => {
    const { hooks, receiver } = await setup();
    const wh = await hooks.webhooks.create({ ...base(receiver.url), headers: { Authorization: SECRET, 'X-A': '1' } });
    await hooks.webhooks.update(wh.id, { headers: { authorization: HEADER_MASK, 'X-B': '2' } });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect(receiver.requests[0]!.headers).toMatchObject({ authorization: SECRET, 'x-b': '2' });
    expect(receiver.requests[0]!.headers['x-a']).toBeUndefined();
    await hooks.webhooks.update(wh.id, { headers: { Authorization: 'Bearer new' } });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect(receiver.requests[1]!.headers.authorization).toBe('Bearer new');
    expect((await hooks.webhooks.update(wh.id, { headers: null })).headers).toEqual({});
  });
});

describe('credential values are write-only', () => {
  let stopContext: () => void;
  beforeAll(() => {
    stopContext = useContextManager();
  });
  afterAll(() => stopContext());

  test('never in a read, the stored row, an attempt record, a notice, a log line or a span', async () => {
    const sdk = testSdk();
    const logged: Array<{ message: string; meta: LogMeta | undefined }> = [];
    const logger = {
      warn: (message: string, meta?: LogMeta) => void logged.push({ message, meta }),
      error: (message: string, meta?: LogMeta) => void logged.push({ message, meta }),
    };
    // The endpoint echoes what it got, headers included, so the attempt log would quote them.
    const { hooks, receiver, clock, filename, notified } = await setup((req) => ({ status: 500, body: JSON.stringify(req.headers) }), {
      telemetry: sdk.telemetry,
      logger,
      disableAfterMs: 3600_000,
    });
    cleanups.push(() => sdk.shutdown());
    const wh = await hooks.webhooks.create({ ...base(receiver.url), headers: { Authorization: SECRET, 'X-Api-Key': API_KEY } });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    await clock.advance(2 * 3600_000); // failing past disableAfterMs: disabled, with a notice
    expect(receiver.requests[0]!.headers.authorization).toBe(SECRET);
    expect(notified).toHaveLength(1);

    const [delivery] = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries;
    const seen = JSON.stringify([
      await hooks.webhooks.get(wh.id),
      await hooks.webhooks.list(),
      delivery,
      await hooks.deliveries.attempts(delivery!.id),
      notified,
      await hooks.notices.list(),
      logged,
      sdk.spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
      await (await hooks.handler(new Request('http://x/api/v1/webhooks'))).text(),
    ]);
    for (const secret of [SECRET, 's3cr3t', API_KEY]) expect(seen).not.toContain(secret);
    expect(sdk.spans().length).toBeGreaterThan(0);

    // At rest: sealed (the row holds no clear value).
    const db = new Database(filename, { readonly: true });
    const rows =
      JSON.stringify(db.prepare('select * from iw_webhooks').all()) + JSON.stringify(db.prepare('select * from iw_notices').all());
    db.close();
    expect(rows).toContain('sealed:v1:');
    for (const secret of ['s3cr3t', API_KEY]) expect(rows).not.toContain(secret);
  });
});

describe('per-webhook timeout', () => {
  test('cuts a slow endpoint at its own limit, not the engine’s', async () => {
    const { hooks, receiver } = await setup(() => ({ status: 200, delayMs: 1500 }), {
      delivery: { timeoutMs: 5000, pollIntervalMs: 3600_000 },
    });
    const quick = await hooks.webhooks.create({ ...base(receiver.url), timeoutMs: 1000 });
    const patient = await hooks.webhooks.create({ ...base(receiver.url), name: 'patient' });
    expect(quick.timeoutMs).toBe(1000);
    expect(patient.timeoutMs).toBeNull();
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const last = async (id: string) => (await hooks.deliveries.list({ webhookId: id })).deliveries[0]!;
    expect(await last(quick.id)).toMatchObject({ status: 'pending', lastResult: 'timeout' });
    expect((await last(quick.id)).lastError).toContain('within 1000 ms');
    expect(await last(patient.id)).toMatchObject({ status: 'delivered' });
  });

  test.each([999, 30_001, 1.5, '2000'])('refuses %j', async (timeoutMs) => {
    const { hooks, receiver } = await setup();
    await expect(hooks.webhooks.create({ ...base(receiver.url), timeoutMs: timeoutMs as number })).rejects.toMatchObject({
      code: 'ERR_VALIDATION',
      field: 'timeoutMs',
    });
    expect(await hooks.webhooks.list()).toHaveLength(0);
  });
});

describe('Retry-After', () => {
  for (const form of ['seconds', 'date'] as const) {
    test(`on 429 (${form}): this delivery and the webhook's others wait until then`, async () => {
      let clockNow = () => 0;
      const { hooks, receiver, clock } = await setup((_req, i) =>
        i === 0
          ? {
              status: 429,
              headers: { 'retry-after': form === 'seconds' ? '120' : new Date(clockNow() + 120_000).toUTCString() },
            }
          : 200,
      );
      clockNow = () => clock.now();
      const start = clock.now();
      const wh = await hooks.webhooks.create(base(receiver.url));
      await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
      await hooks.drain();
      expect(receiver.requests).toHaveLength(1);
      const [first] = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries;
      expect(first!.nextAttemptAt).toBeGreaterThanOrEqual(start + 119_000);
      const [attempt] = await hooks.deliveries.attempts(first!.id);
      expect(attempt!.errorMessage).toMatch(/got 429 \(Retry-After: this webhook's next attempts wait until /);
      // Another delivery of the same webhook, due now, waits too.
      await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
      await hooks.drain();
      await clock.advance(60_000);
      expect(receiver.requests).toHaveLength(1);
      await clock.advance(61_000);
      await hooks.drain();
      expect(receiver.requests).toHaveLength(3);
      expect(receiver.requests[1]!.at).toBeGreaterThanOrEqual(receiver.requests[0]!.at);
      const statuses = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries.map((d) => d.status);
      expect(statuses).toEqual(['delivered', 'delivered']);
    });
  }

  test('capped at one hour; still a failed attempt (failing_since set)', async () => {
    const { hooks, receiver, clock } = await setup((_req, i) => (i === 0 ? { status: 503, headers: { 'retry-after': '999999' } } : 200));
    const start = clock.now();
    const wh = await hooks.webhooks.create(base(receiver.url));
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect((await hooks.webhooks.get(wh.id)).failingSince).toBe(start);
    const [d] = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries;
    expect(d!.nextAttemptAt).toBe(start + 3600_000);
  });
});

describe('410 Gone', () => {
  test('with disableOnGone: disabled at once, reason gone, notified once', async () => {
    const { hooks, receiver, clock, notified } = await setup(() => 410, { disableOnGone: true });
    const wh = await hooks.webhooks.create(base(receiver.url));
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    await clock.advance(1000);
    expect(await hooks.webhooks.get(wh.id)).toMatchObject({ status: 'disabled', disabledReason: 'gone' });
    expect(notified).toHaveLength(1);
    expect(notified[0]).toMatchObject({ reason: 'gone', environment: 'default' });
    const statuses = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries.map((d) => d.status);
    expect(statuses.every((s) => s === 'held')).toBe(true);
    await clock.advance(3600_000);
    expect(notified).toHaveLength(1);
  });

  test('without it: a failed attempt like any other', async () => {
    const { hooks, receiver, notified } = await setup(() => 410);
    const wh = await hooks.webhooks.create(base(receiver.url));
    await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    expect(await hooks.webhooks.get(wh.id)).toMatchObject({ status: 'enabled' });
    expect(notified).toHaveLength(0);
  });
});

describe('rate limit', () => {
  test('attempts start no faster than perSecond, per clock window', async () => {
    const { hooks, receiver, clock } = await setup();
    const start = clock.now();
    const starts: number[] = [];
    const slow = await hooks.webhooks.create({ ...base(receiver.url), rateLimit: { perSecond: 5 } });
    expect(slow.rateLimit).toEqual({ perSecond: 5 });
    const origin = receiver.requests.length;
    for (let i = 0; i < 30; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    let seen = origin;
    for (let t = 0; t < 80; t++) {
      await hooks.drain();
      for (; seen < receiver.requests.length; seen++) starts.push(clock.now() - start);
      await clock.advance(100);
    }
    await hooks.drain();
    for (; seen < receiver.requests.length; seen++) starts.push(clock.now() - start);
    expect(starts).toHaveLength(30);
    // In any one-second window of the clock, at most 5 (+1 at its edge).
    for (const t of starts) expect(starts.filter((s) => s >= t && s < t + 1000).length).toBeLessThanOrEqual(6);
    expect(starts.at(-1)!).toBeGreaterThanOrEqual(5000);
  });

  /** A SQLite store whose claims are counted. */
  const countedStore = () => {
    const dir = tempDir();
    cleanups.push(() => dir.cleanup());
    const store = sqliteStore({ filename: dir.file('paced.db') });
    const counts = { claims: 0, found: 0 };
    const claimDue = store.claimDue.bind(store);
    store.claimDue = async (args) => {
      counts.claims++;
      const claimed = await claimDue(args);
      if (claimed.length > 0) counts.found++;
      return claimed;
    };
    return { store, counts };
  };

  test('a second of start times per claim: each starts at its own time on the clock, and only one claim a second finds any', async () => {
    const { store, counts } = countedStore();
    const starts: number[] = [];
    let clockNow = () => 0;
    const { hooks, receiver, clock } = await setup(() => (starts.push(clockNow()), 200), { store });
    clockNow = () => clock.now();
    await hooks.webhooks.create({ ...base(receiver.url), rateLimit: { perSecond: 10 } }); // a step of 100
    for (let i = 0; i < 30; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.drain();
    const t0 = starts[0]!;
    const before = { ...counts };
    for (let t = 0; t < 400 && starts.length < 30; t++) {
      await clock.advance(10);
      await hooks.drain();
    }
    expect(starts).toEqual(Array.from({ length: 30 }, (_, i) => t0 + 100 * i));
    // 29 steps over three seconds: the webhook's deliveries came in a claim per second (the
    // seconds after the first's), not one per step.
    expect(counts.found - before.found).toBe(2);
  });

  test('a Retry-After withdraws what waits for its start time: none of it goes before the deferral ends', async () => {
    const starts: number[] = [];
    let clockNow = () => 0;
    const receiver = await startReceiver((_req, i) => {
      starts.push(clockNow());
      return i === 0 ? { status: 429, headers: { 'retry-after': '5' } } : 200;
    });
    const { hooks, clock, close } = await makeEngine({ backoff: { jitter: 0 } });
    cleanups.push(
      () => receiver.close(),
      () => close(),
    );
    clockNow = () => clock.now();
    const wh = await hooks.webhooks.create({ ...base(receiver.url), rateLimit: { perSecond: 10 } });
    // All five due before the first claim: one starts, four wait in the process for their times.
    for (let i = 0; i < 5; i++) await hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await hooks.start();
    await hooks.drain();
    const t0 = starts[0]!;
    for (let t = 0; t < 700 && starts.length < 6; t++) {
      await clock.advance(10);
      await hooks.drain();
    }
    expect(starts).toHaveLength(6);
    // The four that waited for t0 + 100..400 went back; every later start waits for the deferral.
    for (const at of starts.slice(1)) expect(at).toBeGreaterThanOrEqual(t0 + 5000);
    const statuses = (await hooks.deliveries.list({ webhookId: wh.id })).deliveries.map((d) => d.status);
    expect(statuses).toEqual(Array(5).fill('delivered'));
  });

  test('closing gives back what waits for its start time: another engine on the file sends it', async () => {
    const starts: number[] = [];
    let clockNow = () => 0;
    const env = await setup(() => (starts.push(clockNow()), 200));
    clockNow = () => env.clock.now();
    await env.hooks.webhooks.create({ ...base(env.receiver.url), rateLimit: { perSecond: 4 } });
    for (let i = 0; i < 3; i++) await env.hooks.emit({ type: 'user.created', source: 'admin', data: userData() });
    await env.hooks.drain();
    expect(starts).toHaveLength(1);
    const next = await env.restart();
    await next.start();
    for (let t = 0; t < 200 && starts.length < 3; t++) {
      await env.clock.advance(10);
      await next.drain();
    }
    expect(starts).toHaveLength(3);
    // Given back due at once, paced again from the webhook's reserved times: still no faster than 4/s.
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(250);
  });

  test.each([0, 1001, 2.5, null])('refuses perSecond %j', async (perSecond) => {
    const { hooks, receiver } = await setup();
    await expect(hooks.webhooks.create({ ...base(receiver.url), rateLimit: { perSecond } as never })).rejects.toMatchObject({
      code: 'ERR_VALIDATION',
      field: 'rateLimit.perSecond',
    });
  });
});
