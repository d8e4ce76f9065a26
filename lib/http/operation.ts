/**
 * An API operation's contract: path and request schema (what handlers, the
 * local server and the CDK routes read), and its documentation: response
 * schema, examples and the error codes it may answer (what the OpenAPI
 * document reads).
 */
import type * as z from 'zod/mini';
import type { ErrorCode } from '../errors';
import type { Scope } from './scopes';

/**
 * One operation of the API as a handler needs it (docs/README.md): its
 * identity, path and request schema. What only the published document reads
 * (summary, response shape, examples, error codes) is its {@link OperationDocs},
 * kept in the domain's `docs.ts` so that no Lambda bundle carries it (issue #18:
 * esbuild cannot drop a zod schema a module builds, only a module nothing imports).
 */
export interface Operation<S extends z.core.$ZodObject = z.core.$ZodObject> {
  /** OpenAPI operationId, e.g. `describeOrganization`. */
  operationId: string;
  /** Path under the base URL, e.g. `/v1/org/describe`. Every operation is a POST. */
  path: string;
  /**
   * The scope a key needs for this operation (lib/http/scopes.ts; docs/authentication.md
   * "Scopes"). The pipeline checks it before any work; the OpenAPI document lists it as the
   * operation's security requirement. Every operation has one (`test/scopes.test.ts`).
   */
  scope: Scope;
  /** Strict request schema of the JSON body (classic or mini zod); form bodies use a coercing variant of it. */
  request: S;
  /**
   * Whether the operation honours `Idempotency-Key` (docs/idempotency.md): true for
   * operations that change state (create, update, enrich, webhook endpoints);
   * read-only operations leave it unset and ignore the header.
   */
  idempotent?: boolean;
  /**
   * Whether every call is kept in the organization's audit log (docs/audit.md): true for the
   * operations that change something (campaigns, uploads, exports, webhooks, keys, privacy),
   * whatever their answer. The one declaration of which operations are audited.
   */
  audited?: boolean;
  /**
   * Whether the body is JSON only: its fields include a list of objects, which the form encodings cannot carry.
   * A urlencoded or multipart body is refused (400 `invalid_request`), and the document lists JSON only.
   */
  jsonOnly?: boolean;
  /**
   * Whether a success is a stream of JSON objects rather than the `{data, error}` envelope
   * (docs/results.md "The stream"): JSON Lines or Server-Sent Events as the `Accept` header asks
   * (lib/http/stream.ts). Refusals before the first byte are the envelope as for every operation.
   * In AWS its function answers through a function URL with response streaming (infra/stack.ts),
   * not through the HTTP API.
   */
  streaming?: boolean;
  /** Maps a form body before validation (e.g. a multipart file part into a field). */
  fromForm?: (body: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * The published part of an operation (README.md): read by the OpenAPI
 * document (lib/contract/openapi.ts) only.
 */
export interface OperationDocs {
  summary: string;
  description: string;
  /** Schema of `data` on success. */
  response: z.core.$ZodType;
  /** The document's tag of the operation (issue #34), when not its domain's (lib/contract/openapi.ts `TAGS`). */
  tag?: string;
  /** Error codes the operation may answer (besides `invalid_api_key`, `method_not_allowed` and `internal_error`). */
  errors: ErrorCode[];
  /** Example request body for the docs (JSON; the form examples are derived from it). */
  example?: Record<string, unknown>;
  /** Example of `data` on success, for the docs (validated against {@link response} by `redocly lint`). */
  responseExample?: unknown;
  /**
   * Multipart file parts the operation takes instead of a field (
   * docs/campaigns.md: `accountIdsFile` for `accountIds`), for the docs; `fromForm` reads them.
   */
  fileParts?: Record<string, { replaces: string; contentTypes: string[]; description: string }>;
  /**
   * A streaming operation's object (its `streaming` success, lib/http/stream.ts): the schema of one JSON line,
   * and of an SSE event's `data:`. The document lists it under each stream media type.
   */
  streamItem?: z.core.$ZodType;
  /** Whether a success carries `Credits-Remaining` (the smb balance; docs/limits.md). */
  creditsRemaining?: boolean;
  /**
   * For an operation that creates a resource: the JSON Pointer, inside the success's `data`, to the new resource's
   * ID (`/id`, `/key/id`, `/suppressions/0/id`). The document links it (OpenAPI `links`) to every operation whose
   * request takes an ID of the same pattern (README.md, its "API reference" entry); the schema at the pointer must carry that
   * pattern.
   */
  creates?: string;
}

/** An operation with its documentation: what the OpenAPI document renders. */
export type DocumentedOperation<S extends z.core.$ZodObject = z.core.$ZodObject> = Operation<S> & OperationDocs;

/** Declares an operation (identity function that keeps the schema's type). */
export const defineOperation = <S extends z.core.$ZodObject>(operation: Operation<S>): Operation<S> => operation;

/** Documents an operation (lib/<domain>/docs.ts): the operation itself plus what the document shows of it. */
export const documentOperation = <S extends z.core.$ZodObject>(operation: Operation<S>, docs: OperationDocs): DocumentedOperation<S> => ({
  ...operation,
  ...docs,
});
