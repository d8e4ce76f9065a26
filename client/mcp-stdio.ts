#!/usr/bin/env node
/// <reference types="node" />
/** `npx campaign-enrichment-mcp`: the MCP server over stdio (client/mcp.ts; docs/agents.md). */
import { runStdioBridge } from './mcp.js';

runStdioBridge().catch((error: unknown) => {
  process.stderr.write(`campaign-enrichment-mcp: ${(error as Error).message}\n`);
  process.exit(1);
});
