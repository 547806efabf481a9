// What the engine's OpenTelemetry instrumentation costs per delivery and per emit, apart from
// everything else (`npm run build` first): `node bench/studies/telemetry-overhead.mjs`. Runs the
// instrumentation around an attempt / a write that does nothing, in a fresh process per mode:
// `none` (nothing registered: the API's no-ops), `sdk` (the SDK registered as with
// `npm run bench -- --telemetry`), against the same call without instrumentation.

import { fork } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs } from '../lib/args.mjs';

const N = Number(process.env.N ?? 200_000);
const mode = benchArgs(import.meta.url, {}, { positionals: true }).positionals[0];

if (!mode) {
  for (const m of ['none', 'sdk']) {
    await new Promise((resolve, reject) =>
      fork(fileURLToPath(import.meta.url), [m], { stdio: 'inherit' }).on('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`${m}: ${code}`)),
      ),
    );
  }
} else {
  if (mode === 'sdk') (await import('../lib/telemetry.mjs')).registerTelemetry();
  const dist = new URL('../../dist/src/telemetry/telemetry.js', import.meta.url);
  const { Telemetry } = await import(pathToFileURL(fileURLToPath(dist)).href);
  const telemetry = new Telemetry(undefined, { store: { countDue: async () => 0 }, clock: { now: () => 0 } });
  const webhook = { id: 'webhook_0123456789abcdef0123456789abcdef', endpoint: 'https://hooks.example.com/in', disabledReason: null };
  const delivery = { id: 'msg_0123456789abcdef0123456789abcdef', eventType: 'user.created', attemptCount: 0 };
  const claimed = (traceparent) => ({ delivery, webhook, event: {}, dueAt: 0, traceparent });
  const attempt = (success) => ({
    success,
    startedAt: 5,
    durationMs: 12.5,
    statusCode: success ? 200 : 500,
    errorKind: success ? null : 'status',
  });
  const traced = [claimed('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), claimed(null)];
  const outcomes = [attempt(true), attempt(false)];
  const event = { id: 'event_0123456789abcdef0123456789abcdef', type: 'user.created', deliveryIds: ['a', 'b'] };

  const time = async (fn) => {
    for (let i = 0; i < N / 10; i++) await fn(i); // warm-up
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) await fn(i);
    return Number(process.hrtime.bigint() - t0) / N;
  };
  const bare = await time((i) => Promise.resolve(outcomes[i & 1]));
  const deliver = await time((i) => telemetry.deliver(traced[(i >> 1) & 1], () => Promise.resolve(outcomes[i & 1])));
  const bareEmit = await time(() => Promise.resolve(event));
  const emit = await time(() => telemetry.emit(() => Promise.resolve(event)));
  const f = (ns) => `${(ns / 1000).toFixed(2)} µs`;
  console.log(
    `${mode === 'sdk' ? 'SDK registered  ' : 'nothing registered'}: per delivery +${f(deliver - bare)} (${f(deliver)} vs ${f(bare)}), per emit +${f(emit - bareEmit)} (${f(emit)} vs ${f(bareEmit)}); ${N} calls each`,
  );
  process.exit(0);
}
