#!/usr/bin/env node
/**
 * `npx ops <command>` / `npm exec ops -- <command>`: the operator CLI
 * (infra/ops.ts, README.md#operator-cli) without npm's script banner on stdout.
 *
 * Whatever `node` started this shim (the machine's may be older), the CLI
 * runs on the project's pinned Node 24 (the `node` devDependency) with tsx's
 * loader, in one child process that shares this terminal. The child's exit
 * code (or signal) becomes this process's.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pinnedNode = path.join(root, 'node_modules', 'node', 'bin', 'node');
const node = existsSync(pinnedNode) ? pinnedNode : process.execPath;
const tsx = import.meta.resolve('tsx');
const cli = path.join(root, 'infra', 'ops.ts');

const child = spawn(node, ['--import', tsx, cli, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  process.stderr.write(`error: could not start ${node}: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
