/**
 * The {@link ToolCaller} of the deployed `/mcp` function: each tool call
 * invokes its operation's own function (synchronously, `RequestResponse`)
 * with the event API Gateway would have sent it for the same caller
 * (mcp/operation-event.ts), so authentication, scopes, the rate limit,
 * validation, idempotency and the use case run in that function exactly as
 * for an HTTP request. The MCP function holds no permission on the table,
 * the bucket or the workflow: only `lambda:InvokeFunction` on its tools'
 * functions (infra/stack.ts), whose names it reads from
 * {@link TOOL_FUNCTIONS_VARIABLE}. The local stack runs the handlers in its
 * own process instead (mcp/in-process.ts).
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { operationEvent } from './operation-event';
import { answerOf, type ToolCaller } from './results';

/**
 * The environment variable naming each tool's function: JSON `{ "<tool>": "<function name>" }` (the paths are in
 * mcp/tools.json; Lambda's environment holds 4 KB in all).
 */
export const TOOL_FUNCTIONS_VARIABLE = 'MCP_TOOL_FUNCTIONS';

/** The function of each tool, by tool name. */
export type ToolFunctions = Record<string, string>;

let client: LambdaClient | undefined;
let functions: ToolFunctions | undefined;

/**
 * The caller of one `/mcp` request, from its event and the path of each tool's operation (mcp/tools.json).
 * @throws Error when the variable names no function for a tool, or the function failed (its error, unhandled: a
 *   programming or platform error the MCP answer reports as an internal error).
 */
export function lambdaCaller(source: APIGatewayProxyEventV2, paths: Record<string, string>): ToolCaller {
  functions ??= JSON.parse(process.env[TOOL_FUNCTIONS_VARIABLE] ?? '{}') as ToolFunctions;
  // `LAMBDA_ENDPOINT`: a local Invoke endpoint instead of AWS's (infra/local/lambda-invoke.ts; test/mcp-lambda.test.ts).
  client ??= new LambdaClient({ endpoint: process.env.LAMBDA_ENDPOINT || undefined });
  return async (tool, body, call) => {
    const target = functions![tool];
    const path = paths[tool];
    if (!target || !path) throw new Error(`${TOOL_FUNCTIONS_VARIABLE} or mcp/tools.json names no function or path for the tool ${tool}`);
    const answer = await client!.send(
      new InvokeCommand({
        FunctionName: target,
        Payload: new TextEncoder().encode(JSON.stringify(operationEvent(source, path, body, call))),
      }),
    );
    const payload = answer.Payload ? new TextDecoder().decode(answer.Payload) : 'null';
    if (answer.FunctionError) throw new Error(`${tool}: ${target} failed (${answer.FunctionError}): ${payload.slice(0, 500)}`);
    return answerOf(JSON.parse(payload) as APIGatewayProxyStructuredResultV2);
  };
}
