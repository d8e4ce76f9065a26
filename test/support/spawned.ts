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

/** The line a spawned `npm start` prints once it serves (infra/local/start.ts). */
const READY_LINE = 'Campaign Enrichment API is running at';

/** What a spawned process printed so far, on stdout and stderr together; `text` keeps growing while it runs. */
export interface SpawnedOutput {
  text: string;
}

/**
 * Collects a spawned `npm start`'s output and waits for its ready line.
 * @param child the spawned process, with piped stdout and stderr.
 * @param what how the error names the process (e.g. "npm start (after the kill)").
 * @param withinMs how long it may take (ms); {@link SPAWNED_READY_MS} by default.
 * @returns its output, which goes on collecting after the ready line.
 * @throws Error with the output so far when it exits first or is not ready within `withinMs`.
 */
export async function untilStackReady(
  child: import('node:child_process').ChildProcess,
  what = 'npm start',
  withinMs = SPAWNED_READY_MS,
): Promise<SpawnedOutput> {
  const output: SpawnedOutput = { text: '' };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} was not ready within ${withinMs / 1000} s:\n${output.text}`)), withinMs);
    const onData = (chunk: Buffer) => {
      output.text += chunk.toString('utf8');
      if (output.text.includes(READY_LINE)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it was ready:\n${output.text}`));
    });
  });
  return output;
}

/** Whether a process with this PID is alive (signal 0). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
