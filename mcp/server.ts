/**
 * The MCP server (docs/agents.md): one tool per customer operation
 * (lib/contract/mcp.ts, listed in mcp/tools.json), each call run by the
 * operation's own handler (its authentication, scopes, rate limit,
 * validation, idempotency and use case) through a {@link ToolCaller}. There is
 * no second implementation of any operation here: this module maps a tool
 * call to an operation call and its answer to a tool result.
 *
 * With the MCP Tasks extension, `enrich_campaign` runs as a task
 * (mcp/tasks.ts): its state is the campaign's own, read through the
 * operations, so a stateless server answers `tasks/get` from any process.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { ACCEPTED_CHARGE_META, TOOL_NAMES } from '../client/mcp-protocol';
import { campaignTaskStore, enrichAsTask } from './tasks';
import { errorResult, launchResult, toolResult, type OperationCall, type ToolCaller } from './results';

export { ACCEPTED_CHARGE_META, CHARGE_CHANGED_CODE } from '../client/mcp-protocol';
export * from './results';

/** Metadata of the MCP server: `initialize`'s `serverInfo` and the tools as `tools/list` answers them. */
export interface McpServerInfo {
  serverInfo: { name: string; title: string; version: string };
  tools: readonly Tool[];
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions extends McpServerInfo {
  /** Runs a tool's operation through its handler. */
  call: ToolCaller;
  /** The `Authorization` header of the MCP request. */
  authorization?: string;
}

/**
 * The accepted charge of a `tools/call` of `enrich_campaign` (`_meta` {@link ACCEPTED_CHARGE_META}), `undefined`
 * when none, or the `invalid_request` result when it is not a whole number of credits.
 */
function acceptedCharge(meta: Record<string, unknown> | undefined): number | undefined | CallToolResult {
  const accepted = meta?.[ACCEPTED_CHARGE_META];
  if (accepted === undefined) return undefined;
  if (typeof accepted === 'number' && Number.isSafeInteger(accepted) && accepted >= 0) return accepted;
  return errorResult({
    code: 'invalid_request',
    message: `_meta["${ACCEPTED_CHARGE_META}"] must be a whole number of credits (the quote's credits.required the user accepted).`,
    details: { issues: [`_meta.${ACCEPTED_CHARGE_META}: expected a non-negative integer`] },
  });
}

/**
 * The servers' JSON Schema validator, which the SDK uses only to check a client's answer to an elicitation: this
 * server elicits nothing (stateless HTTP never saw the client's `initialize`, so it cannot know the client can
 * answer; docs/agents.md), so it validates nothing, and the function's bundle carries no Ajv (lib/lambda/no-ajv.ts).
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'This server elicits nothing, so it validates no answer.' }),
};

/**
 * Builds an MCP server (tools and tasks capabilities) for one connection or,
 * over stateless Streamable HTTP, one request.
 *
 * `tools/call` of a tool not listed answers the JSON-RPC error -32602
 * (invalid params); every other outcome is a tool
 * result: the operation's `data` in `structuredContent`, or `isError` with
 * the API error (an argument the schema refuses is the operation's 400
 * `invalid_request`, naming the field). A `tools/call` of `enrich_campaign`
 * with `task` answers a task (mcp/tasks.ts).
 */
export function createMcpServer(options: McpServerOptions): Server {
  const listed = new Set(options.tools.map((tool) => tool.name));
  const base: OperationCall = options.authorization ? { authorization: options.authorization } : {};
  const server = new Server(
    { ...options.serverInfo },
    {
      capabilities: { tools: { listChanged: false }, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: campaignTaskStore(options.call, base),
      jsonSchemaValidator: NO_ELICITATION,
      instructions:
        'Campaign Enrichment API: create a campaign from account IDs (create_campaign), see what a launch would cost (quote_campaign), launch the paid enrichment (enrich_campaign: confirm the charge with the user first; with tasks it runs as a task reporting progress), follow it (get_campaign), read per-account outcomes (list_campaign_accounts) and export contacts (export_campaign). A test key (cek_test_…) spends test credits only.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...options.tools] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, task } = request.params;
    if (!listed.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}; tools/list names every tool.`);
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    if (name !== TOOL_NAMES.enrich) return toolResult(await options.call(name, args, base));
    const accepted = acceptedCharge(request.params._meta);
    if (typeof accepted === 'object') return accepted;
    const call: OperationCall = { ...base, ...(accepted !== undefined ? { expectedCharge: accepted } : {}) };
    if (task) return enrichAsTask(options.call, args, call);
    return launchResult(await options.call(name, args, call), call);
  });
  return server;
}
