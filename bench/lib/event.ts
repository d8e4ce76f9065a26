/**
 * A synthesized API Gateway HTTP API (payload 2.0) event, as the local
 * server builds one (infra/local/server.ts), for invoking a handler directly.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The event of `POST <path>` with a Bearer key and a JSON body. */
export function apiGatewayEvent(path: string, apiKey: string, body: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `POST ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), host: '127.0.0.1' },
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: '127.0.0.1',
      domainPrefix: 'local',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: 'bench',
      routeKey: `POST ${path}`,
      stage: '$default',
      time: '22/Nov/2026:10:00:00 +0000',
      timeEpoch: 0,
    },
    body,
    isBase64Encoded: false,
  };
}
