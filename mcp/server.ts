/**
 * The MCP server (docs/agents.md): one tool per customer operation
 * (lib/contract/mcp.ts), each call run by the operation's own handler (its
 * authentication, scopes, rate limit, validation, idempotency and use case)
 * through an {@link OperationCaller}. There is no second implementation of
 * any operation here: this module maps a tool call to an operation call and
 * its answer to a tool result.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { MCP_SERVER_INFO, type McpTool, type McpToolBinding, type Operation } from '../lib/root';
import { ACCEPTED_CHARGE_META, CHARGE_CHANGED_CODE } from '../client/mcp-protocol';

export { ACCEPTED_CHARGE_META, CHARGE_CHANGED_CODE } from '../client/mcp-protocol';

/** An operation's answer as its handler gave it: status, parsed envelope, headers (lower-case names). */
export interface OperationAnswer {
  statusCode: number;
  body: { data: unknown; error: null } | { data: null; error: { code: string; message: string; details?: unknown } };
  headers: Record<string, string>;
}

/** What a tool call hands its operation. */
export interface OperationCall {
  /** The `Authorization` header of the MCP request (the API key as bearer), passed on unchanged; none: the operation answers 401. */
  authorization?: string;
  /**
   * For `enrichCampaign` only: the credits the user accepted (`_meta` {@link ACCEPTED_CHARGE_META}).
   * The launch refuses when its evaluation would charge another amount, and the tool answers `charge_changed`.
   */
  expectedCharge?: number;
}

/** Runs one operation through its handler and returns its answer. */
export type OperationCaller = (operation: Operation, body: Record<string, unknown>, call: OperationCall) => Promise<OperationAnswer>;

/** A tool's error result: the API error `{code, message, details}`, with `retryAfterSeconds` on `rate_limited`. */
function errorResult(error: { code: string; message: string; details?: unknown }, headers: Record<string, string> = {}): CallToolResult {
  const retryAfter = headers['retry-after'];
  const structured = {
    code: error.code,
    message: error.message,
    details: error.details ?? null,
    ...(error.code === 'rate_limited' && retryAfter !== undefined ? { retryAfterSeconds: Number(retryAfter) } : {}),
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool's result from an operation's answer. */
export function toolResult(answer: OperationAnswer): CallToolResult {
  if (answer.body.error) return errorResult(answer.body.error, answer.headers);
  const data = answer.body.data as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The tools and the operation each calls (lib/contract/mcp.ts `buildMcpTools`). */
  tools: readonly McpToolBinding[];
  /** Runs an operation through its handler. */
  call: OperationCaller;
  /** The `Authorization` header of the MCP request. */
  authorization?: string;
}

/**
 * Builds an MCP server (tools capability) for one connection or, over
 * stateless Streamable HTTP, one request.
 *
 * `tools/call` of a tool not listed answers the JSON-RPC error -32602
 * (invalid params); every other outcome is a tool
 * result: the operation's `data` in `structuredContent`, or `isError` with
 * the API error (an argument the schema refuses is the operation's 400
 * `invalid_request`, naming the field).
 */
export function createMcpServer(options: McpServerOptions): Server {
  const byName = new Map(options.tools.map((binding) => [binding.tool.name, binding]));
  const tools: McpTool[] = options.tools.map((binding) => binding.tool);
  const server = new Server(
    { ...MCP_SERVER_INFO },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Campaign Enrichment API: create a campaign from account IDs (create_campaign), see what a launch would cost (quote_campaign), launch the paid enrichment (enrich_campaign: confirm the charge with the user first), follow it (get_campaign), read per-account outcomes (list_campaign_accounts) and export contacts (export_campaign). A test key (cek_test_…) spends test credits only.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const binding = byName.get(request.params.name);
    if (!binding) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}; tools/list names every tool.`);
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const accepted = request.params._meta?.[ACCEPTED_CHARGE_META];
    const call: OperationCall = { ...(options.authorization ? { authorization: options.authorization } : {}) };
    if (binding.operation.operationId === 'enrichCampaign' && accepted !== undefined) {
      if (typeof accepted !== 'number' || !Number.isSafeInteger(accepted) || accepted < 0) {
        return errorResult({
          code: 'invalid_request',
          message: `_meta["${ACCEPTED_CHARGE_META}"] must be a whole number of credits (the quote's credits.required the user accepted).`,
          details: { issues: [`_meta.${ACCEPTED_CHARGE_META}: expected a non-negative integer`] },
        });
      }
      call.expectedCharge = accepted;
    }
    const answer = await options.call(binding.operation, args, call);
    const changed =
      call.expectedCharge !== undefined
        ? (answer.body.data as { chargeChanged?: { accepted: number; charge: number } } | null)?.chargeChanged
        : undefined;
    if (changed) {
      return errorResult({
        code: CHARGE_CHANGED_CODE,
        message: `The launch would now charge ${changed.charge} credits, not the ${changed.accepted} accepted: nothing was charged. Quote again and ask the user to confirm the new charge.`,
        details: changed,
      });
    }
    return toolResult(answer);
  });
  return server;
}
