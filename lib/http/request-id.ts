/**
 * Request tracing (docs/idempotency.md#request-ids): every response carries `X-Request-Id`,
 * and every log line of the request carries the same ID as `requestId`.
 *
 * Each request ends with one log line, `Request completed` (method, path,
 * status, error code, duration), so a request ID quoted in a support ticket
 * finds the organization and the outcome.
 *
 * The ID is API Gateway's request ID (`requestContext.requestId`), which also
 * names the request in the API's access log; the local server builds a fresh
 * one per request in the same place. Outside API Gateway (a direct invoke)
 * the Lambda request ID stands in.
 *
 * Why a middy plugin rather than a middleware: middy skips every `after`
 * middleware when a `before` middleware answers early (an idempotent replay
 * does), and runs `onError` middlewares in an order where a later one may
 * short-circuit. The plugin's `requestStart` and `requestEnd` hooks run for
 * every request whatever the middlewares do, so no response leaves without
 * the header.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { logger } from '../observability';
import { testModeHeaders } from './auth';

/** Response header carrying the request ID. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** The request ID of an API Gateway (payload 2.0) event, or the Lambda request ID when there is none. */
export function requestIdOf(event: Partial<APIGatewayProxyEventV2> | undefined, context: Partial<Context> | undefined): string {
  return event?.requestContext?.requestId || context?.awsRequestId || 'unknown';
}

interface TracedRequest {
  event: APIGatewayProxyEventV2;
  context: Context & { requestId?: string };
  response?: APIGatewayProxyStructuredResultV2 | null;
  internal: Record<string | symbol, unknown>;
}

const STARTED_AT = Symbol('requestStartedAt');

/** The `error.code` of an envelope body, if it is one. */
function errorCodeOf(body: string | undefined): string | undefined {
  try {
    const code = (JSON.parse(body ?? '') as { error?: { code?: unknown } } | null)?.error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The middy plugin of every HTTP handler: at request start it puts the
 * request ID in `context.requestId` and in the logger's keys (dropping any
 * key a previous request of this container left, so use Powertools'
 * `injectLambdaContext` without `resetKeys`: the keys must outlive the
 * middlewares for the closing line); at request end it stamps
 * `X-Request-Id` (and `Test-Mode: true` on an answer to a test key,
 * docs/test-mode.md: lib/http/auth.ts `testModeHeaders`) on the response and
 * logs `Request completed`.
 *
 * @example
 * const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(requestTracing()).use(…).handler(…);
 */
export function requestTracing(): middy.PluginObject {
  return {
    requestStart: (untyped: middy.Request) => {
      const request = untyped as unknown as TracedRequest;
      const requestId = requestIdOf(request.event, request.context);
      if (request.context) request.context.requestId = requestId;
      request.internal[STARTED_AT] = Date.now();
      logger.resetKeys();
      logger.appendKeys({ requestId });
    },
    requestEnd: (untyped: middy.Request) => {
      const request = untyped as unknown as TracedRequest;
      const response = request.response;
      if (!response || typeof response !== 'object') return;
      response.headers = {
        ...response.headers,
        [REQUEST_ID_HEADER]: request.context?.requestId ?? requestIdOf(request.event, request.context),
        ...testModeHeaders(request.event?.headers?.authorization),
      };
      const statusCode = response.statusCode ?? 200;
      const startedAt = request.internal[STARTED_AT];
      logger.info('Request completed', {
        method: request.event?.requestContext?.http?.method,
        path: request.event?.rawPath,
        statusCode,
        ...(statusCode >= 400 ? { errorCode: errorCodeOf(response.body) } : {}),
        ...(typeof startedAt === 'number' ? { durationMs: Date.now() - startedAt } : {}),
      });
    },
  };
}
