/**
 * Figure "ops-cli" (README "Operator CLI"): what `npx ops --help` costs, in
 * CPU-seconds of the whole process tree (the bin shim on the machine's Node
 * and the CLI's child on the pinned Node), user + system, as the kernel
 * counts them for waited-for children (`/usr/bin/time`-style, through
 * `process.resourceUsage` of a wrapper child). Budget: ≤ 0.5 CPU-s, with the
 * bundle cached (bin/ops.mjs builds it once; the first call is reported
 * beside it). CPU-seconds, not wall time: the figure holds on a loaded machine.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Results } from '../lib/results';
import { round } from '../lib/stats';

const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
/** The budget of issue #37, CPU-seconds. */
const HELP_CPU_BUDGET_S = 0.5;

/** Runs `node bin/ops.mjs ...args` under a wrapper that reports the CPU-seconds of its waited-for children. */
async function cpuSecondsOf(args: string[]): Promise<number> {
  const wrapper = `
    const { spawnSync } = require('node:child_process');
    const before = process.resourceUsage();
    const r = spawnSync(process.execPath, ['bin/ops.mjs', ...${JSON.stringify(args)}], { stdio: 'ignore' });
    if (r.status !== 0) { process.stderr.write('exit ' + r.status); process.exit(1); }
    // getrusage(RUSAGE_CHILDREN) is not in process.resourceUsage; /proc gives the children's times (clock ticks).
    const stat = require('node:fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    const ticks = Number(stat[13]) + Number(stat[14]);
    process.stdout.write(String(ticks / 100));
  `;
  const { stdout } = await run(process.execPath, ['-e', wrapper], { cwd: PROJECT_ROOT });
  return Number(stdout);
}

/** Measures `ops --help`: once on a cold cache (builds the bundle), then `runs` times cached; the median is the figure. */
export async function runOpsCli(results: Results, { runs }: { runs: number }): Promise<void> {
  const group = 'operator CLI';
  rmSync(path.join(PROJECT_ROOT, 'node_modules', '.cache', 'ops'), { recursive: true, force: true });
  const cold = await cpuSecondsOf(['--help']);
  const cached: number[] = [];
  for (let i = 0; i < runs; i++) cached.push(await cpuSecondsOf(['--help']));
  cached.sort((a, b) => a - b);
  const median = cached[Math.floor(cached.length / 2)]!;
  results.add({
    group,
    name: 'npx ops --help (bundle cached)',
    value: round(median, 3),
    unit: 'CPU-s',
    budget: { op: '<=', limit: HELP_CPU_BUDGET_S, text: `≤ ${HELP_CPU_BUDGET_S} CPU-s` },
    extra: { 'first call (builds the bundle)': `${round(cold, 2)} CPU-s`, runs },
  });
}
