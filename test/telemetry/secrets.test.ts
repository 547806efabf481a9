import { afterAll, beforeAll, expect, test } from 'vitest';
import { sqliteStore } from '../../adapters/sqlite/index.js';
import type { LogMeta } from '../../src/index.js';
import type { RecordAttemptArgs } from '../../src/store.js';
import { useCleanups } from '../helpers/cleanup.js';
import { makeEngine } from '../helpers/engine.js';
import { testKey, userData } from '../helpers/fixtures.js';
import { startReceiver, tempDir } from '../helpers/http.js';
import { testSdk, useContextManager } from './sdk.js';

const cleanups = useCleanups();
let stopContext: () => void;
beforeAll(() => {
  stopContext = useContextManager();
});
afterAll(() => stopContext());

const MARKER_EMAIL = 'marker-7f3a9c@example.com';
const MARKER_NAME = 'Quillon Marker';

/**
 * A run where everything that can go wrong does: a receiver answering 500 with the token it was
 * sent (so the attempt log quotes it), outcomes that cannot be recorded, a disable whose
 * notifier throws, an authorize hook that throws. Whatever reached the logger, the spans and the
 * metrics must name the records and the kind of error, and carry no token, payload or key.
 */
test('a failing run: the logger gets structured fields on every call; nothing logged or exported carries the token, the payload or the key', async () => {
  const key = await testKey();
  const sdk = testSdk();
  const receiver = await startReceiver((req) => (req.path.startsWith('/echo') ? { status: 500, body: req.body } : 200));
  const dir = tempDir();
  const inner = sqliteStore({ filename: dir.file('webhooks.db') });
  let recordingFails = false;
  const store = Object.assign(Object.create(inner) as typeof inner, {
    recordAttempts: (batch: readonly RecordAttemptArgs[]) =>
      recordingFails ? Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })) : inner.recordAttempts(batch),
  });
  const logged: Array<{ level: 'warn' | 'error'; message: string; meta: LogMeta | undefined }> = [];
  const env = await makeEngine({
    store,
    telemetry: { ...sdk.telemetry, propagateTraceContext: true },
    disableAfterMs: 3600_000,
    backoff: { jitter: 0 },
    // A lease that runs out is found by the poll: within 8 s of the leases' end (32 s) below.
    delivery: { timeoutMs: 2000, pollIntervalMs: 8_000 },
    logger: {
      warn: (message, meta) => void logged.push({ level: 'warn', message, meta }),
      error: (message, meta) => void logged.push({ level: 'error', message, meta }),
    },
    notifier: {
      webhookDisabled: () => {
        throw new Error('SMTP 421 try again later');
      },
    },
    authorize: () => {
      throw new Error('identity provider unreachable');
    },
  });
  cleanups.push(
    () => sdk.shutdown(),
    () => receiver.close(),
    () => env.close(),
    () => dir.cleanup(),
  );
  const { hooks, clock } = env;
  const echo = await hooks.webhooks.create({ name: 'echo', endpoint: `${receiver.url}/echo`, eventTypes: ['user.created'] });
  await hooks.webhooks.create({ name: 'ok', endpoint: `${receiver.url}/ok`, eventTypes: ['user.created'] });
  await hooks.start();

  recordingFails = true;
  const event = await hooks.emit({
    type: 'user.created',
    source: 'user',
    data: userData({ email: MARKER_EMAIL, first_name: MARKER_NAME }),
  });
  await hooks.drain(); // both attempted, neither recorded (after the transient retries)
  recordingFails = false;
  await clock.advance(40_000); // the leases lapse: attempted again, recorded
  await clock.advance(2 * 3600_000); // echo fails for over an hour: disabled, its notice refused
  await hooks.drain();
  expect((await hooks.handler(new Request(`${env.issuer}/api/v1/webhooks`))).status).toBe(403);

  // The leak paths exist: the tokens went out, and the attempt log quotes one back.
  const tokens = receiver.requests.map((r) => r.body);
  expect(tokens.length).toBeGreaterThanOrEqual(4);
  for (const t of tokens) expect(t).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  const [echoDelivery] = (await hooks.deliveries.list({ webhookId: echo.id })).deliveries;
  expect(echoDelivery!.status).toBe('held');
  const attempts = await hooks.deliveries.attempts(echoDelivery!.id);
  expect(
    attempts.some((a) => tokens.includes(a.responseExcerpt ?? '') || tokens.some((t) => a.responseExcerpt?.startsWith(t.slice(0, 200)))),
  ).toBe(true);

  // Structured fields on every call: what went wrong (errorKind) and which records.
  expect(logged.length).toBeGreaterThanOrEqual(4);
  for (const entry of logged) expect(typeof entry.meta?.errorKind, JSON.stringify(entry)).toBe('string');
  const unrecorded = logged.filter((e) => e.message.startsWith('could not record an attempt'));
  expect(unrecorded.map((e) => e.meta?.deliveryId).sort()).toEqual([...event.deliveryIds].sort());
  for (const e of unrecorded) {
    expect(e.level).toBe('error');
    expect(e.meta).toMatchObject({ errorKind: 'SQLITE_IOERR', webhookId: expect.stringMatching(/^webhook_/) });
  }
  const notice = logged.find((e) => e.message.startsWith('the notifier failed'));
  expect(notice).toMatchObject({
    level: 'warn',
    meta: { errorKind: 'Error', webhookId: echo.id, noticeId: expect.any(String), error: 'Error: SMTP 421 try again later' },
  });
  expect(logged.find((e) => e.message.startsWith('authorize threw'))).toMatchObject({ level: 'error', meta: { errorKind: 'Error' } });

  // Nothing of the secrets anywhere: logs, span names/attributes/statuses/events, metric attributes.
  const metricAttributes = [...(await sdk.collect()).values()].flatMap((m) =>
    (m.dataPoints as Array<{ attributes: unknown }>).map((p) => p.attributes),
  );
  const spans = sdk.spans().map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events, links: s.links }));
  expect(spans.filter((s) => s.name === 'webhooks.deliver').length).toBe(receiver.requests.length);
  const haystacks = { logs: JSON.stringify(logged), spans: JSON.stringify(spans), metrics: JSON.stringify(metricAttributes) };
  const secrets: Record<string, string> = { email: MARKER_EMAIL, name: MARKER_NAME };
  for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const) {
    const value = (key as unknown as Record<string, string>)[member];
    expect(value, member).toBeTruthy();
    secrets[`key.${member}`] = value!;
  }
  tokens.forEach((t, i) => {
    const [, payload, signature] = t.split('.');
    secrets[`token ${i}`] = t;
    secrets[`token ${i} payload`] = payload!.slice(0, 32); // a quoted excerpt would hold its start
    secrets[`token ${i} signature`] = signature!;
  });
  for (const [where, text] of Object.entries(haystacks))
    for (const [what, secret] of Object.entries(secrets)) expect(text.includes(secret), `${what} in ${where}`).toBe(false);
}, 30_000);
