import { createHmac } from 'node:crypto';
// What the hand-written pipelines and the queue peers share: the token (written from scratch with
// jose, the claims shape of src/signing/token.ts), the POST (undici keep-alive), and the checks
// every variant ends with. Nothing here imports the engine.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, SignJWT } from 'jose';
import { Agent, request } from 'undici';
import { ISSUER } from '../lib/payload.mjs';
import { receiverControl } from '../lib/receiver-client.mjs';

/**
 * Runs a variant's timed window, `fn`, and returns its result with the wall time and the CPU
 * this process used over it. Every variant (the engine and its peers) measures through here.
 *
 * `BENCH_WINDOW_PROF=DIR`: the inspector's profiler samples this window alone, every 100 µs, and
 * writes `DIR/<label>-<pid>.cpuprofile`: no setup, load, warm-up or checks in it, unlike
 * `BENCH_CPU_PROF` (bench/lib/child.mjs), which profiles the whole child. On a small machine a
 * sample also lands where the main thread was preempted by the signing threads: read proportions.
 * `BENCH_WINDOW_HEAP=DIR`: the sampling heap profiler over the same window, every 4 KB allocated,
 * garbage included (what the window allocated, not what it kept): `DIR/<label>-<pid>.heapprofile`.
 * `BENCH_THREADS=1`: see {@link threadTimes}.
 */
export async function timedWindow(label, fn) {
  const profilers = [
    await profiler(
      process.env.BENCH_WINDOW_PROF,
      'cpuprofile',
      [['Profiler.enable'], ['Profiler.setSamplingInterval', { interval: 100 }], ['Profiler.start']],
      'Profiler.stop',
    ),
    await profiler(
      process.env.BENCH_WINDOW_HEAP,
      'heapprofile',
      [
        ['HeapProfiler.enable'],
        [
          'HeapProfiler.startSampling',
          { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true },
        ],
      ],
      'HeapProfiler.stopSampling',
    ),
  ];
  const threads0 = process.env.BENCH_THREADS ? threadTimes() : null;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (threads0) console.error(`  ${label}: CPU by thread over the window, ms (user+system): ${threadReport(threads0, threadTimes())}`);
  for (const stop of profilers) await stop?.(label);
  return { result, seconds, cpu };
}

/**
 * An inspector session in this process that runs `start` now and, when the returned function is
 * called, `stop`, writing its profile to `DIR/<label>-<pid>.<ext>`. No `dir`: nothing (undefined).
 */
async function profiler(dir, ext, start, stop) {
  if (!dir) return undefined;
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  for (const [method, params] of start) await session.post(method, params);
  return async (label) => {
    const { profile } = await session.post(stop);
    writeFileSync(join(dir, `${label}-${process.pid}.${ext}`), JSON.stringify(profile));
    session.disconnect();
  };
}

/**
 * `BENCH_THREADS=1`: the CPU each thread of this process used over the window, from
 * /proc/self/task (Linux; clock ticks, 10 ms each): the main thread apart from the rest (libuv's
 * pool, where the signatures run; V8's helpers, where the garbage collector marks; the SQLite
 * store's checkpoint thread). Which one a variant is short of tells what bounds it.
 */
function threadTimes() {
  const out = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // utime and stime: fields 14 and 15
    out.set(tid, { user: Number(fields[11]), system: Number(fields[12]) });
  }
  return out;
}

function threadReport(before, after) {
  const ms = (tid) => {
    const a = after.get(tid);
    const b = before.get(tid) ?? { user: 0, system: 0 };
    return [(a.user - b.user) * 10, (a.system - b.system) * 10];
  };
  const main = String(process.pid);
  const others = [...after.keys()]
    .filter((tid) => tid !== main)
    .map(ms)
    .filter(([u, s]) => u + s > 0);
  others.sort((x, y) => y[0] + y[1] - (x[0] + x[1]));
  const sum = (list) => list.reduce((t, [u, s]) => t + u + s, 0);
  return `main ${ms(main).join('+')}; ${others.length} others ${sum(others)} (${others.map(([u, s]) => `${u}+${s}`).join(', ')})`;
}

/** The Standard Webhooks secret of the reference (issue 37): every webhook's, fixed for the bench. */
export const STANDARD_SECRET = `whsec_${Buffer.alloc(32, 11).toString('base64')}`;

/**
 * The body of one event for one claim at `now`: an RS256 JWT, or (`format: 'standard-webhooks'`)
 * the JSON body the engine sends in that format (its HMAC is per delivery: see makeSender).
 */
export async function makeSigner({ format = 'jwt' } = {}) {
  if (format === 'standard-webhooks') {
    return async (event, now) =>
      JSON.stringify({
        type: event.type,
        timestamp: new Date(now).toISOString(),
        data: event.data,
        event_id: event.id,
        event_timestamp: new Date(Number(event.eventTimestamp)).toISOString(),
        source: event.source,
      });
  }
  return makeJwtSigner();
}

/** One RS256 key (2048 bits, like generateSigningKey) for this process. */
async function makeJwtSigner() {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048 });
  const kid = 'bench-peer';
  /** The token of one event, for one attempt at `now`. */
  return (event, now) =>
    new SignJWT({
      type: event.type,
      event_id: event.id,
      event_timestamp: new Date(Number(event.eventTimestamp)).toISOString(),
      timestamp: new Date(now).toISOString(),
      source: event.source,
      data: event.data,
      iss: ISSUER,
      iat: Math.floor(now / 1000),
    })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .sign(privateKey);
}

/**
 * POSTs a token through one undici keep-alive Agent with `connections` per origin. Resolves with
 * the outcome (only 200 is a success, as in the engine); never rejects.
 */
export function makeSender({ connections, format = 'jwt' }) {
  const agent = new Agent({ connections, keepAliveTimeout: 10_000, headersTimeout: 15_000, bodyTimeout: 15_000 });
  const standard = format === 'standard-webhooks';
  const key = Buffer.from(STANDARD_SECRET.slice(6), 'base64');
  const send = async (endpoint, deliveryId, token) => {
    const startedAt = Date.now();
    const t0 = performance.now();
    try {
      const headers = {
        'content-type': standard ? 'application/json' : 'application/jwt',
        'webhook-id': deliveryId,
        'user-agent': 'bench-peer',
      };
      if (standard) {
        // Standard Webhooks: one HMAC per delivery over its id, this attempt's time and the body.
        const timestamp = Math.floor(Date.now() / 1000);
        headers['webhook-timestamp'] = String(timestamp);
        headers['webhook-signature'] = `v1,${createHmac('sha256', key).update(`${deliveryId}.${timestamp}.${token}`).digest('base64')}`;
      }
      const res = await request(endpoint, {
        method: 'POST',
        dispatcher: agent,
        headers,
        body: token,
      });
      await res.body.dump({ limit: 4096 });
      return { startedAt, durationMs: performance.now() - t0, statusCode: res.statusCode, error: null, success: res.statusCode === 200 };
    } catch (error) {
      return { startedAt, durationMs: performance.now() - t0, statusCode: null, error: String(error?.message ?? error), success: false };
    }
  };
  return { send, close: () => agent.close() };
}

/**
 * The check every variant ends with: the store recorded each of the `expected` deliveries exactly
 * once (`recorded` successes, `attempts` attempt rows, `distinct` deliveries among them), and the
 * receiver answered exactly as many, each webhook-id once. Throws, loudly, otherwise.
 */
export async function checkOnce(receiverUrls, { expected, recorded, attempts = recorded, distinct = recorded }) {
  const seen = await receiverControl(receiverUrls).stats();
  const problems = [];
  if (recorded !== expected) problems.push(`the store recorded ${recorded} of ${expected} deliveries as delivered`);
  if (attempts !== expected || distinct !== expected)
    problems.push(`the store holds ${attempts} attempts for ${distinct} deliveries (expected ${expected} of each)`);
  if (seen.ok !== recorded) problems.push(`the receiver answered ${seen.ok} deliveries, the store recorded ${recorded}`);
  if (seen.distinctOkIds !== seen.ok)
    problems.push(`the receiver saw ${seen.ok} deliveries but ${seen.distinctOkIds} distinct webhook-ids`);
  if (seen.other !== 0) problems.push(`the receiver answered ${seen.other} requests with a status other than 200`);
  if (problems.length) throw new Error(`CORRECTNESS CHECK FAILED: ${problems.join('; ')}`);
  return { receiverOk: seen.ok, signaturesPerDelivery: seen.distinctTokens / Math.max(1, seen.ok) };
}

/** The figures every variant reports for its measured run. */
export function figures({ deliveries, seconds, cpu, check }) {
  return {
    deliveries,
    seconds,
    perSec: deliveries / seconds,
    cpuMsPerDelivery: (cpu.user + cpu.system) / 1000 / deliveries,
    signaturesPerDelivery: check.signaturesPerDelivery,
  };
}
