/**
 * `/mcp` over Streamable HTTP, stateless (docs/agents.md): a new server and
 * transport per request, JSON answers, no session. The deployed function
 * (mcp/handler.ts) and the local stack (mcp/local.ts) differ only in how a
 * tool call reaches its operation (the {@link ToolCaller}).
 *
 * DNS-rebinding protection: a browser page that rebinds its own name to this
 * server sends its own Host and Origin. Locally only loopback host names
 * are served; anywhere, a request with an `Origin` is served only when that
 * origin is the API's own. Either refusal is 403 with a JSON-RPC error.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createMcpServer, type McpServerInfo } from './server';
import type { ToolCaller } from './results';

/** Host names a local request may be addressed to. */
const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

/** Why a request is refused as a possible DNS-rebinding attack, or `undefined`. */
export function rebindingRefusal(event: APIGatewayProxyEventV2): string | undefined {
  const host = event.headers?.host ?? '';
  const local = event.requestContext?.apiId === 'local';
  if (local && !LOOPBACK_HOST.test(host))
    return `Invalid Host header: ${host} (the local stack serves /mcp to 127.0.0.1, localhost and [::1] only)`;
  const origin = event.headers?.origin;
  if (origin !== undefined) {
    const own = local ? [`http://${host}`] : [`https://${event.requestContext?.domainName ?? host}`];
    if (!own.includes(origin)) return `Invalid Origin header: ${origin} (only the API's own origin may call /mcp from a browser)`;
  }
  return undefined;
}

const jsonRpcError = (statusCode: number, message: string): APIGatewayProxyStructuredResultV2 => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }),
});

/** A Lambda handler of `/mcp` (API Gateway HTTP API, payload 2.0). */
export type McpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * The `/mcp` handler serving `info`, whose tool calls go through `callerOf(event, context)`.
 */
export function createMcpHandler(
  info: McpServerInfo,
  callerOf: (event: APIGatewayProxyEventV2, context: Context) => ToolCaller,
): McpHandler {
  return async (event, context) => {
    const refusal = rebindingRefusal(event);
    if (refusal) return jsonRpcError(403, refusal);
    const method = event.requestContext?.http?.method ?? 'POST';
    const host = event.headers?.host ?? event.requestContext?.domainName ?? 'localhost';
    const body = event.body === undefined ? undefined : event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
    const request = new Request(`https://${host}${event.rawPath ?? '/mcp'}`, {
      method,
      headers: Object.entries(event.headers ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body } : {}),
    });
    const server = createMcpServer({
      ...info,
      call: callerOf(event, context),
      ...(event.headers?.authorization ? { authorization: event.headers.authorization } : {}),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(request);
      const text = await response.text();
      return { statusCode: response.status, headers: Object.fromEntries(response.headers.entries()), body: text };
    } finally {
      await server.close();
    }
  };
}
