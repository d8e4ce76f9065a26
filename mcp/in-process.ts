/**
 * The {@link OperationCaller} of the `/mcp` function: each tool call invokes
 * its operation's own Lambda handler (functions/, found through the route
 * list) in this process, with an API Gateway event carrying the MCP
 * request's bearer credential. Authentication, scopes, the rate limit,
 * validation, idempotency and the use case all run as for an HTTP request:
 * they apply to a tool call by construction.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { MCP_ROUTES } from '../infra/routes';
import { apiGatewayEvent } from '../infra/local/event';
import type { OperationAnswer, OperationCaller } from './server';

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

type HandlerModule = { handler: LambdaHandler; enrichHandler?: (expectedCharge?: number) => LambdaHandler };

/**
 * The handler modules of the tools' routes, by their entry (infra/routes.ts `MCP_ROUTES`), loaded on first
 * use: static imports, so the function's bundle holds these handlers and no other
 * (test/mcp-unit.test.ts fails when a tool's route has none).
 */
export const TOOL_FUNCTIONS: Record<string, () => Promise<HandlerModule>> = {
  'functions/org-describe.ts': () => import('../functions/org-describe'),
  'functions/org-limits.ts': () => import('../functions/org-limits'),
  'functions/campaigns-create.ts': () => import('../functions/campaigns-create'),
  'functions/campaigns-update.ts': () => import('../functions/campaigns-update'),
  'functions/campaigns-quote.ts': () => import('../functions/campaigns-quote'),
  'functions/campaigns-enrich.ts': () => import('../functions/campaigns-enrich'),
  'functions/campaigns-cancel.ts': () => import('../functions/campaigns-cancel'),
  'functions/campaigns-get.ts': () => import('../functions/campaigns-get'),
  'functions/campaigns-list.ts': () => import('../functions/campaigns-list'),
  'functions/campaigns-accounts.ts': () => import('../functions/campaigns-accounts'),
  'functions/campaigns-export.ts': () => import('../functions/campaigns-export'),
  'functions/org-ledger.ts': () => import('../functions/org-ledger'),
  'functions/campaigns-results.ts': () => import('../functions/campaigns-results'),
  'functions/keys-create.ts': () => import('../functions/keys-create'),
  'functions/keys-list.ts': () => import('../functions/keys-list'),
  'functions/keys-rotate.ts': () => import('../functions/keys-rotate'),
  'functions/keys-revoke.ts': () => import('../functions/keys-revoke'),
};

/** An operation handler's result as an {@link OperationAnswer}. */
export function answerOf(result: APIGatewayProxyStructuredResultV2): OperationAnswer {
  const text = result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64').toString('utf8') : (result.body ?? '');
  const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
  return { statusCode: result.statusCode ?? 200, body: JSON.parse(text) as OperationAnswer['body'], headers };
}

/**
 * The caller of one MCP request.
 * @param request.context - the Lambda context of the `/mcp` invocation (its deadline is the operation's).
 * @param request.sourceIp - the MCP client's address, passed on as the operation request's.
 * @throws Error when an operation has no route or no handler (a programming error).
 */
export function inProcessCaller(request: { context: Context; sourceIp?: string; host?: string }): OperationCaller {
  return async (operation, body, call) => {
    const route = MCP_ROUTES.find((candidate) => candidate.operation.operationId === operation.operationId);
    const load = route && TOOL_FUNCTIONS[route.entry];
    if (!load) throw new Error(`${operation.operationId} has no route in infra/routes.ts or no handler in TOOL_FUNCTIONS`);
    const module = await load();
    const handler = call.expectedCharge !== undefined && module.enrichHandler ? module.enrichHandler(call.expectedCharge) : module.handler;
    const event = apiGatewayEvent({
      method: 'POST',
      url: operation.path,
      headers: {
        'content-type': 'application/json',
        ...(call.authorization ? { authorization: call.authorization } : {}),
        ...(request.host ? { host: request.host } : {}),
      },
      body: Buffer.from(JSON.stringify(body)),
      requestId: randomUUID(),
      ...(request.sourceIp ? { sourceIp: request.sourceIp } : {}),
    });
    return answerOf(await handler(event, request.context));
  };
}
