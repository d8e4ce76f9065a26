import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // The limits of docs/limits.md at their defaults, explicit: each test's fresh organization has its own window.
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_DEV: 'false',
      POWERTOOLS_METRICS_DISABLED: 'true',
      RATE_LIMIT_REQUESTS: '200',
      RATE_LIMIT_WINDOW_SECONDS: '10',
      EXPORTS_PER_HOUR: '60',
      UPLOADS_PER_HOUR: '60',
    },
  },
});
