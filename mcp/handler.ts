/**
 * Lambda of `/mcp` (docs/agents.md): the MCP server over Streamable HTTP,
 * stateless (mcp/http.ts), behind the HTTP API's `POST /mcp` route. Its
 * tools are mcp/tools.json (generated from the route list and the OpenAPI
 * document by `npm run openapi:write`, so the function carries neither), and
 * each tool call invokes its operation's function (mcp/lambda-caller.ts).
 */
import { createMcpHandler } from './http';
import { lambdaCaller } from './lambda-caller';
import { MCP_TOOLS } from './tools';

export const handler = createMcpHandler(MCP_TOOLS, (event) => lambdaCaller(event, MCP_TOOLS.paths));
