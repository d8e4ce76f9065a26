/**
 * The one builder of API Gateway HTTP API (payload 2.0) events outside AWS:
 * the local server turns each HTTP request into one, and the bench builds
 * them to invoke a handler directly. Text bodies (JSON, urlencoded, text/*)
 * travel as UTF-8 text, anything else base64-encoded, as API Gateway does.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

const TEXT_TYPES = /^(application\/([a-z0-9.+-]+\+)?json|application\/x-www-form-urlencoded|text\/)/i;

/** What a request is made of. Header names are lower-cased by the builder. */
export interface RawRequest {
  method: string;
  /** Path and optional query, e.g. `/v1/campaigns/get?x=1`. */
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** The request's ID (API Gateway's `requestContext.requestId`). */
  requestId: string;
  sourceIp?: string;
  protocol?: string;
  /** The matched route, e.g. `POST /v1/campaigns/get`. @default `${method} ${path}` */
  routeKey?: string;
  /** Receive time. @default now */
  at?: Date;
}

/** Builds the payload 2.0 event API Gateway would send for the request. */
export function apiGatewayEvent(request: RawRequest): APIGatewayProxyEventV2 {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
  const url = new URL(request.url, 'http://localhost');
  const at = request.at ?? new Date();
  const body = request.body ?? Buffer.alloc(0);
  const isText = TEXT_TYPES.test(headers['content-type'] ?? '');
  const routeKey = request.routeKey ?? `${request.method} ${url.pathname}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: request.method,
        path: url.pathname,
        protocol: request.protocol ?? 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: request.requestId,
      routeKey,
      stage: '$default',
      time: at.toUTCString(),
      timeEpoch: at.getTime(),
    },
    ...(body.length > 0 ? { body: isText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !isText,
  };
}
