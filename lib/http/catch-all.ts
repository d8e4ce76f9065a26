/**
 * The catch-all route (decisions §10): whatever no route serves is answered
 * in the envelope, in AWS (the HTTP API's `$default` route) as locally (the
 * local server calls this same handler).
 *
 * - a known operation path with another method than POST: 405
 *   `method_not_allowed`, `details.allow` and the `Allow: POST` header;
 * - anything else: 404 `not_found` with `details.resource = "route"`.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { MethodNotAllowedError, NotFoundError } from '../errors';
import { logger } from '../observability';
import { failure } from './envelope';
import { requestTracing } from './request-id';

/** The Lambda handler of the catch-all route. */
export type CatchAllHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * Builds the catch-all handler.
 * @param operationPaths - the path of every operation (each takes POST only).
 */
export function createCatchAllHandler(operationPaths: readonly string[]): CatchAllHandler {
  const known = new Set(operationPaths);
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(requestTracing())
    .use(injectLambdaContext(logger)) // keys: reset by requestTracing at the next request's start
    .handler(async (event) => {
      const method = event.requestContext?.http?.method ?? 'GET';
      const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
      const error = known.has(path) && method !== 'POST' ? new MethodNotAllowedError(method, path) : new NotFoundError('route', `${method} ${path}`);
      const response = failure(error.statusCode, error.toJSON());
      response.headers = { ...response.headers, ...error.headers };
      // HEAD answers carry no body.
      if (method === 'HEAD') response.body = '';
      return response;
    }) as unknown as CatchAllHandler;
}
