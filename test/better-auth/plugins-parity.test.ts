import { type BetterAuthOptions, betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { admin, organization, phoneNumber, username } from 'better-auth/plugins';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { webhooks, webhooksOf } from '../../src/better-auth/index.js';
import { testKey } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/http.js';
import { createDatabase, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';
import { testPasswords } from './harness.js';

/**
 * The username and phone-number plugins (beside admin and organization) answer the same with the
 * webhooks plugin as without it: one script of requests through `auth.handler`, run on two
 * servers, compared step by step (status and the shape of the answer); with the plugin, their
 * writes are events.
 */
const BASE_URL = 'http://127.0.0.1:3998';
const PASSWORD = 'correct horse battery staple';
const PHONE = '+15555550100';

type Dialect = 'sqlite' | 'postgres';
let server: TestPostgres;
const files = tempDir('iw-parity-');
const cleanups: Array<() => unknown> = [files.cleanup];

beforeAll(async () => {
  server = await useTestPostgres('better_auth_parity');
}, 120_000);
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await server?.close();
});

async function host(dialect: Dialect, withWebhooks: boolean) {
  let database: BetterAuthOptions['database'];
  if (dialect === 'sqlite') {
    const db = new Database(files.file(`${withWebhooks}-${Math.random().toString(36).slice(2)}.db`));
    db.pragma('journal_mode = WAL');
    cleanups.push(() => db.close());
    database = db;
  } else {
    const created = await createDatabase(server.adminUrl, 'parity');
    const pool = new pg.Pool({ connectionString: created.url });
    pool.on('error', () => {});
    cleanups.push(async () => {
      await pool.end();
      await created.drop();
    });
    database = pool;
  }
  const otps = new Map<string, string>();
  const options = {
    database,
    baseURL: BASE_URL,
    secret: 'a-test-secret-that-is-at-least-32-characters-long',
    emailAndPassword: { enabled: true, password: testPasswords },
    logger: { disabled: true },
    telemetry: { enabled: false },
    plugins: [
      admin(),
      organization(),
      username(),
      phoneNumber({ sendOTP: ({ phoneNumber: to, code }) => void otps.set(to, code) }),
      ...(withWebhooks ? [webhooks({ keys: [await testKey()], logger: { warn: () => {}, error: () => {} } })] : []),
    ],
  } satisfies BetterAuthOptions;
  const { runMigrations } = await getMigrations(options);
  await runMigrations();
  const auth = betterAuth(options);
  const hooks = withWebhooks ? await webhooksOf(auth) : undefined;
  if (hooks) cleanups.push(() => hooks.close());
  const jar = new Map<string, string>();
  const call = async (path: string, body?: unknown) => {
    const headers: Record<string, string> = { origin: BASE_URL };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await auth.handler(
      new Request(`${BASE_URL}/api/auth${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : null };
  };
  const sql = async (text: string) => {
    if (dialect === 'postgres') return (await (database as pg.Pool).query(text)).rows;
    const statement = (database as Database.Database).prepare(text);
    return statement.reader ? statement.all() : (statement.run(), []);
  };
  return { call, otps, hooks, sql };
}

/** The answer's shape: its members (recursively, two levels), not its ids and times. */
function shape(value: unknown, depth = 2): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0], depth)];
  if (value === null || typeof value !== 'object') return value === null ? null : typeof value;
  if (depth === 0) return 'object';
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, shape((value as Record<string, unknown>)[k], depth - 1)]),
  );
}

async function script(h: Awaited<ReturnType<typeof host>>) {
  const steps: Array<{ step: string; status: number; shape: unknown }> = [];
  const step = async (name: string, path: string, body?: unknown) => {
    const { status, json } = await h.call(path, body);
    steps.push({ step: name, status, shape: shape(json) });
    return json;
  };
  await step('sign up with a username', '/sign-up/email', {
    email: 'ada@example.com',
    password: PASSWORD,
    name: 'Ada Lovelace',
    username: 'ada_l',
  });
  await step('username taken', '/is-username-available', { username: 'ada_l' });
  await step('sign in by username', '/sign-in/username', { username: 'ada_l', password: PASSWORD });
  await step('sign in by username, wrong password', '/sign-in/username', { username: 'ada_l', password: 'wrong password!' });
  await step('change the username', '/update-user', { username: 'ada_k' });
  await step('send a phone OTP', '/phone-number/send-otp', { phoneNumber: PHONE });
  await step('verify the phone', '/phone-number/verify', { phoneNumber: PHONE, code: h.otps.get(PHONE), updatePhoneNumber: true });
  await step('sign in by phone number', '/sign-in/phone-number', { phoneNumber: PHONE, password: PASSWORD });
  await step('the session', '/get-session');
  await h.sql(`update "user" set role = 'admin'`);
  await step('the admin lists users', '/admin/list-users');
  await step('create an organization', '/organization/create', { name: 'Acme', slug: 'acme' });
  await step('list its members', '/organization/list-members');
  return steps;
}

describe.each<Dialect>(['sqlite', 'postgres'])('better-auth on %s: username and phone-number routes with the plugin', (dialect) => {
  test('answer as they do without it, and their writes are events', async () => {
    const [plain, hooked] = await Promise.all([host(dialect, false), host(dialect, true)]);
    const without = await script(plain);
    const withIt = await script(hooked);
    expect(withIt).toEqual(without);
    // Every step did what it says (a script that failed on both servers alike would compare equal).
    expect(without.map((s) => [s.step, s.status])).toEqual(without.map((s) => [s.step, s.step.endsWith('wrong password') ? 401 : 200]));
    const events = (await hooked.sql('select type, data from iw_events order by id')) as Array<{ type: string; data: string }>;
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'user.authenticated').length).toBe(2); // username, phone number
    expect(types).toContain('user.authentication_failed');
    const updates = events.filter((e) => e.type === 'user.updated').map((e) => JSON.parse(e.data).user);
    expect(updates.some((u) => u.username === 'ada_k')).toBe(true);
    expect(updates.some((u) => u.phone === PHONE)).toBe(true);
    expect(types).toEqual(expect.arrayContaining(['user.created', 'organization.created', 'membership.created']));
  }, 60_000);
});
