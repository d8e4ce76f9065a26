import { defineConfig } from 'vitest/config';
import { SETTINGS } from './lib/config';
import LongestFirstSequencer from './test/support/sequencer';
import { spawnedTestTimeout } from './test/support/spawned';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // Each file its own table on the one DynamoDB Local: a scan costs the file's own items (test/support/own-table.ts).
    setupFiles: ['test/support/own-table.ts'],
    include: ['test/**/*.test.ts'],
    // A test or hook gives up only after the allowance of test/support/spawned.ts (two waits on a signal): a loaded
    // machine is slow, never failed; a test sets its own only to allow more (processes it spawns).
    testTimeout: spawnedTestTimeout({ starts: 0, runs: 2 }),
    hookTimeout: spawnedTestTimeout({ starts: 0, runs: 2 }),
    pool: 'forks',
    // Three files at a time on two cores: most files wait on workflows, DynamoDB Local or processes they spawn. Measured
    // on 10 such files back to back: 336 s with 2 workers, 258 s with 3 (the sum of file durations 566 → 658 s). The
    // whole suite on a fresh clone's .ci/run, machine idle: 490 s with 3, 518 s with 4 (4 gave 452 s once in a warm tree).
    // isolate stays on: test/support/own-table.ts names each file's table before lib/ modules load.
    maxWorkers: 3,
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
