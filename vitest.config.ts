import { defineConfig } from 'vitest/config';
import { SETTINGS } from './lib/config';
import LongestFirstSequencer from './test/support/sequencer';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // Longest files first (test/durations.json): the files that spawn `npm start` or the CLI never start last.
    sequence: { sequencer: LongestFirstSequencer },
    // The limits of docs/limits.md at their defaults, explicit: each test's fresh organization has its own window.
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_DEV: 'false',
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...Object.fromEntries(
        [
          SETTINGS.rateLimitRequests,
          SETTINGS.rateLimitWindowSeconds,
          SETTINGS.exportsPerHour,
          SETTINGS.uploadsPerHour,
          SETTINGS.testRateLimitRequests,
          SETTINGS.testAccountIdsPerDay,
        ].map((setting) => [setting.env, String(setting.default)]),
      ),
    },
  },
});
