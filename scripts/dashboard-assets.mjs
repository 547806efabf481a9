// Copies the dashboard's static files (src/dashboard/assets/*.js, *.css) next to the compiled
// handler in dist/, which reads them from `./assets/` beside itself. tsc compiles only .ts, and
// the element ships as written (no bundler), so a plain copy is the whole build step.
import { cpSync, existsSync, readdirSync } from 'node:fs';

const from = new URL('../src/dashboard/assets/', import.meta.url);
const to = new URL('../dist/src/dashboard/assets/', import.meta.url);
if (!existsSync(new URL('../dist/src/dashboard/handler.js', import.meta.url))) {
  throw new Error('dashboard-assets: dist/src/dashboard/handler.js is missing; run tsc first');
}
cpSync(from, to, { recursive: true });
console.log(`dashboard-assets: ${readdirSync(to).length} files copied to dist/src/dashboard/assets/`);
