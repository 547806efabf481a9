import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
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
