/**
 * The response envelope of every operation (README.md):
 * `{ data, error }` with exactly one of the two non-null.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ErrorBody } from '../errors';

/** A success or failure envelope. */
export type Envelope<T> = { data: T; error: null } | { data: null; error: ErrorBody };

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A 200 response carrying `data`. */
export function success<T>(data: T): APIGatewayProxyStructuredResultV2 {
  return { statusCode: 200, headers: JSON_HEADERS, body: JSON.stringify({ data, error: null } satisfies Envelope<T>) };
}

/** A failure response with the error's HTTP status. */
export function failure(statusCode: number, error: ErrorBody): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: JSON_HEADERS, body: JSON.stringify({ data: null, error } satisfies Envelope<never>) };
}
