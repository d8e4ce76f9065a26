/**
 * An API operation's contract: path, request schema, response schema and the
 * error codes it may answer. Handlers, the local server, the CDK routes and the
 * OpenAPI document are all built from these definitions.
 */
import type * as z from 'zod/mini';
import type { ErrorCode } from '../errors';

/** One operation of the API (spec "Endpoints"). */
export interface Operation<S extends z.core.$ZodObject = z.core.$ZodObject> {
  /** OpenAPI operationId, e.g. `describeOrganization`. */
  operationId: string;
  /** Path under the base URL, e.g. `/v1/org/describe`. Every operation is a POST. */
  path: string;
  summary: string;
  description: string;
  /** Strict request schema of the JSON body (classic or mini zod); form bodies use a coercing variant of it. */
  request: S;
  /** Schema of `data` on success. */
  response: z.core.$ZodType;
  /** Error codes the operation may answer (besides `invalid_api_key` and `internal_error`). */
  errors: ErrorCode[];
  /** Example request body for the docs (JSON; the form examples are derived from it). */
  example?: Record<string, unknown>;
  /** Example of `data` on success, for the docs (validated against {@link response} by `redocly lint`). */
  responseExample?: unknown;
  /**
   * Multipart file parts the operation takes instead of a field (decisions
   * §1: `accountIdsFile` for `accountIds`), for the docs; `fromForm` reads them.
   */
  fileParts?: Record<string, { replaces: string; contentTypes: string[]; description: string }>;
  /**
   * Whether the operation honours `Idempotency-Key` (decisions §10): true for
   * operations that change state (create, update, enrich, webhook endpoints);
   * read-only operations leave it unset and ignore the header.
   */
  idempotent?: boolean;
  /** Maps a form body before validation (e.g. a multipart file part into a field). */
  fromForm?: (body: Record<string, unknown>) => Record<string, unknown>;
}

/** Declares an operation (identity function that keeps the schema's type). */
export const defineOperation = <S extends z.core.$ZodObject>(operation: Operation<S>): Operation<S> => operation;
