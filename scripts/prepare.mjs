// `prepare`: builds dist/ on `npm install` in this folder, on `npm pack`, and when npm installs
// the package from a git URL (npm installs the dev dependencies first). `npm install <path>` does
// not install them: without TypeScript, say what to do instead of "tsc: not found".
import { execSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
try {
  createRequire(import.meta.url).resolve('typescript');
} catch {
  console.error(
    `identity-webhooks: cannot build dist/: TypeScript, a dev dependency, is not installed in ${root}.\n` +
      `Run \`npm install\` in ${root} first (it builds dist/), then install it from there; or install from\n` +
      'a git URL (npm installs the dev dependencies and builds) or from a tarball made by `npm pack`.',
  );
  process.exit(1);
}
execSync('npm run build', { cwd: root, stdio: 'inherit' });
