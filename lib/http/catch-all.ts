/**
 * The catch-all route (docs/errors.md): whatever no route serves is answered
 * in the envelope, in AWS (the HTTP API's `$default` route) as locally (the
 * local server calls this same handler).
 *
 * - a known operation path with another method than POST: 405
 *   `method_not_allowed`, `details.allow` and the `Allow: POST` header;
 * - anything else: 404 `not_found` with `details.resource = "route"`, the
 *   message naming the operation path nearest to the one asked for.
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
      const error =
        known.has(path) && method !== 'POST'
          ? new MethodNotAllowedError(method, path)
          : new NotFoundError('route', `${method} ${path}`, routeHint(path, operationPaths));
      const response = failure(error.statusCode, error.toJSON());
      response.headers = { ...response.headers, ...error.headers };
      // HEAD answers carry no body.
      if (method === 'HEAD') response.body = '';
      return response;
    }) as unknown as CatchAllHandler;
}

/** The sentence of a 404 route answer: the nearest operation path, if one is near, and where every operation is listed. */
function routeHint(path: string, operationPaths: readonly string[]): string {
  const nearest = nearestPath(path, operationPaths);
  return `${nearest ? `Did you mean POST ${nearest}? ` : ''}Every operation is a POST listed in /openapi.json.`;
}

/**
 * The operation path nearest to `path`: fewest single-character edits
 * (Levenshtein distance), case and a trailing slash ignored; on a tie, the
 * first in `operationPaths`. None when even the nearest needs more edits than
 * a third of its length (`/` or `/docs` resemble no operation).
 */
export function nearestPath(path: string, operationPaths: readonly string[]): string | undefined {
  const asked = path.toLowerCase().replace(/(.)\/+$/, '$1');
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of operationPaths) {
    const distance = editDistance(asked, candidate.toLowerCase());
    if (distance < bestDistance && distance <= candidate.length / 3) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance of two strings (insertions, deletions, substitutions; each counts 1). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
