#!/usr/bin/env node
/**
 * `npx campaign-enrichment-mcp` in this repository: the MCP server over
 * stdio (client/mcp.ts; docs/agents.md), run from source on the project's
 * pinned Node 24 with tsx's loader. The published client package has the
 * same command, built (`@campaign-enrichment/client`'s `bin`).
 *
 * stdin and stdout are the MCP channel, passed through to one child
 * process; its exit code (or signal) becomes this process's.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pinnedNode = path.join(root, 'node_modules', 'node', 'bin', 'node');
const node = existsSync(pinnedNode) ? pinnedNode : process.execPath;
const tsx = import.meta.resolve('tsx');
const server = path.join(root, 'client', 'mcp-stdio.ts');

const child = spawn(node, ['--import', tsx, server, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  process.stderr.write(`error: could not start ${node}: ${error.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
