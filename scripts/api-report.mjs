// The exported surface in review: one API Extractor report per package entry (package.json
// "exports"), committed under etc/, so a change to what hosts can import shows in the diff.
//   npm run api:check    builds, then fails (printing the difference) if a report changed
//   npm run api:update   builds, then rewrites etc/*.api.md
// It reads the built declarations (dist/**/*.d.ts). A new entry in "exports" needs its report
// written once with api:update.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('..', import.meta.url));
const update = process.argv.includes('--update');
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

/** `.` → identity-webhooks, `./sqlite` → identity-webhooks-sqlite, and so on. */
const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object' && target.types)
  .map(([subpath, target]) => ({
    subpath,
    types: target.types,
    report: subpath === '.' ? pkg.name : `${pkg.name}-${subpath.slice(2).replaceAll('/', '-')}`,
  }));

// API Extractor writes each report here; this script compares it with etc/ (or copies it there)
// itself, after taking out the line numbers of the declarations that some notes carry: they move
// with every edit above them and are no change to the surface.
const TEMP = `${root}.tmp/api-report/`;
mkdirSync(`${TEMP}work/`, { recursive: true });
mkdirSync(`${root}etc/`, { recursive: true });
const withoutLineNumbers = (text) => text.replace(/^(\/\/ dist\/[^\s:]+):\d+:\d+ - /gm, '$1 - ');
const changed = [];
for (const entry of entries) {
  const entryPoint = `${root}${entry.types.replace(/^\.\//, '')}`;
  if (!existsSync(entryPoint)) throw new Error(`api-report: ${entry.types} is missing; run npm run build first`);
  const config = ExtractorConfig.prepare({
    configObjectFullPath: `${root}api-extractor.json`, // virtual: the config lives here, not in a file
    packageJsonFullPath: `${root}package.json`,
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: entryPoint,
      // The built declarations are resolved as the package's consumers resolve them.
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2023', 'DOM', 'DOM.Iterable'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: true,
            types: ['node'],
          },
          files: [entryPoint],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.report,
        reportFolder: TEMP,
        reportTempFolder: `${TEMP}work/`,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // No release tags (@public, @beta) in this package: everything exported is public.
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          // Noted in the report, where a reviewer sees them, rather than on the console: a type the
          // surface uses but does not export, a {@link} to another entry. Not the "undocumented"
          // message: the report marks such exports anyway, and the message adds line numbers that
          // move with every edit.
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
          'ae-undocumented': { logLevel: 'none', addToApiReportFile: false },
          'ae-unresolved-link': { logLevel: 'none', addToApiReportFile: true },
        },
        // The comments are TSDoc-like, not checked TSDoc; TypeDoc (npm run docs) is their judge.
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
  });
  const problems = [];
  const result = Extractor.invoke(config, {
    localBuild: true,
    messageCallback(message) {
      // API Extractor's own chatter; a report's change is told below, with its diff.
      if (message.category === 'console' && message.logLevel !== 'error') message.handled = true;
      else if (message.logLevel === 'error' || message.logLevel === 'warning') problems.push(message.formatMessageWithLocation(root));
    },
  });
  if (problems.length > 0 || !result.succeeded) throw new Error(`api-report: ${entry.subpath}:\n${problems.join('\n')}`);
  const now = withoutLineNumbers(readFileSync(`${TEMP}${entry.report}.api.md`, 'utf8'));
  writeFileSync(`${TEMP}${entry.report}.api.md`, now);
  const committed = `${root}etc/${entry.report}.api.md`;
  if (existsSync(committed) && readFileSync(committed, 'utf8') === now) continue;
  changed.push(entry);
  if (update) writeFileSync(committed, now);
}

if (update) {
  console.log(`api-report: ${entries.length} reports in etc/ (${changed.length} rewritten)`);
} else if (changed.length > 0) {
  for (const entry of changed) {
    const committed = `etc/${entry.report}.api.md`;
    const now = `.tmp/api-report/${entry.report}.api.md`;
    console.error(
      `\napi-report: the exported surface of ${entry.subpath === '.' ? pkg.name : `${pkg.name}/${entry.subpath.slice(2)}`} changed`,
    );
    if (existsSync(`${root}${committed}`))
      spawnSync('git', ['--no-pager', 'diff', '--no-index', '--', committed, now], { cwd: root, stdio: 'inherit' });
    else console.error(`${committed} does not exist yet`);
  }
  console.error('\napi-report: if the change is intended, run npm run api:update and commit etc/');
  process.exit(1);
} else {
  console.log(`api-report: ${entries.length} reports match etc/`);
}
