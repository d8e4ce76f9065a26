/**
 * The API Gateway event (HTTP API, payload 2.0) of one tool call's
 * operation, made from the `/mcp` request's own event: the same caller
 * (address, host, API), the MCP request's bearer credential, the tool's
 * arguments as the JSON body, and, for a bound launch, the accepted charge
 * (lib/http/accepted-charge.ts). The operation's handler cannot tell it from
 * an HTTP request of the same caller, which is the point (docs/agents.md).
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ACCEPTED_CHARGE_FIELD, ORIGIN_VERIFY_HEADER } from '../lib/root';
import type { OperationCall } from './results';

/** The event of `POST path` with `body` for `call`, from the `/mcp` request's event `source`. */
export function operationEvent(
  source: APIGatewayProxyEventV2,
  path: string,
  body: Record<string, unknown>,
  call: OperationCall,
): APIGatewayProxyEventV2 {
  const routeKey = `POST ${path}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // The caller's address as the operation records it (lib/http/source-address.ts): the edge's header and its proof,
  // which the operation's function checks against its own secret.
  for (const name of ['host', 'user-agent', 'x-forwarded-for', 'cloudfront-viewer-address', ORIGIN_VERIFY_HEADER])
    if (source.headers?.[name] !== undefined) headers[name] = source.headers[name]!;
  if (call.authorization) headers.authorization = call.authorization;
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers,
    requestContext: {
      ...source.requestContext,
      http: { ...source.requestContext.http, method: 'POST', path },
      requestId: randomUUID(),
      routeKey,
    },
    body: JSON.stringify(body),
    isBase64Encoded: false,
    ...(call.expectedCharge !== undefined ? { [ACCEPTED_CHARGE_FIELD]: call.expectedCharge } : {}),
  };
}
