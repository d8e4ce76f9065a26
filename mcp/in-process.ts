/**
 * The {@link ToolCaller} of the local stack's `/mcp` (infra/local/server.ts):
 * each tool call invokes its operation's own Lambda handler (the route's
 * entry of infra/routes.ts) in this process, with the event the deployed
 * MCP function sends that operation's function (mcp/operation-event.ts).
 * Authentication, scopes, the rate limit, validation, idempotency and the
 * use case all run as for an HTTP request: they apply to a tool call by
 * construction. The deployed function invokes the functions instead
 * (mcp/lambda-caller.ts).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { MCP_ROUTES } from '../infra/routes';
import { toolName } from '../lib/root';
import { operationEvent } from './operation-event';
import { answerOf, type ToolCaller } from './results';

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** The route of each tool, by tool name. */
const ROUTES = new Map(MCP_ROUTES.map((route) => [toolName(route.operation.operationId), route]));

/** Each tool's handler, loaded on its first call (its module, as Lambda loads a function's once per environment). */
const HANDLERS = new Map<string, Promise<LambdaHandler>>();

function handlerOf(entry: string): Promise<LambdaHandler> {
  let handler = HANDLERS.get(entry);
  if (!handler) {
    handler = import(pathToFileURL(path.resolve(import.meta.dirname, '..', entry)).href).then(
      (module: { handler: LambdaHandler }) => module.handler,
    );
    HANDLERS.set(entry, handler);
  }
  return handler;
}

/**
 * The caller of one `/mcp` request.
 * @param source - the `/mcp` request's event; @param context - its Lambda context (its deadline is the operation's).
 * @throws Error when a tool has no route (a programming error).
 */
export function inProcessCaller(source: APIGatewayProxyEventV2, context: Context): ToolCaller {
  return async (tool, body, call) => {
    const route = ROUTES.get(tool);
    if (!route) throw new Error(`${tool} has no route in infra/routes.ts`);
    const handler = await handlerOf(route.entry);
    return answerOf(await handler(operationEvent(source, route.operation.path, body, call), context));
  };
}
