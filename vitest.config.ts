import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files that run in a process of their own: the ones that spend their time in child processes
 * or PostgreSQL clusters (a fresh process costs them nothing measurable), and the one that
 * measures this process's memory. Every other file shares its worker's loaded modules with the
 * files before it (`isolate: false`): a fresh import of the engine per file was about half the
 * time of the small files.
 */
const OWN_PROCESS = ['test/processes/**/*.test.ts', 'test/receiver/keyset-bounds.test.ts'];
/** The Chromium files: modules shared as above, and one browser for all of them (their global setup starts it). */
const BROWSER = ['test/**/*-browser.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time at least. Vitest's default (a core less than the machine has) is
    // one on a two-core machine, and most of this suite's time is spent waiting (child processes,
    // PostgreSQL, Chromium, real sockets), not computing: one at a time left a core idle.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { extends: true, test: { name: 'own process', include: OWN_PROCESS } },
      { extends: true, test: { name: 'browser', include: BROWSER, isolate: false, globalSetup: ['test/dashboard/chromium-server.ts'] } },
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...OWN_PROCESS, ...BROWSER],
          isolate: false,
        },
      },
    ],
    // Reported on every run, never enforced: a threshold would fail a run for a figure that moves
    // with which tests ran, not with what broke.
    coverage: {
      enabled: true,
      provider: 'v8',
      include: ['src/**', 'adapters/**'],
      // The dashboard's browser modules run in Chromium (the *-browser tests), where v8 coverage
      // of this process cannot see them: counted, they would read as ~500 untested statements.
      exclude: ['src/dashboard/assets/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: '.tmp/coverage',
      reportOnFailure: true,
    },
  },
});
