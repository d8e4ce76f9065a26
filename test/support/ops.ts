/**
 * The operator CLI's program run in this process (commander's parsing, the
 * command, its printing and exit code, as `npx ops` runs them), against the
 * test run's table (`--table`): for tests that run many commands. Tests of
 * the CLI as a process (bin/ops.mjs) are in test/ops-cli.test.ts.
 */
import { expect } from 'vitest';
import { config } from '../../lib/config';
import { COMMANDS } from '../../infra/ops/commands';
import { runOps } from '../../infra/ops/program';

/** What a run printed and its exit code. */
export interface OpsRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `ops ...args --table <the test table>` in this process. */
export async function opsInProcess(args: readonly string[]): Promise<OpsRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runOps([...args, '--table', config.tableName], COMMANDS, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** Runs a command that must succeed; answers the one JSON object it printed. */
export async function opsJson(args: readonly string[]): Promise<any> {
  const run = await opsInProcess(args);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}
