/**
 * `/mcp` of the local stack (infra/local/server.ts; docs/agents.md): the
 * deployed function's server and tools (mcp/handler.ts), each tool call run
 * by its operation's handler in this process (mcp/in-process.ts).
 */
import { createMcpHandler } from './http';
import { inProcessCaller } from './in-process';
import { MCP_TOOLS } from './tools';

export const handler = createMcpHandler(MCP_TOOLS, inProcessCaller);
