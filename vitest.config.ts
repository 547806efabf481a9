import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time at least. Vitest's default (a core less than the machine has) is
    // one on a two-core machine, and most of this suite's time is spent waiting (child processes,
    // PostgreSQL, Chromium, real sockets), not computing: one at a time left a core idle.
    maxWorkers: Math.max(2, availableParallelism() - 1),
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
