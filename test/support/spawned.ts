/**
 * The one allowance of tests that spawn a process (`npm start`, the operator
 * CLI, an outside judge): they wait on a readiness signal (a line on stdout,
 * `endpoints.json`, `GET /health` answering 200), never on a fixed sleep, and
 * give up only after this long, which no loaded machine reaches while the
 * process makes progress (issue #37: at load 15–30 a first `npm start` took
 * minutes). A test's own timeout derives from it, and so do the defaults
 * of every wait on a signal inside a test (a campaign reaching a status, a
 * webhook arriving, a workflow state: `pollUntil`, `waitForStatus`,
 * `received`) and vitest's own test and hook timeouts (vitest.config.ts):
 * no test passes only on a fast machine.
 */

/** How long a spawned process may take to become ready (ms). */
export const SPAWNED_READY_MS = 600_000;

/** How long one run of a spawned command (a CLI call, a judge) may take before it counts as hung (ms). */
export const SPAWNED_RUN_MS = 300_000;

/**
 * A test's timeout when it starts `starts` processes (each waited on with {@link SPAWNED_READY_MS})
 * and runs `runs` commands or waits (each within {@link SPAWNED_RUN_MS}), in ms.
 */
export const spawnedTestTimeout = ({ starts = 1, runs = 1 }: { starts?: number; runs?: number } = {}): number =>
  starts * SPAWNED_READY_MS + runs * SPAWNED_RUN_MS;
