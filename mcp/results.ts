/**
 * What a tool call is to an operation (docs/agents.md): the call handed to
 * the operation's handler, its answer, and the tool result made of it.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ACCEPTED_CHARGE_META, CHARGE_CHANGED_CODE } from '../client/mcp-protocol';

/** An operation's answer as its handler gave it: status, parsed envelope, headers (lower-case names). */
export interface OperationAnswer {
  statusCode: number;
  body: { data: unknown; error: null } | { data: null; error: ApiError };
  headers: Record<string, string>;
}

/** The API's error object. */
export interface ApiError {
  code: string;
  message: string;
  details?: unknown;
}

/** What a tool call hands its operation. */
export interface OperationCall {
  /** The `Authorization` header of the MCP request (the API key as bearer), passed on unchanged; none: the operation answers 401. */
  authorization?: string;
  /**
   * For `enrich_campaign` only: the credits the user accepted (`_meta` {@link ACCEPTED_CHARGE_META}).
   * The launch refuses when its evaluation would charge another amount, and the tool answers `charge_changed`.
   */
  expectedCharge?: number;
}

/**
 * Runs the operation of one tool (by its name in `tools/list`) through the operation's handler and returns its answer.
 * @throws Error when the tool has no operation (a programming error: mcp/tools.json and the route list disagree).
 */
export type ToolCaller = (tool: string, body: Record<string, unknown>, call: OperationCall) => Promise<OperationAnswer>;

/** A tool's error result: the API error `{code, message, details}`, with `retryAfterSeconds` on `rate_limited`. */
export function errorResult(error: ApiError, headers: Record<string, string> = {}): CallToolResult {
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

/** A bound launch's answer as a tool result: `charge_changed` when the evaluation changed since the quote. */
export function launchResult(answer: OperationAnswer, call: OperationCall): CallToolResult {
  const changed =
    call.expectedCharge !== undefined
      ? (answer.body.data as { chargeChanged?: { accepted: number; charge: number } } | null)?.chargeChanged
      : undefined;
  if (!changed) return toolResult(answer);
  return errorResult({
    code: CHARGE_CHANGED_CODE,
    message: `The launch would now charge ${changed.charge} credits, not the ${changed.accepted} accepted: nothing was charged. Quote again and ask the user to confirm the new charge.`,
    details: changed,
  });
}

/** An operation handler's result (in this process or from its function) as an {@link OperationAnswer}. */
export function answerOf(result: APIGatewayProxyStructuredResultV2): OperationAnswer {
  const text = result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64').toString('utf8') : (result.body ?? '');
  const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
  return { statusCode: result.statusCode ?? 200, body: JSON.parse(text) as OperationAnswer['body'], headers };
}
