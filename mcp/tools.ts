/**
 * The MCP server's identity and tools as `initialize` and `tools/list`
 * answer them: mcp/tools.json, which `npm run openapi:write` generates from
 * the route list and the OpenAPI document (lib/contract/mcp.ts
 * `buildMcpTools`) and `npm run openapi:check` compares with the code, so the
 * MCP function's bundle carries neither the document nor its builder.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import generated from './tools.json' with { type: 'json' };
import type { McpServerInfo } from './server';

/** The generated file's content: the server's identity, its tools, and the path of each tool's operation. */
export const MCP_TOOLS = generated as unknown as McpServerInfo & { tools: Tool[]; paths: Record<string, string> };
