// `prepare`: builds dist/ on `npm install` in this folder, on `npm pack`, and when npm installs
// the package from a git URL (npm installs the dev dependencies first, then runs prepare).
// `npm install <path>` links the folder and runs prepare in it, but installs none of its
// dependencies, dev or not (npm leaves a linked folder outside the project to itself): then what
// the build and the linked code need is installed here first (dependencies, peers, TypeScript and
// type packages, at the lockfile's versions, with --ignore-scripts: the build is tsc and two small
// scripts, and this script must not run again), then better-sqlite3's own install script unless
// the host said --omit=optional. So a fresh clone installed by path is a working package.
import { execFileSync, execSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Resolved as tsc resolves them: from this folder up, so a workspace's hoisted tools count.
const require = createRequire(new URL('../package.json', import.meta.url));
const missing = ['typescript', '@types/node'].filter((name) => {
  try {
    require.resolve(`${name}/package.json`);
    return false;
  } catch {
    return true;
  }
});

if (missing.length > 0) {
  // The parent npm passes its own command-line config down as npm_config_* variables: one naming
  // where to install (--prefix, --global, --location) or what to leave out (--omit=dev) would aim
  // this install at the host project, or skip the very tools it is for. --omit=optional is kept:
  // the host asked for no better-sqlite3, so none is installed here either.
  const env = { ...process.env };
  const omitOptional = /\boptional\b/.test(env.npm_config_omit ?? '');
  for (const key of Object.keys(env)) {
    if (
      /^npm_config_(global|prefix|local_prefix|location|omit|include|production|only|also|dev|save.*|workspaces?|include_workspace_root|dry_run|package_lock_only)$/i.test(
        key,
      )
    )
      delete env[key];
  }
  const wanted = buildAndRunDependencies(omitOptional);
  console.error(
    `identity-webhooks: ${missing.join(' and ')} not installed in ${root} (npm installs no dependencies for a path): ` +
      `installing what the build and the linked package need (${Object.keys(wanted).length} packages, --ignore-scripts) to build dist/`,
  );
  installOnly(wanted, omitOptional, env);
  // better-sqlite3 is an optional peer. The host's import resolves it through the link, in this
  // folder: with --omit=optional the host asked for none and none was installed; otherwise
  // --ignore-scripts left it uncompiled, and its own install script runs now (a prebuilt binary,
  // or a compile).
  const sqlite = join(root, 'node_modules/better-sqlite3');
  if (!omitOptional && existsSync(sqlite) && !existsSync(join(sqlite, 'build/Release/better_sqlite3.node'))) {
    console.error('identity-webhooks: building better-sqlite3 (the SQLite driver, an optional dependency)');
    try {
      npm(['rebuild', 'better-sqlite3', '--loglevel=error', '--prefix', root], env);
    } catch {
      // As npm treats an optional dependency that fails to build: left out, so sqliteStore says
      // "needs the better-sqlite3 package" rather than failing on a missing binary.
      console.error('identity-webhooks: better-sqlite3 did not build; it is left out (PostgreSQL and the receiver work without it)');
      rmSync(sqlite, { recursive: true, force: true });
    }
  }
}
execSync('npm run build', { cwd: root, stdio: 'inherit' });

/** Runs the npm that runs this script (npm_execpath, set for every lifecycle script), in `root`. */
function npm(args, env) {
  const cli = process.env.npm_execpath;
  if (cli && /\.[cm]?js$/.test(cli)) execFileSync(process.execPath, [cli, ...args], { cwd: root, env, stdio: 'inherit' });
  else execSync(`npm ${args.map((a) => JSON.stringify(a)).join(' ')}`, { cwd: root, env, stdio: 'inherit' });
}

/**
 * What a linked folder needs and nothing else: the dependencies, the peers the linked code
 * resolves from here (at their dev versions), TypeScript, and the type packages of Node and of
 * those peers. The rest of the dev dependencies (test runners, browsers, ORMs, doc tools) are
 * most of a full dev install and play no part in the build.
 */
function buildAndRunDependencies(omitOptional) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dev = manifest.devDependencies ?? {};
  const peers = Object.keys(manifest.peerDependencies ?? {});
  const typesOf = (name) => `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
  // Without better-sqlite3 (--omit=optional) the build still compiles against its types.
  const run = peers.filter((name) => !(omitOptional && name === 'better-sqlite3'));
  const wanted = { ...manifest.dependencies };
  for (const name of [...run, 'typescript', '@types/node', ...peers.map(typesOf)]) {
    const range = dev[name] ?? manifest.peerDependencies?.[name];
    if (range && !(name in wanted)) wanted[name] = range;
  }
  return wanted;
}

/**
 * Installs `wanted` at the versions package-lock.json pins (npm keeps a lockfile's versions for
 * the packages a manifest still names), in a folder of its own whose node_modules then becomes
 * this folder's: an install here would read this package.json and install every dev dependency.
 */
function installOnly(wanted, omitOptional, env) {
  const target = join(root, 'node_modules');
  const scratch = mkdtempSync(join(root, '.prepare-'));
  try {
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'identity-webhooks-build', private: true, dependencies: wanted }));
    if (existsSync(join(root, 'package-lock.json'))) copyFileSync(join(root, 'package-lock.json'), join(scratch, 'package-lock.json'));
    const flags = ['--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', scratch];
    npm(['install', ...(omitOptional ? ['--omit=optional'] : []), ...flags], env);
    // A folder with some packages of its own keeps them: each one installed here that it lacks
    // joins them (a scope, such as @types, or .bin, one entry at a time).
    const merge = (from, to) => {
      if (!existsSync(to)) return renameSync(from, to);
      for (const entry of readdirSync(from)) {
        const nested = entry.startsWith('@') || entry === '.bin';
        if (nested || !existsSync(join(to, entry))) merge(join(from, entry), join(to, entry));
      }
    };
    merge(join(scratch, 'node_modules'), target);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
