import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_DEV: 'false', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
});
