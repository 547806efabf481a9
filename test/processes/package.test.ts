import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, type TestContext, test } from 'vitest';
import { closedPort } from '../helpers/http.js';
import { createSchema, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * The package as a user gets it. `npm install <path>` of a fresh clone (no node_modules, no
 * `dist/`) installs what the build needs, builds, and a PostgreSQL host and a receiver run from
 * it. That tree, packed, is installed into a scratch project with `--omit=optional` (no
 * better-sqlite3, so nothing is compiled): a PostgreSQL host and a receiver-only install run from
 * it as plain JavaScript, `identity-webhooks/sqlite` and `identity-webhooks/postgres` name the
 * driver they lack, and every entry point type-checks with `skipLibCheck: false` and only
 * `@types/node`. The installs use the registry (the npm cache is usually warm); with no registry
 * it fails under CI=true and is skipped, loudly, elsewhere.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(import.meta.dirname, 'package');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const run = promisify(execFile);
// A registry out of reach fails in seconds, not after npm's minutes of retries.
const NPM_FLAGS = [
  '--prefer-offline',
  '--no-audit',
  '--no-fund',
  '--loglevel=error',
  '--fetch-retries=1',
  '--fetch-retry-mintimeout=1000',
  '--fetch-retry-maxtimeout=3000',
  '--fetch-timeout=30000',
];
const ENTRIES = ['main', 'postgres', 'receiver', 'http', 'email', 'dashboard', 'sqlite'];

let work: string;
let project: string;
let tarballFiles: string[] = [];
let packed: { size: number; unpackedSize: number; entryCount: number; filename: string };
/** Why the scratch install could not run (no registry), or null once it is installed. */
let unreachable: string | null = null;
let server: TestPostgres | undefined;

/** The fresh clone's install by path (the `npm install <path>` tests read it). */
let pathInstall: { host: string; fresh: string; stderr: string } | undefined;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'iw-pack-'));
  project = join(work, 'project');
  // One build serves both installs: `npm install <path>` of a fresh clone (no node_modules, no
  // dist/) runs prepare there, which installs what the build needs and builds; that tree is then
  // packed as it stands (--ignore-scripts: its dist/ is prepare's, built a minute ago), and the
  // tarball is what the scratch project installs.
  try {
    pathInstall = await installByPath();
  } catch (error) {
    if (!registryOutOfReach(error)) throw error;
    return;
  }
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work, '--loglevel=error'], {
    cwd: pathInstall.fresh,
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const report = JSON.parse(stdout)[0];
  packed = report;
  tarballFiles = report.files.map((f: { path: string }) => f.path).sort();
  console.info(
    `[package] ${report.filename}: ${report.entryCount} files, ${(report.size / 1024).toFixed(1)} kB packed, ${(report.unpackedSize / 1024).toFixed(1)} kB unpacked`,
  );

  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch-host', private: true, type: 'module' }));
  const wanted = [
    join(work, report.filename),
    `pg@${manifest.devDependencies.pg}`,
    // An optional peer, needed by smtpNotifier (the email entry's types name it).
    `nodemailer@${manifest.devDependencies.nodemailer}`,
    `@types/node@${manifest.devDependencies['@types/node']}`,
    // Our own TypeScript: a newer major ships its compiler as an optional platform package,
    // which --omit=optional would leave out.
    `typescript@${manifest.devDependencies.typescript}`,
  ];
  try {
    await run('npm', ['install', ...wanted, '--omit=optional', ...NPM_FLAGS], { cwd: project, timeout: 120_000 });
  } catch (error) {
    if (!registryOutOfReach(error)) throw error;
    return;
  }
  for (const file of readdirSync(FIXTURES)) cpSync(join(FIXTURES, file), join(project, file), { recursive: true });
}, 360_000);

/**
 * `npm install <fresh clone's path> --omit=optional` into a new host project. npm links the
 * folder and runs its `prepare` there, but installs none of its dependencies (dev or not):
 * prepare installs what the build and the linked code need (--ignore-scripts), builds, and the
 * host runs from the link. --omit=optional leaves out better-sqlite3, so nothing compiles.
 */
async function installByPath() {
  const host = join(work, 'path-host');
  mkdirSync(host);
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'path-host', private: true, type: 'module' }));
  const fresh = join(work, 'fresh');
  copyTree(fresh);
  expect(existsSync(join(fresh, 'node_modules')) || existsSync(join(fresh, 'dist'))).toBe(false);
  const started = performance.now();
  // --foreground-scripts: prepare's output reaches us (npm hides a dependency's script output).
  const { stderr } = await run('npm', ['install', fresh, '--omit=optional', '--foreground-scripts', ...NPM_FLAGS], {
    cwd: host,
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const seconds = (performance.now() - started) / 1000;
  console.info(`[package] npm install <fresh clone's path> --omit=optional: ${seconds.toFixed(1)} s (dependency install + build)`);
  return { host, fresh, stderr };
}

/** True (and the file's installed-package tests skip) when npm could not reach the registry; under CI=true that is a failure. */
function registryOutOfReach(error: unknown): boolean {
  const { stderr = '', killed = false } = error as { stderr?: string; killed?: boolean };
  const cause = killed
    ? 'it took over its time limit'
    : stderr.split('\n').find((line) => /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH/.test(line));
  if (!cause) return false;
  unreachable = cause.trim();
  const message = `npm install could not reach the registry: ${unreachable}`;
  if (process.env.CI === 'true') throw new Error(`[package] ${message}`);
  console.warn(`\n${'!'.repeat(100)}\n[package] SKIPPING the installed-package tests: ${message}\n${'!'.repeat(100)}\n`);
  return true;
}

afterAll(async () => {
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Skips a test that needs the scratch install when the registry was out of reach (never under CI). */
function needsInstall(context: TestContext): void {
  if (unreachable !== null) context.skip(`no registry: ${unreachable}`);
}

describe('the packed tarball', () => {
  test('holds the built code and the docs, and nothing of the tests', (context) => {
    // Packed from the path install's build, so it needs the registry too.
    needsInstall(context);
    const outside = tarballFiles.filter(
      (f) =>
        !f.startsWith('dist/src/') &&
        !f.startsWith('dist/adapters/') &&
        !['package.json', 'README.md', 'ARCHITECTURE.md', 'SECURITY.md', 'LICENSE'].includes(f),
    );
    expect(outside).toEqual([]);
    for (const entry of Object.values(manifest.exports as Record<string, string | { types: string; default: string }>)) {
      if (typeof entry === 'string') continue;
      expect(tarballFiles).toContain(entry.types.slice(2));
      expect(tarballFiles).toContain(entry.default.slice(2));
    }
    // Source maps would point at src/*.ts, which is not shipped: the build emits none.
    expect(tarballFiles.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(tarballFiles.filter((f) => /(^|\/)(test|tests|__tests__|fixtures)\/|\.test\.|openapi-check|delivery-routes/.test(f))).toEqual(
      [],
    );
    // A backstop beside the file checks above (what grows it unnoticed is a stray folder): the
    // code of this round (ordering, three dashboard locales, stats, signatures, the search by
    // subject and the dense log) packs to 483 KiB.
    expect(packed.size).toBeLessThan(540 * 1024);
  });

  test("installs with --omit=optional without better-sqlite3; drivers, kysely and nodemailer are peers (the host's copies)", (context) => {
    needsInstall(context);
    expect(existsSync(join(project, 'node_modules/identity-webhooks/dist/src/index.js'))).toBe(true);
    expect(existsSync(join(project, 'node_modules/better-sqlite3'))).toBe(false);
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/identity-webhooks/package.json'), 'utf8'));
    // Nothing compiled or duplicated behind the host's back: a SQLite host installs better-sqlite3
    // itself, and the one kysely in the tree is the host's (its Kysely types are ours).
    expect(installed.optionalDependencies).toBeUndefined();
    for (const name of ['pg', 'better-sqlite3', 'kysely', 'nodemailer', 'better-auth']) {
      expect(installed.dependencies, name).not.toHaveProperty(name);
      expect(installed.peerDependencies, name).toHaveProperty(name);
    }
    for (const name of ['pg', 'better-sqlite3', 'nodemailer', 'better-auth'])
      expect(installed.peerDependenciesMeta[name], name).toEqual({ optional: true });
    expect(installed.peerDependenciesMeta.kysely).toBeUndefined();
    expect(existsSync(join(project, 'node_modules/identity-webhooks/node_modules/kysely'))).toBe(false);
  });
});

describe('the installed package at run time', () => {
  test('a PostgreSQL host delivers an event that a receiver-only install verifies against its key set', async (context) => {
    needsInstall(context);
    await deliverAndVerify(project, (await database()).url);
  }, 60_000);

  test('identity-webhooks/postgres without pg imports, and postgresStore names the package to install', async (context) => {
    needsInstall(context);
    // pg is an optional peer dependency: a host on SQLite, or a receiver-only install, has none.
    const created = async () => {
      const { stdout } = await run(process.execPath, ['postgres.mjs'], { cwd: project, timeout: 20_000 });
      return JSON.parse(stdout.trim().split('\n').at(-1)!);
    };
    expect(await created()).toEqual({ created: true });
    await withoutPg(async () => {
      expect(await created()).toEqual({
        created: false,
        message: 'postgresStore needs the "pg" package, which is not installed: run `npm install pg`',
      });
    });
  });

  test('identity-webhooks/sqlite without better-sqlite3 imports, and sqliteStore names the package to install', async (context) => {
    needsInstall(context);
    const { stdout } = await run(process.execPath, ['sqlite.mjs'], { cwd: project, timeout: 20_000 });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(result).toEqual({ opened: false, message: expect.stringContaining('npm install better-sqlite3') });
    expect(result.message).toMatch(/^sqliteStore needs the "better-sqlite3" package/);
  });

  test('with better-sqlite3 beside it (what a default install adds), the SQLite default works', async (context) => {
    needsInstall(context);
    await withSqliteDriver(async () => {
      const { stdout } = await run(process.execPath, ['sqlite.mjs'], { cwd: project, timeout: 20_000 });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
      expect(result).toMatchObject({ opened: true, webhooks: [result.created] });
    });
  });

  test("docs/security.md 'Keys in production': generate, load from a variable or a file, rotate, as written", async (context) => {
    needsInstall(context);
    const guide = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
    const section = guide.slice(guide.indexOf('## Keys in production'), guide.indexOf('\n## ', guide.indexOf('## Keys in production') + 1));
    const generate = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
    const load = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    expect(generate && load).toBeTruthy();
    const newKey = async () => {
      await run('sh', ['-c', generate!], { cwd: project, timeout: 20_000 });
      const [key] = JSON.parse(readFileSync(join(project, 'webhook-signing-keys.json'), 'utf8'));
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', d: expect.any(String), kid: expect.any(String) });
      return key as { kid: string };
    };
    const [current, next] = [await newKey(), await newKey()];
    // The snippet as written, plus one line so the script ends.
    writeFileSync(join(project, 'keys.mjs'), `${load}await hooks.close();\n`);
    writeFileSync(join(project, 'secret.json'), JSON.stringify([current, next]));
    const keysAfter = async (env: Record<string, string>) => {
      const { stdout } = await run(process.execPath, ['keys.mjs'], { cwd: project, timeout: 20_000, env: { ...process.env, ...env } });
      return stdout
        .trim()
        .split('\n')
        .filter((line) => /^\S+ (signing|next|retiring|published)$/.test(line));
    };
    const inTen = new Date(Date.now() + 10 * 60_000).toISOString();
    const anHourAgo = new Date(Date.now() - 3600_000).toISOString();
    await withSqliteDriver(async () => {
      expect(await keysAfter({ WEBHOOK_SIGNING_KEYS: JSON.stringify([current]) })).toEqual([`${current.kid} signing`]);
      // Rotation announced (from a mounted file): the next key is published before it signs.
      expect(await keysAfter({ WEBHOOK_SIGNING_KEYS_FILE: 'secret.json', WEBHOOK_NEXT_KEY_SIGNS_FROM: inTen })).toEqual([
        `${current.kid} signing`,
        `${next.kid} next`,
      ]);
      // A process started long after the switch: the old key has already left the key set.
      expect(await keysAfter({ WEBHOOK_SIGNING_KEYS: JSON.stringify([current, next]), WEBHOOK_NEXT_KEY_SIGNS_FROM: anHourAgo })).toEqual([
        `${next.kid} signing`,
      ]);
    });
  });
});

describe('npm install <path>', () => {
  /**
   * The install itself runs first, in the file's beforeAll (`installByPath`): its build is the
   * one the tarball above packs.
   *
   * `npm install git+file:///<a git repository of this tree>` is checked by hand, not here: npm
   * clones it, installs every dependency with their install scripts (compiling better-sqlite3 even
   * under --omit=optional), runs prepare, packs, then installs the tarball: 568 s on this 2-core
   * machine (other test runs beside it) with a warm cache (2026-11-25), far past a test's budget. The result
   * imported identity-webhooks and identity-webhooks/receiver. To repeat it:
   *   git init repo && cp -r <tree without node_modules, dist> repo && git -C repo add -A && git -C repo commit -m tree
   *   mkdir host && cd host && npm init -y && time npm install git+file://$PWD/../repo --omit=optional
   */
  test('a fresh clone (no node_modules, no dist/) installs into a working package, and a host runs from it', async (context) => {
    needsInstall(context);
    const { host, fresh, stderr } = pathInstall!;
    // The one line prepare prints, and what it did: a link to the clone, built, without better-sqlite3.
    expect(stderr).toContain(`identity-webhooks: typescript and @types/node not installed in ${fresh}`);
    expect(stderr).toMatch(/installing what the build and the linked package need \(\d+ packages, --ignore-scripts\) to build dist\//);
    expect(realpathSync(join(host, 'node_modules/identity-webhooks'))).toBe(realpathSync(fresh));
    expect(existsSync(join(fresh, 'dist/src/index.js'))).toBe(true);
    expect(existsSync(join(fresh, 'node_modules/better-sqlite3'))).toBe(false);
    // Only what the build and the linked code need: no test runner, browser driver or ORM.
    for (const name of ['vitest', 'playwright-core', 'prisma', 'drizzle-orm'])
      expect(existsSync(join(fresh, 'node_modules', name)), name).toBe(false);
    // At the versions the lockfile pins.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    for (const name of ['typescript', 'kysely', 'better-auth', 'jose']) {
      const installed = JSON.parse(readFileSync(join(fresh, 'node_modules', name, 'package.json'), 'utf8')).version;
      expect(installed, name).toBe(lock.packages[`node_modules/${name}`].version);
    }
    // And it works: the same PostgreSQL host and receiver as above, run from this install.
    for (const file of ['host.mjs', 'receiver.mjs']) cpSync(join(FIXTURES, file), join(host, file));
    const schema = await createSchema((await database()).url, 'path');
    try {
      await deliverAndVerify(host, schema.url);
    } finally {
      await schema.drop();
    }
  }, 360_000);
});

describe('the installed types', () => {
  // One compiler run over every entry's file (a program of seven modules, each importing its
  // entry): each test reads its own file's errors, and the last the errors in the package's
  // declaration files, which every entry shares. Seven runs cost seven loads of the same types.
  let checked: Promise<string> | undefined;
  const check = () =>
    (checked ??= (async () => {
      const tsc = join(project, 'node_modules/typescript/bin/tsc');
      const flags = ['--noEmit', '--strict', '--skipLibCheck', 'false', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
      // No DOM lib: a Node host's Request and Response come from @types/node.
      const more = ['--target', 'es2022', '--lib', 'es2023', '--types', 'node', '--pretty', 'false'];
      const files = ENTRIES.map((entry) => `types/${entry}.ts`);
      return run(process.execPath, [tsc, ...flags, ...more, ...files], { cwd: project, timeout: 120_000 }).then(
        () => '',
        (error: { stdout?: string; message: string }) => error.stdout || error.message,
      );
    })());
  /** The compiler's error lines (a message's continuation lines stay with it) about `file`, or about no entry's file when null. */
  const errorsOf = (output: string, file: string | null) =>
    output
      .split(/\n(?=\S)/)
      .filter((e) => e.trim() !== '')
      .filter((e) => (file === null ? !ENTRIES.some((entry) => e.startsWith(`types/${entry}.ts(`)) : e.startsWith(`${file}(`)));

  test.for(ENTRIES)(
    '%s type-checks with skipLibCheck false, strict, NodeNext and only @types/node',
    { timeout: 150_000 },
    async (entry, context) => {
      needsInstall(context);
      expect(errorsOf(await check(), `types/${entry}.ts`)).toEqual([]);
    },
  );
  test("the package's declaration files type-check under the same options", { timeout: 150_000 }, async (context) => {
    needsInstall(context);
    expect(errorsOf(await check(), null)).toEqual([]);
  });
});

interface Script {
  child: ChildProcess;
  /** The next JSON line whose `step` is `step` (earlier lines are skipped); rejects on exit or after 30 s. */
  next(step: string): Promise<Record<string, any>>;
  exited: Promise<number | null>;
}

/** Runs one of a scratch host's scripts (in `cwd`) with node, reading the JSON lines it prints. */
function script(cwd: string, file: string, env: Record<string, string>): Script {
  const child = spawn(process.execPath, [file], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, any>[] = [];
  const waiting: Array<() => void> = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => void (stderr += chunk));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line));
    } catch {
      return; // not one of ours (a log line)
    }
    for (const wake of waiting.splice(0)) wake();
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => (done(code), waiting.splice(0).forEach((w) => w()))));
  return {
    child,
    exited,
    async next(step) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const i = lines.findIndex((l) => l.step === step);
        if (i >= 0) return lines.splice(0, i + 1).at(-1)!;
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`${file} printed no "${step}" (exit ${child.exitCode}); stderr:\n${stderr.slice(-3000)}`);
        }
        await new Promise<void>((wake) => {
          waiting.push(wake);
          setTimeout(wake, 500);
        });
      }
    },
  };
}

/** This file's PostgreSQL database, created on first use. */
async function database(): Promise<TestPostgres> {
  server ??= await useTestPostgres('package');
  return server;
}

/**
 * Runs host.mjs and receiver.mjs from `cwd` (a scratch host that installed the package): the host
 * on PostgreSQL at `databaseUrl` delivers one event, the receiver-only install verifies it.
 */
async function deliverAndVerify(cwd: string, databaseUrl: string): Promise<void> {
  const children: ChildProcess[] = [];
  try {
    // The host's port is chosen first: the receiver's verifier needs the issuer at start-up.
    const port = await closedPort();
    const issuer = `http://127.0.0.1:${port}/auth`;
    const receiver = script(cwd, 'receiver.mjs', { ISSUER: issuer });
    children.push(receiver.child);
    const { url: receiverUrl } = await receiver.next('listening');

    const host = script(cwd, 'host.mjs', { DATABASE_URL: databaseUrl, RECEIVER_URL: receiverUrl, HOST_PORT: String(port) });
    children.push(host.child);
    const emitted = await host.next('emitted');
    expect(emitted.issuer).toBe(issuer);
    const verified = await receiver.next('verified');
    expect(verified.webhookId).toBe(emitted.deliveryId);
    expect(verified.event).toMatchObject({
      type: 'user.created',
      source: 'api',
      event_id: emitted.eventId,
      iss: issuer,
      data: emitted.data,
    });
    const done = await host.next('done');
    expect(done.delivery).toMatchObject({ id: emitted.deliveryId, status: 'delivered', lastResult: '200', attemptCount: 1 });
    expect(done.delivery).not.toHaveProperty('lockedBy');
    expect(done.attempts).toHaveLength(1);
    expect(await host.exited).toBe(0);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** Runs `fn` with the scratch project's pg moved aside, as in a host that never installed it. */
async function withoutPg(fn: () => Promise<void>): Promise<void> {
  const pg = join(project, 'node_modules/pg');
  const aside = join(project, 'node_modules/.pg-aside');
  renameSync(pg, aside);
  try {
    await fn();
  } finally {
    renameSync(aside, pg);
  }
}

/**
 * Runs `fn` with our compiled better-sqlite3 linked beside the installed package, standing in for
 * the one `npm install identity-webhooks` compiles (two minutes here); the package finds it by
 * plain resolution from its own folder.
 */
async function withSqliteDriver(fn: () => Promise<void>): Promise<void> {
  const link = join(project, 'node_modules/better-sqlite3');
  symlinkSync(join(ROOT, 'node_modules/better-sqlite3'), link, 'dir');
  try {
    await fn();
  } finally {
    rmSync(link, { force: true });
  }
}

/** A copy of this tree as a fresh clone has it: no node_modules, no dist/. */
function copyTree(to: string): void {
  cpSync(ROOT, to, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|dist|\.git|\.tmp)$/.test(source) && !/\.db(-wal|-shm)?$/.test(source),
  });
}
