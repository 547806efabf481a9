import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BASELINE, MIGRATIONS } from '../../adapters/kysely/migrations.js';
import { drizzleDdl } from '../better-auth/orm/ddl.js';
import * as drizzleSchema from '../better-auth/orm/drizzle-schema-pg.js';
import { buildForChildren } from '../helpers/fleet.js';
import { tempDir } from '../helpers/http.js';
import { adminQuery, createDatabase, type TestPostgres, useTestPostgres } from '../helpers/postgres.js';

/**
 * README.md and docs/better-auth.md as a new user pastes them. Every fenced block is accounted
 * for (a new block with no check here fails the first test):
 * - a program (a `ts` or `js` block whose first line names its file, `// auth.ts`) is written to a
 *   scratch project whose `identity-webhooks` is this tree's build and whose other packages are
 *   this tree's, type-checked with `strict` (TypeScript blocks), and run;
 * - a shell block runs there when it is a command of that project (`npx @better-auth/cli migrate`
 *   with the block's `auth.ts`, `npm run example:better-auth`, the demo), and is otherwise checked
 *   against package.json (the install lines: packing and installing the tarball is
 *   test/processes/package.test.ts's).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const run = promisify(execFile);

interface Block {
  doc: string;
  lang: string;
  text: string;
  /** The file a program names on its first line (`// auth.ts`), if it does. */
  file: string | undefined;
}

function blocksOf(doc: string): Block[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, lang = '', body = '']) => ({
    doc,
    lang,
    text: body,
    file: /^\/\/ ([\w.-]+\.m?[jt]s)\b/.exec(body)?.[1],
  }));
}

const blocks = [...blocksOf('README.md'), ...blocksOf('docs/better-auth.md')];
const find = (doc: string, predicate: (b: Block) => boolean): Block => {
  const found = blocks.filter((b) => b.doc === doc && predicate(b));
  if (found.length !== 1) throw new Error(`${doc}: ${found.length} blocks match, expected 1`);
  return found[0]!;
};
const checked = new Set<Block>();
const take = (doc: string, predicate: (b: Block) => boolean): Block => {
  const block = find(doc, predicate);
  checked.add(block);
  return block;
};

// What each block is, found by its content: every test below takes its blocks from here.
const readme = {
  install: take('README.md', (b) => b.lang === 'sh' && b.text.includes('npm pack')),
  auth: take('README.md', (b) => b.file === 'auth.ts'),
  migrate: take('README.md', (b) => b.lang === 'sh' && b.text.includes('@better-auth/cli migrate')),
  quick: take('README.md', (b) => b.file === 'quick.mjs'),
  twoCommands: take('README.md', (b) => b.lang === 'sh' && b.text.includes('npm run demo')),
};
const guide = {
  example: take('docs/better-auth.md', (b) => b.lang === 'sh' && b.text.includes('example:better-auth')),
  install: take('docs/better-auth.md', (b) => b.lang === 'sh' && b.text.includes('npm install')),
  auth: take('docs/better-auth.md', (b) => b.file === 'auth.ts' && b.text.includes('better-sqlite3')),
  drizzle: take('docs/better-auth.md', (b) => b.file === 'auth.ts' && b.text.includes('drizzleAdapter')),
  prisma: take('docs/better-auth.md', (b) => b.file === 'auth.ts' && b.text.includes('prismaAdapter')),
  migrate: take('docs/better-auth.md', (b) => b.lang === 'sh' && b.text.trim() === 'npx @better-auth/cli migrate'),
  overrides: take('docs/better-auth.md', (b) => b.file === 'overrides.ts'),
};

let dist: string;
let server: TestPostgres;
const scratch = tempDir('iw-docs-');
const work = scratch.dir;

/** Each program's scratch project (a folder of `work`). */
const programs = {
  readme: 'README-md',
  guide: 'docs-better-auth-md',
  overrides: 'overrides',
  drizzle: 'orm-drizzle',
  prisma: 'orm-prisma',
};

beforeAll(async () => {
  [dist, server] = await Promise.all([buildForChildren(), useTestPostgres('docs')]);
  await writePrograms();
}, 180_000);

/** Writes every TypeScript program of the docs into its project, with what it imports (the ORMs' schema files), before the one compiler run. */
async function writePrograms(): Promise<void> {
  write(project(programs.readme), readme.auth);
  write(project(programs.guide), guide.auth);
  write(project(programs.overrides), guide.overrides);
  const drizzleDir = project(programs.drizzle);
  write(drizzleDir, guide.drizzle);
  // What npx @better-auth/cli generate writes.
  cpSync(join(ROOT, 'test/better-auth/orm/drizzle-schema-pg.ts'), join(drizzleDir, 'auth-schema.ts'));
  const prismaDir = project(programs.prisma);
  write(prismaDir, guide.prisma);
  // The same tables as Prisma models, generated as Prisma 7 does (offline: no engine download).
  const fixture = readFileSync(join(ROOT, 'test/better-auth/orm/prisma-pg.prisma'), 'utf8');
  mkdirSync(join(prismaDir, 'prisma'));
  writeFileSync(
    join(prismaDir, 'prisma/schema.prisma'),
    fixture.replace(
      /generator client \{[^}]*\}/,
      'generator client {\n  provider = "prisma-client"\n  output = "../generated/prisma"\n  moduleFormat = "esm"\n  importFileExtension = "js"\n}',
    ),
  );
  await run(process.execPath, [join(ROOT, 'node_modules/prisma/build/index.js'), 'generate', '--schema', 'prisma/schema.prisma'], {
    cwd: prismaDir,
    timeout: 120_000,
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false', CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
  });
}

afterAll(async () => {
  scratch.cleanup();
  await server?.close();
});

/**
 * A scratch project: this tree's node_modules (each entry linked, so better-auth and kysely are
 * the very copies the build resolves), and `identity-webhooks` as a package whose dist/ is the build.
 */
function project(name: string): string {
  const dir = join(work, name);
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
  const self = join(modules, 'identity-webhooks');
  mkdirSync(self);
  writeFileSync(join(self, 'package.json'), JSON.stringify(manifest));
  symlinkSync(dist, join(self, 'dist'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
      },
      include: ['*.ts', 'generated/**/*.ts'],
    }),
  );
  return dir;
}

/** Writes a program block under its own name and, for TypeScript, its JavaScript beside it (`auth.ts` → `auth.mjs`). */
function write(dir: string, block: Block): void {
  writeFileSync(join(dir, block.file!), block.text);
  if (block.file!.endsWith('.ts')) {
    const { outputText } = ts.transpileModule(block.text, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    });
    writeFileSync(join(dir, block.file!.replace(/\.ts$/, '.mjs')), outputText);
  }
}

/**
 * Every TypeScript program of the docs, type-checked strictly in one compiler run (a program per
 * scratch project, all in one: better-auth's types are loaded once, not once per project); each
 * test reads the errors of its own project's files. Started by the first test that asks, once
 * every program is written (`writePrograms`).
 */
let compiled: Promise<string> | undefined;
function typecheck(name: string): Promise<void> {
  compiled ??= (async () => {
    writeFileSync(
      join(work, 'tsconfig.json'),
      JSON.stringify({
        extends: join(work, programs.readme, 'tsconfig.json'),
        compilerOptions: { typeRoots: [join(work, programs.readme, 'node_modules/@types')] },
        include: ['*/*.ts', '*/generated/**/*.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', work, '--pretty', 'false'], { cwd: work, timeout: 180_000 }).catch((e) => e);
    // Type errors are on stdout; a compiler that failed otherwise (a crash, the time limit) fails every program's test.
    return String(result.stdout ?? '') || (result instanceof Error ? result.message : '');
  })();
  return compiled.then((output) => {
    const others = Object.values(programs).filter((other) => other !== name);
    const mine = output.split(/\n(?=\S)/).filter((line) => !others.some((other) => line.startsWith(`${other}/`)));
    expect(mine.filter((line) => line.trim() !== '')).toEqual([]);
  });
}

/** Compiles a project's TypeScript files one by one to out/ (a project with generated TypeScript, Prisma's client): the checking is `typecheck`'s. */
function emit(dir: string): void {
  const walk = (from: string): string[] =>
    readdirSync(join(dir, from), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? e.name === 'node_modules' || e.name === 'out'
          ? []
          : walk(join(from, e.name))
        : e.name.endsWith('.ts')
          ? [join(from, e.name)]
          : [],
    );
  for (const file of walk('.')) {
    const { outputText } = ts.transpileModule(readFileSync(join(dir, file), 'utf8'), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    });
    mkdirSync(dirname(join(dir, 'out', file)), { recursive: true });
    writeFileSync(join(dir, 'out', file.replace(/\.ts$/, '.js')), outputText);
  }
}

/** Runs a shell line in `dir` as a user at a terminal would, answering yes to a question. */
function shell(
  dir: string,
  line: string,
  timeoutMs = 120_000,
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn('sh', ['-c', line], { cwd: dir, env: { ...process.env, CI: '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.stdin.end('y\n');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

/** The command lines of a shell block, without comments. */
const lines = (block: Block) =>
  block.text
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);

test('every block of README.md and docs/better-auth.md has a check here', () => {
  const unchecked = blocks.filter((b) => !checked.has(b)).map((b) => `${b.doc}: ${b.text.split('\n')[0]}`);
  expect(unchecked).toEqual([]);
});

test('the install lines name this version and only packages it declares', () => {
  const tarball = `identity-webhooks-${manifest.version}.tgz`;
  expect(readme.install.text).toContain(tarball);
  expect(guide.install.text).toContain(tarball);
  const named = lines(guide.install)[0]!.split(/\s+/).slice(3);
  for (const name of named) expect(Object.keys(manifest.peerDependencies)).toContain(name);
  for (const line of [...lines(readme.twoCommands), ...lines(guide.example)]) {
    for (const [, script] of line.matchAll(/npm run ([\w:-]+)/g)) expect(manifest.scripts).toHaveProperty(script!);
  }
  expect(lines(readme.twoCommands)).toContain('npm test');
});

describe.each([
  ['README.md', readme, programs.readme],
  ['docs/better-auth.md', guide, programs.guide],
] as const)('%s: auth.ts, then `npx @better-auth/cli migrate`', (_doc, blocks, name) => {
  test('type-checks, migrates both schemas whole, and a sign-up is an event', async () => {
    const dir = join(work, name);
    await typecheck(name);
    const [command] = lines(blocks.migrate);
    const migrated = await shell(dir, command!);
    expect(migrated.output).toContain('migration was completed successfully');
    expect(migrated.code).toBe(0);
    const db = new Database(join(dir, 'auth.db'), { readonly: true });
    try {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table'")
        .all()
        .map((r) => (r as { name: string }).name);
      expect(tables).toEqual(expect.arrayContaining(['user', 'session', 'account', 'verification']));
      // The engine's schema is complete when the CLI returns, not 4 migrations of it.
      const applied = db.prepare('select version from iw_migrations order by version').all();
      expect(applied.map((r) => (r as { version: number }).version)).toEqual([BASELINE.version, ...MIGRATIONS.map((m) => m.version)]);
    } finally {
      db.close();
    }
    // Then the app as a user starts it: a sign-up, and its event.
    writeFileSync(
      join(dir, 'start.mjs'),
      `import { auth } from './auth.mjs';
import { webhooksOf } from 'identity-webhooks/better-auth';
const warnings = [];
const warn = console.warn;
console.warn = (...args) => { warnings.push(args.join(' ')); warn(...args); };
const { user } = await auth.api.signUpEmail({ body: { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace' } });
const hooks = await webhooksOf(auth);
console.log(JSON.stringify({ user: user.id, warnings }));
await hooks.close();
`,
    );
    const started = await shell(dir, `node start.mjs`, 60_000);
    expect(started.code, started.output).toBe(0);
    const report = JSON.parse(started.output.trim().split('\n').at(-1)!);
    expect(report.warnings.filter((w: string) => /undefined/.test(w))).toEqual([]);
    const db2 = new Database(join(dir, 'auth.db'), { readonly: true });
    try {
      const events = db2.prepare('select type, data from iw_events').all() as Array<{ type: string; data: string }>;
      expect(events.map((e) => e.type)).toEqual(['user.created']);
      expect(JSON.parse(events[0]!.data).user.id).toBe(report.user);
    } finally {
      db2.close();
    }
  }, 240_000);
});

test('docs/better-auth.md Overrides: type-checks strictly and builds the plugin', async () => {
  const dir = join(work, programs.overrides);
  await typecheck(programs.overrides);
  const { stdout } = await run(process.execPath, ['-e', "const { plugin } = await import('./overrides.mjs'); console.log(plugin.id)"], {
    cwd: dir,
    timeout: 30_000,
  });
  expect(stdout.trim()).toBe('identity-webhooks');
}, 120_000);

test('README.md quick.mjs runs as written: one attempt, HTTP 200', async () => {
  const dir = project('quick');
  write(dir, readme.quick);
  const result = await shell(dir, 'node quick.mjs', 60_000);
  expect(result.code, result.output).toBe(0);
  expect(result.output).toMatch(/statusCode: 200/);
  expect(result.output).toMatch(/got msg_/);
}, 90_000);

test.each([
  ['README.md: npm run demo', 'examples/demo.mjs'],
  ['docs/better-auth.md: npm run example:better-auth', 'examples/better-auth/main.mjs'],
])(
  '%s runs and ends by itself',
  async (_name, script) => {
    const dir = project(script.replace(/\W/g, '-'));
    cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
    const result = await shell(dir, `node ${script}`, 90_000);
    expect(result.code, result.output).toBe(0);
    expect(result.output.trim().split('\n').at(-1)).toBe('done');
  },
  120_000,
);

describe.each([
  ['Drizzle on node-postgres', 'drizzle'],
  ['Prisma on PostgreSQL', 'prisma'],
] as const)('docs/better-auth.md %s: auth.ts as written', (_name, orm) => {
  test('type-checks, and a sign-up is an event written with its user', async () => {
    const dir = join(work, programs[orm]);
    const database = await createDatabase(server.adminUrl, `docs_${orm}`);
    try {
      await adminQuery(
        database.url,
        orm === 'drizzle' ? drizzleDdl(drizzleSchema, 'postgres') : readFileSync(join(ROOT, 'test/better-auth/orm/prisma-pg.sql'), 'utf8'),
      );
      await typecheck(programs[orm]);
      emit(dir);
      writeFileSync(
        join(dir, 'start.mjs'),
        `import { auth } from './out/auth.js';
import { webhooksOf } from 'identity-webhooks/better-auth';
const { user } = await auth.api.signUpEmail({ body: { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada Lovelace' } });
await (await webhooksOf(auth)).close();
console.log(JSON.stringify({ user: user.id }));
process.exit(0);
`,
      );
      const url = new URL(database.url);
      url.searchParams.set('options', '-c timezone=UTC');
      const started = await shell(dir, 'node start.mjs', 60_000, { DATABASE_URL: url.toString() });
      expect(started.code, started.output).toBe(0);
      const report = JSON.parse(started.output.trim().split('\n').at(-1)!);
      const { rows } = await adminQuery(database.url, 'select type, data from iw_events');
      expect(rows.map((r) => r.type)).toEqual(['user.created']);
      expect(JSON.parse(rows[0].data).user.id).toBe(report.user);
    } finally {
      await database.drop();
    }
  }, 240_000);
});
