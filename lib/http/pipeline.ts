/**
 * The request pipeline every API Lambda runs (docs/README.md, docs/errors.md,
 * "Authentication"; docs/errors.md).
 *
 * Top to bottom: request tracing (X-Request-Id, a middy plugin) → request
 * logging context → error envelope (onError) → authentication and the
 * operation's scope (lib/http/scopes.ts) → body guard
 * (content type, size, JSON nesting depth) → the middy body parsers (JSON; urlencoded and
 * multipart unless the operation is `jsonOnly`) → form normalization (form nesting depth) →
 * schema validation → idempotency
 * (docs/idempotency.md; idempotent operations only) → use case (with the request's deadline signal) → `{ data, error }`.
 *
 * The request rate (docs/limits.md; lib/http/rate-limit.ts): once the key's
 * organization is known, the request is counted in the same wave as the
 * authentication read; a refusal is answered 429 `rate_limited` before the
 * body is read, or, for `in-read` operations whose read runs beside the
 * count, before anything is written or answered (the key check is gated on
 * the count). Every authenticated answer, refusals included, carries the
 * RateLimit fields.
 *
 * Authentication (lib/http/auth.ts) resolves the key's organization; whether
 * the key is still valid (revocation) is verified before the use case, or —
 * for an operation built with `keyCheck: 'in-read'` — by the use case's first
 * store read, in the same round trip as its data. Either way no answer, a
 * success or an error, leaves the pipeline on a key not verified during the
 * request: what the use case left open is verified before answering.
 */
import type { Readable, Writable } from 'node:stream';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import httpUrlencodeBodyParser from '@middy/http-urlencode-body-parser';
import httpMultipartBodyParser from '@middy/http-multipart-body-parser';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { safeParse } from 'zod/mini';
import { logger } from '../observability';
import { isTestOrganizationId } from '../ids';
import { ApiError, InsufficientScopeError, InternalError, InvalidApiKeyError, InvalidRequestError } from '../errors';
import { failure, success } from './envelope';
import { formatIssues, formatPath, useEnglishIssueMessages } from './issues';
import {
  ACCEPTED_CHARSETS,
  contentTypeCharset,
  formSchemaOf,
  multipartBoundary,
  multipartFramingFault,
  multipartToFields,
  nestFormFields,
} from './form';
import { authenticate, refusedKeyOf, type ApiKeyCache, type ApiKeyLookup, type KeyCheck } from './auth';
import { formNestingViolation, jsonNestingViolation, MAX_NESTING_DEPTH } from './depth';
import { API_FUNCTION_TIMEOUT_SECONDS, DeadlineExceededError, startDeadline, type RequestDeadline } from './deadline';
import type { Operation } from './operation';
import { grants, type Scope } from './scopes';
import { requestTracing } from './request-id';
import type { IdempotencyStage } from '../idempotency/stage';
import type { IdempotentWork } from '../idempotency/store';
import type { RequestAnswer, RequestAudit, RequestRecord, TransactItem } from './request-record';
import { sourceAddressOf } from './source-address';
import { IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from './idempotency-key';
import { admittedKeyCheck, rateLimitFields, refusalOf, type RequestAdmission, type RequestLimiter } from './rate-limit';

/** Largest JSON or urlencoded body accepted, in bytes: 5 MiB (docs/limits.md#sizes), well inside Lambda's 6 MB event. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
/**
 * Largest multipart body accepted, in bytes: 4 MiB (docs/limits.md#sizes). API Gateway
 * hands a multipart body to Lambda base64-encoded (4/3 larger), so 4 MiB
 * becomes about 5.3 MiB inside Lambda's 6 MB event.
 */
export const MAX_MULTIPART_BYTES = 4 * 1024 * 1024;

/** Fields an urlencoded body may carry (`node:querystring`'s default `maxKeys`, which the middy parser uses). */
export const MAX_URLENCODED_FIELDS = 1_000;

/** A request body as UTF-8 text (API Gateway hands binary bodies over base64-encoded). */
const bodyText = (body: string, isBase64Encoded: boolean | undefined) =>
  isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;

const countFormFields = (body: string, isBase64Encoded: boolean | undefined) =>
  bodyText(body, isBase64Encoded)
    .split('&')
    .filter((pair) => pair !== '').length;

/** What the pipeline knows about a request once it reaches the use case. */
export interface RequestContext {
  /** Organization the API key belongs to (docs/authentication.md). */
  organizationId: string;
  /**
   * The request's API-key check (lib/http/auth.ts). Verified already unless
   * the operation was built with `keyCheck: 'in-read'`; then the use case
   * hands it to its first store read, which verifies it in the same round
   * trip (on the organization's list of active keys, or the key item read
   * beside its data; a use case that does not is still safe: the pipeline
   * verifies it before answering, one more round trip).
   */
  keyCheck: KeyCheck;
  /** Whether the key is a test key, acting on its organization's test twin (docs/test-mode.md; lib/test-mode/mode.ts). */
  testMode: boolean;
  /** API Gateway request id, also in every log line. */
  requestId: string;
  /** The request's headers, names in lower case (what a use case negotiates on: `accept`, `last-event-id`; lib/http/stream.ts). */
  headers: Readonly<Record<string, string | undefined>>;
  /**
   * Aborts 3 s before the function's timeout (lib/http/deadline.ts): the use
   * case stops its work there. Built on first read (the deadline is the
   * function's, whenever it is read).
   */
  readonly signal: AbortSignal;
  /** Milliseconds left before the function's timeout: a point of no return starts only with room for it (lib/http/deadline.ts). */
  remainingMs(): number;
  /**
   * The work done under the request's `Idempotency-Key` (docs/idempotency.md),
   * when the operation is idempotent and the request holds a key: a use case
   * whose work must be found again after a lost answer records it with its
   * write and looks for it first (lib/idempotency/store.ts).
   */
  idempotentWork?: IdempotentWork;
  /**
   * The entry of this request's audit log (docs/audit.md) as a Put for the transaction that makes
   * its change; present on audited operations (`audited: true`). A use case that changes the
   * table puts it in the TransactWriteItems of the change, so the change and its entry are
   * written together or not at all; the pipeline then writes no other entry for a success.
   * @param campaignId - the campaign the change is about (a new campaign's ID), if any.
   */
  auditItem?: (campaignId?: string | null) => TransactItem;
  /**
   * Writes this request's success entry now (docs/audit.md), for a use case whose change is not in the table (an
   * export's file in S3): called last, before it answers, so an answered request always has its entry; a failed
   * write rejects, and the request fails with it. The pipeline then writes no other entry for the success.
   * Present on audited operations.
   * @param campaignId - the campaign the change is about, if any.
   */
  writeAuditEntry?: (campaignId?: string | null) => Promise<void>;
}

type BodyKind = 'json' | 'urlencoded' | 'multipart';

interface PipelineContext extends Context {
  organizationId?: string;
  keyCheck?: KeyCheck;
  bodyKind?: BodyKind;
  /** Set by the request-tracing plugin. */
  requestId?: string;
  /** The validated input, once the schema accepted the body. */
  input?: unknown;
  /** Set by the idempotency middleware once the request holds its key. */
  idempotentWork?: IdempotentWork;
  /** The request-rate outcome, once counted (lib/http/rate-limit.ts). */
  admission?: Promise<RequestAdmission | undefined>;
  /** The request's audit record, on an audited operation once its key's organization is known (lib/http/request-record.ts). */
  record?: RequestRecord;
  /** Whether the use case took its audit entry into its change's transaction, or wrote it before answering. */
  auditedInTransaction?: boolean;
}

/** The Lambda handler of an API operation, as API Gateway (payload 2.0) invokes it. */
export type ApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * The answer of a streaming operation's success (lib/http/stream.ts): the
 * headers, and a body that is a Node stream of UTF-8 text instead of a string.
 * Its refusals are the usual {@link APIGatewayProxyStructuredResultV2} with the envelope.
 */
export type StreamingResult = Omit<APIGatewayProxyStructuredResultV2, 'body'> & {
  body: Readable;
  /**
   * Writes the same bytes as `body` into `out` and ends it, in a few chunk buffers reused once written (memory
   * bounded whatever the stream's length); `body` is then never read. Written by lib/http/stream.ts
   * `writeStreamingBody`, which pipes `body` when this is absent.
   */
  writeTo?: (out: Writable) => Promise<void>;
};

/** The Lambda handler of a streaming operation: answers a {@link StreamingResult} on success (lib/lambda/streaming.ts carries it in AWS). */
export type StreamingApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2 | StreamingResult>;

/** Whether a handler's answer is a stream (a streaming operation's success). */
export const isStreamingResult = (result: APIGatewayProxyStructuredResultV2 | StreamingResult): result is StreamingResult =>
  typeof result.body === 'object' && result.body !== null;

type Request = middy.Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext>;

function bodyKindOf(contentType: string): BodyKind | undefined {
  if (/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(contentType)) return 'json';
  if (/^application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType)) return 'urlencoded';
  // Without its boundary parameter too, so that the refusal names the missing boundary, not the media type.
  if (/^multipart\/form-data\s*(;|$)/i.test(contentType)) return 'multipart';
  return undefined;
}

/**
 * Where the JSON body holds the property middy's parser refused (`__proto__`,
 * or a `constructor` that has a `prototype`), as an issue path such as
 * `filters.__proto__`: the parser reports the key alone. The body is parsed
 * again without middy's reviver; a plain `JSON.parse` makes `__proto__` an
 * own property, so this pollutes nothing, and the body guard has already
 * bounded its depth. `undefined` when no such property is found.
 */
function forbiddenPropertyPath(event: APIGatewayProxyEventV2): string | undefined {
  const find = (value: unknown, path: PropertyKey[]): PropertyKey[] | undefined => {
    if (value === null || typeof value !== 'object') return undefined;
    for (const [key, member] of Object.entries(value)) {
      const here = [...path, Array.isArray(value) ? Number(key) : key];
      if (
        key === '__proto__' ||
        (key === 'constructor' && member !== null && typeof member === 'object' && Object.hasOwn(member, 'prototype'))
      )
        return here;
      const found = find(member, here);
      if (found) return found;
    }
    return undefined;
  };
  try {
    const path = find(JSON.parse(bodyText(event.body ?? '', event.isBase64Encoded)), []);
    return path && formatPath(path);
  } catch {
    return undefined;
  }
}

/** Maps every error to the envelope; 5xx never exposes its message (middy "handling errors"). */
const errorEnvelope = (
  limiter: RequestLimiter | undefined,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => ({
  onError: async (request: Request) => {
    await verifyOpenKeyCheck(request);
    const error = request.error;
    // A key no organization stands behind (unknown) leaves no entry in anyone's audit log (docs/audit.md).
    if (error instanceof InvalidApiKeyError) request.context.record = undefined;
    if (error instanceof ApiError && error.statusCode === 401) await giveBackAdmission(limiter, request.context);
    if (error instanceof ApiError && error.statusCode < 500) {
      request.response = failure(error.statusCode, error.toJSON());
      // Headers that belong to the error: Retry-After, Allow (docs/errors.md).
      if (Object.keys(error.headers).length > 0) request.response.headers = { ...request.response.headers, ...error.headers };
      // RFC 6750: a bearer-protected resource names its scheme on 401.
      if (error.statusCode === 401) request.response.headers = { ...request.response.headers, 'www-authenticate': 'Bearer' };
      return;
    }
    // Only the body parsers' own errors are the caller's fault; anything else is ours.
    const fromParser = String((error as { cause?: { package?: unknown } } | null)?.cause?.package ?? '').startsWith('@middy/');
    const parserStatus = fromParser ? (error as { statusCode?: number }).statusCode : undefined;
    if (parserStatus === 413) {
      request.response = failure(400, new InvalidRequestError('The request body is too large.', ['body: too large']).toJSON());
      return;
    }
    if (parserStatus === 415 || parserStatus === 422) {
      const kind = request.context.bodyKind ?? 'body';
      const forbiddenKey =
        (error as Error).message === 'Forbidden key in JSON body'
          ? String((error as { cause?: { data?: unknown } }).cause?.data)
          : undefined;
      const invalid = forbiddenKey
        ? new InvalidRequestError('The JSON body uses a forbidden property name.', [
            `${forbiddenPropertyPath(request.event) ?? forbiddenKey}: forbidden property name`,
          ])
        : new InvalidRequestError(`The ${kind === 'json' ? 'JSON' : kind} body could not be parsed.`);
      request.response = failure(400, invalid.toJSON());
      return;
    }
    if (error instanceof DeadlineExceededError) logger.error('Deadline passed: the work stopped', { error });
    else logger.error('Unhandled error', { error });
    request.response = failure(500, new InternalError().toJSON());
  },
});

/**
 * An error answer is never sent on a key not verified during the request
 * (a revoked key gets 401, not the error its body or the use case caused).
 * A key that cannot be verified (the read failed) answers that failure instead.
 */
async function verifyOpenKeyCheck(request: Request): Promise<void> {
  const check = request.context.keyCheck;
  if (!check || check.verified) return;
  try {
    await check.ensure();
  } catch (keyError) {
    request.error = keyError as Error;
  }
}

/**
 * A request whose key was refused (401) after it was counted — a key this
 * process knew, found revoked, expired or unknown during the request — spends
 * nothing of its organization's window (docs/limits.md): its count is given
 * back (lib/http/rate-limit.ts {@link RequestLimiter.giveBack}), and
 * authentication forgot the key (lib/http/auth.ts), so its next request here
 * is read and refused before any count. A failed give-back is logged: the 401
 * stands.
 */
async function giveBackAdmission(limiter: RequestLimiter | undefined, context: PipelineContext): Promise<void> {
  const admission = limiter && (await context.admission);
  if (!admission) return;
  try {
    await limiter.giveBack(admission);
  } catch (error) {
    logger.warn('The count of a refused key could not be given back', { error });
  }
}

/** The content types a body may have, as error messages name them. */
const EXPECTED_CONTENT_TYPES = 'application/json, application/x-www-form-urlencoded or multipart/form-data';

/** A body that parses as a JSON object or array (a form body never starts with `{` or `[` for a valid field). */
function looksLikeJson(raw: string, isBase64Encoded: boolean | undefined): boolean {
  const text = bodyText(raw, isBase64Encoded).trim();
  if (!(text.startsWith('{') && text.endsWith('}')) && !(text.startsWith('[') && text.endsWith(']'))) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const tooDeep = (field: string) =>
  new InvalidRequestError(`The request body nests deeper than ${MAX_NESTING_DEPTH} levels.`, [
    `${field}: nested deeper than ${MAX_NESTING_DEPTH} levels`,
  ]);

/** Refuses bodies of an unknown content type, beyond the size limits or nested too deep; empty bodies count as none. */
const bodyGuard = (
  jsonOnly = false,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => ({
  before: (request: Request) => {
    const event = request.event;
    const headers = (event.headers ??= {});
    const raw = event.body;
    const bytes =
      raw === undefined || raw === null ? 0 : event.isBase64Encoded ? Buffer.byteLength(raw, 'base64') : Buffer.byteLength(raw, 'utf8');
    const blank = bytes === 0 || (!event.isBase64Encoded && raw!.trim() === '');
    if (blank) {
      // No body: nothing for the parsers to do; the schema sees {}.
      delete event.body;
      delete headers['content-type'];
      return;
    }
    const contentType = headers['content-type'];
    if (!contentType) {
      const hint = looksLikeJson(raw!, event.isBase64Encoded)
        ? 'The body looks like JSON: send it with Content-Type: application/json. '
        : '';
      throw new InvalidRequestError(`${hint}A request with a body needs a Content-Type header: ${EXPECTED_CONTENT_TYPES}.`, [
        'content-type: missing',
      ]);
    }
    const kind = bodyKindOf(contentType);
    if (kind === 'urlencoded' && looksLikeJson(raw!, event.isBase64Encoded)) {
      // `curl -d '{…}'` sends JSON labelled as a form: say so rather than report "unknown property".
      throw new InvalidRequestError(
        `The body is JSON but its Content-Type is application/x-www-form-urlencoded (curl -d sends that unless told otherwise): send it with Content-Type: application/json. Expected one of: ${EXPECTED_CONTENT_TYPES}.`,
        ['content-type: the body is JSON; expected application/json'],
      );
    }
    if (!kind) {
      throw new InvalidRequestError(`Content type "${contentType}" is not supported; use ${EXPECTED_CONTENT_TYPES}.`, [
        'content-type: unsupported',
      ]);
    }
    const charset = contentTypeCharset(contentType);
    if (charset !== undefined && !ACCEPTED_CHARSETS.includes(charset)) {
      // Read as UTF-8, a body in another charset would be stored with U+FFFD in place of its accented letters: refused instead.
      throw new InvalidRequestError(
        `The Content-Type header declares charset=${charset || '(empty)'}, but request bodies are read as UTF-8 only: encode the body as UTF-8 and send charset=utf-8, or no charset parameter.`,
        [`content-type: charset ${charset || '(empty)'} is not supported; use utf-8`],
      );
    }
    if (jsonOnly && kind !== 'json') {
      throw new InvalidRequestError(
        'This operation takes a JSON body only (its fields include a list of objects): send it with Content-Type: application/json.',
        ['content-type: expected application/json'],
      );
    }
    if (kind === 'urlencoded' && countFormFields(raw!, event.isBase64Encoded) > MAX_URLENCODED_FIELDS) {
      // The urlencoded parser keeps only the first 1,000 fields; refuse rather than lose the rest.
      throw new InvalidRequestError(
        `urlencoded bodies take at most ${MAX_URLENCODED_FIELDS} fields; send long account lists as JSON or as a multipart file part (accountIdsFile).`,
        ['body: too many urlencoded fields'],
      );
    }
    const limit = kind === 'multipart' ? MAX_MULTIPART_BYTES : MAX_BODY_BYTES;
    if (bytes > limit) {
      throw new InvalidRequestError(`The request body is ${bytes} bytes; the limit for ${kind} bodies is ${limit} bytes.`, [
        'body: too large',
      ]);
    }
    if (kind === 'json') {
      // Before JSON.parse: a body nested 100,000 deep costs one linear scan, not the stack.
      const field = jsonNestingViolation(bodyText(raw!, event.isBase64Encoded));
      if (field !== undefined) throw tooDeep(field);
    }
    request.context.bodyKind = kind;
  },
});

/**
 * Resolves the bearer API key to its organization before any body is read,
 * checks the operation's scope (the one place scopes are checked:
 * docs/authentication.md "Scopes"), and verifies the key now unless the
 * operation verifies it in its read (`in-read`). A key lacking the scope is
 * answered 403 `insufficient_scope` before the body is read or anything is
 * done; the request is still counted (the count is the limiter's, and usage
 * counts refusals), and the error path verifies the key first, so a revoked
 * key answers 401 and an organization over its rate 429 rather than 403.
 */
const authentication = (
  findApiKey: ApiKeyLookup,
  cache: ApiKeyCache | undefined,
  keyCheck: KeyCheckMode,
  limiter: RequestLimiter | undefined,
  operation: Operation,
  scopeStage: boolean,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => ({
  before: async (request: Request) => {
    const arrivedAt = new Date().toISOString();
    let authenticated: KeyCheck;
    try {
      authenticated = await authenticate(request.event.headers?.authorization, findApiKey, cache);
    } catch (error) {
      // A revoked or expired key of an organization: its refusal of a write operation is that organization's to see.
      const refused = operation.audited ? refusedKeyOf(error) : undefined;
      if (refused) request.context.record = recordOf(request, operation, refused.organizationId, refused.keyId, arrivedAt);
      throw error;
    }
    const organizationId = authenticated.organizationId;
    request.context.organizationId = organizationId;
    logger.appendKeys({ organizationId });
    if (operation.audited) request.context.record = recordOf(request, operation, organizationId, authenticated.keyId, arrivedAt);
    // A refusal this process already knows of (the organization's window is used up) is answered at once:
    // no read, no write, no body. The key's organization is known; whether it is still valid changes
    // nothing of a refusal, which shows no data and does nothing.
    // Usage counts it for the key (written with a later lease write).
    const known = limiter?.knownRefusal(organizationId, authenticated.keyId);
    if (known) {
      request.context.admission = known.catch(() => undefined);
      throw refusalOf(await known);
    }
    // Admitted beside the key's read (before) or the use case's (in-read): from this process's lease, or a lease write in that wave.
    const admission = limiter?.admit(organizationId, authenticated.keyId);
    request.context.admission = admission?.catch(() => undefined);
    const check = admission ? admittedKeyCheck(authenticated, admission) : authenticated;
    request.context.keyCheck = check;
    if (scopeStage && !grants(check.scopes, operation.scope)) throw new InsufficientScopeError(operation.scope);
    if (keyCheck === 'before') await check.ensure();
  },
});

/** The audit record of an audited request (lib/http/request-record.ts), once its organization is known. */
function recordOf(request: Request, operation: Operation, organizationId: string, keyId: string | undefined, at: string): RequestRecord {
  let idempotencyKey: string | null = null;
  if (operation.idempotent) {
    try {
      idempotencyKey = parseIdempotencyKey(request.event.headers?.[IDEMPOTENCY_KEY_HEADER]) ?? null;
    } catch {
      // An invalid header is refused by the idempotency stage (400); the entry names no key.
    }
  }
  return {
    organizationId,
    operation: operation.operationId,
    keyId: keyId ?? null,
    requestId: request.context.requestId ?? request.context.awsRequestId,
    idempotencyKey,
    // The caller's, not CloudFront's, when the request came through the edge (lib/http/source-address.ts).
    sourceIp: sourceAddressOf(request.event) || null,
    at,
  };
}

/**
 * Statuses of the refusals made before the request is read (docs/audit.md "Refusals, and the cost of a flood"): a
 * 401 of a key that belongs to the organization (revoked, expired) and a 429 of the request rate. Their entries are
 * written through {@link RequestAudit.writeRefusal}, several refusals of one process in one BatchWriteItem.
 */
const REFUSAL_STATUSES: ReadonlySet<number> = new Set([401, 429]);

/** The campaign an audited request names (its input's `campaignId`) or created (a success's campaign `id`). */
function campaignOf(context: PipelineContext, response: APIGatewayProxyStructuredResultV2): string | null {
  const named = (context.input as { campaignId?: unknown } | undefined)?.campaignId;
  if (typeof named === 'string') return named;
  if (response.statusCode !== 200 || typeof response.body !== 'string') return null;
  try {
    const data = (JSON.parse(response.body) as { data?: { id?: unknown } | null }).data;
    return typeof data?.id === 'string' && data.id.startsWith('camp_') ? data.id : null;
  } catch {
    return null;
  }
}

/**
 * Writes the audit entry of an answer no transaction carried (lib/http/request-record.ts):
 * every answer of an audited operation whose organization is known but a success whose change wrote its own
 * (a 401 of an unknown key has no record). Awaited before the answer leaves; a failed write is logged and the
 * answer stands.
 */
async function auditAnswer(
  audit: RequestAudit | undefined,
  context: PipelineContext,
  response: APIGatewayProxyStructuredResultV2,
): Promise<void> {
  const record = context.record;
  const status = response.statusCode ?? 200;
  if (!audit || !record) return;
  if (context.auditedInTransaction && status >= 200 && status < 300) return;
  let code: string | null = null;
  if (status >= 300 && typeof response.body === 'string') {
    try {
      code = (JSON.parse(response.body) as { error?: { code?: string } | null }).error?.code ?? null;
    } catch {
      code = null;
    }
  }
  const answer: RequestAnswer = { status, code, campaignId: campaignOf(context, response) };
  try {
    await (REFUSAL_STATUSES.has(status) ? audit.writeRefusal(record, answer) : audit.writeAnswer(record, answer));
  } catch (error) {
    logger.error('The audit entry of an answer could not be written', { error, status });
  }
}

/**
 * Stamps the RateLimit fields of the request's admission on its answer:
 * every authenticated answer, 2xx or error (a 401 is not authenticated).
 */
async function withRateLimitFields(
  response: APIGatewayProxyStructuredResultV2,
  context: PipelineContext,
): Promise<APIGatewayProxyStructuredResultV2> {
  if (!context.admission || response.statusCode === 401) return response;
  const admission = await context.admission;
  return admission ? { ...response, headers: { ...response.headers, ...rateLimitFields(admission) } } : response;
}

/**
 * Runs a middy body parser only for its own body kind. The guard has already
 * recognized the content type (with any parameter order, quoting or
 * boundary characters RFC 7578 allows), so the parser's stricter pattern
 * check is turned off and busboy reads the boundary itself.
 */
const forBodyKind = (
  kind: BodyKind,
  parser: middy.MiddlewareObj<any, any, any, any>,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => ({
  before: (request: Request) => (request.context.bodyKind === kind ? parser.before?.(request as never) : undefined),
});

/**
 * Refuses a multipart body whose Content-Type names no boundary, or whose framing busboy would hang or throw on
 * (form.ts `multipartFramingFault`), before the multipart parser reads it.
 */
const multipartFraming = (): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => ({
  before: (request: Request) => {
    if (request.context.bodyKind !== 'multipart') return;
    const event = request.event;
    const boundary = multipartBoundary(event.headers['content-type']!);
    if (boundary === undefined) {
      throw new InvalidRequestError(
        'The Content-Type header is multipart/form-data without its boundary parameter (multipart/form-data; boundary=…), so the parts cannot be found: let the HTTP client write the header with the body (curl -F, fetch with a FormData), or send the fields as JSON.',
        ['content-type: multipart/form-data needs a boundary parameter'],
      );
    }
    const fault = multipartFramingFault(Buffer.from(event.body!, event.isBase64Encoded ? 'base64' : 'utf8'), boundary);
    if (fault) throw new InvalidRequestError(`The multipart body is malformed: ${fault}.`, [`body: malformed multipart (${fault})`]);
  },
});

/** Form bodies become the shape of a JSON body (see `form.ts`). */
const formFields = (): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => ({
  before: (request: Request) => {
    const kind = request.context.bodyKind;
    const body = request.event.body as unknown;
    if (kind !== 'urlencoded' && kind !== 'multipart') return;
    if (typeof body !== 'object' || body === null) {
      throw new InvalidRequestError(`The ${kind} body could not be parsed.`);
    }
    const field = formNestingViolation(Object.keys(body));
    if (field !== undefined) throw tooDeep(field);
    if (kind === 'urlencoded') (request.event as { body: unknown }).body = nestFormFields({ ...(body as Record<string, unknown>) });
    if (kind === 'multipart') (request.event as { body: unknown }).body = nestFormFields(multipartToFields(body as never));
  },
});

/**
 * The form half of the body parsing: the urlencoded and multipart parsers (each for its own body kind), form fields
 * nested into a JSON body's shape (form.ts), and the coercing form variant of a request schema. Every operation
 * takes form bodies but a `jsonOnly` one (lib/http/operation.ts), whose handler is built without them
 * ({@link createJsonApiHandler}): its bundle then carries neither parser nor busboy (docs/deploy.md, bench `bundles`).
 */
interface FormBodies {
  /** Run after the body guard and the JSON parser, before validation. */
  middlewares: middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext>[];
  /** The coercing form variant of a request schema (form.ts {@link formSchemaOf}). */
  schemaOf: (schema: z.core.$ZodType) => z.core.$ZodType;
}

const formBodies = (): FormBodies => ({
  middlewares: [
    multipartFraming(),
    forBodyKind('urlencoded', httpUrlencodeBodyParser({ disableContentTypeCheck: true })),
    forBodyKind(
      'multipart',
      httpMultipartBodyParser({
        disableContentTypeCheck: true,
        // Every part is read as an attachment so repeated and bracketed
        // field names survive; form.ts turns plain fields back into text.
        // Field names are bounded by the body alone (middy's default is 100 characters), so a deep
        // bracket path reaches the depth check and is answered with an issue naming the field.
        busboy: {
          isPartAFile: () => true,
          limits: { fileSize: MAX_MULTIPART_BYTES, fieldNameSize: MAX_MULTIPART_BYTES, fields: 200_000, parts: 200_000 },
        },
      }),
    ),
    formFields(),
  ],
  schemaOf: formSchemaOf,
});

/**
 * Validates the body against the operation's schema (the coercing form variant for form bodies; a JSON-only
 * operation's body guard lets no form body through).
 */
const validation = <S extends z.core.$ZodObject>(
  operation: Operation<S>,
  forms: FormBodies | undefined,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => {
  // Derived at the first form body, not at module load: most requests are JSON, and a cold start pays for no
  // schema walk it may never use (bench `bundles`, cold init).
  let formSchema: z.core.$ZodType | undefined;
  return {
    before: (request: Request) => {
      const kind = request.context.bodyKind;
      const raw = kind === undefined ? {} : (request.event.body as unknown);
      const form = kind !== undefined && kind !== 'json' && forms !== undefined;
      const prepared = form ? (operation.fromForm?.(raw as Record<string, unknown>) ?? raw) : raw;
      const parsed = safeParse(form ? (formSchema ??= forms.schemaOf(operation.request)) : operation.request, prepared);
      if (!parsed.success) throw new InvalidRequestError('The request body is invalid.', formatIssues(parsed.error.issues));
      request.context.input = parsed.data;
    },
  };
};

/**
 * Counts a request whose valid body names a campaign (`campaignId`) for `org/usage` by campaign
 * (docs/authentication.md "Usage"): in the limiter's memory, written with its usage months (no write now).
 */
const campaignUsage = (
  limiter: RequestLimiter | undefined,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext> => ({
  before: (request: Request) => {
    const named = (request.context.input as { campaignId?: unknown } | undefined)?.campaignId;
    const organizationId = request.context.organizationId;
    if (limiter && organizationId && typeof named === 'string') limiter.countCampaign(organizationId, named);
  },
});

/**
 * When a request's API key is verified (lib/http/auth.ts): `before` the use
 * case (one GetItem, unless this process read the key just now), or `in-read`:
 * the use case hands {@link RequestContext.keyCheck} to its store read, which
 * verifies it in the same round trip; the pipeline verifies whatever is
 * still open before it answers. `in-read` is for operations that read before
 * they write: their use case must verify the check before any write.
 */
export type KeyCheckMode = 'before' | 'in-read';

/**
 * Builds the Lambda handler of one API operation.
 *
 * @param operation - the operation's schema and metadata (also used for OpenAPI).
 * @param useCase - receives the validated input and the {@link RequestContext}; its result becomes `data`.
 * @param dependencies.findApiKey - the API-key lookup by key hash authentication uses.
 * @param dependencies.apiKeyCache - the process's key hash → organization cache; none: every request reads its key before anything else.
 * @param dependencies.idempotency - the idempotency stage (lib/idempotency/stage.ts), required for an operation with
 *   `idempotent: true` and only bundled where given (lib/root.ts `idempotentApiHandler`).
 * @param dependencies.requestLimiter - the process's request-rate limit (lib/http/rate-limit.ts, docs/limits.md); none: no limit, no RateLimit fields.
 * @param options.keyCheck - when the key is verified ({@link KeyCheckMode}); default `before`.
 * @param options.headers - response headers drawn from a success's `data` (e.g. `Credits-Remaining`, docs/limits.md).
 * @param options.withoutScopeStage - builds the pipeline without its scope stage: only for the bench's measure of
 *   what the stage costs (bench/figures/keys.ts, "warm p50 with scopes ÷ without"). Never set by lib/root.ts, so
 *   no deployed handler has it, and nothing at run time (setting, header, request) can turn the stage off;
 *   test/scopes.test.ts fails if anything outside bench/ passes it.
 * @param options.settlesCommit - the use case settles a point of no return itself, past its deadline if need be
 *   (the launch: lib/enrichment/launch.ts): middy's early time-out, which would answer 500 while the outcome is
 *   still unknown, is off (docs/reliability.md, "Deadlines").
 * @returns a middy handler for API Gateway HTTP API (payload 2.0) events.
 * @throws Error when the operation is idempotent and no idempotency stage is given, or is `jsonOnly`
 *   ({@link createJsonApiHandler}): wiring mistakes, at module load.
 *
 * Functions do not call it themselves: `apiHandler` and `idempotentApiHandler` of lib/root.ts wire it.
 *
 * @example
 * // A test's handler, with its own key store and no cache (every request reads its key first):
 * const handler = createApiHandler(getCampaignOperation, (input, ctx) => getCampaign({ campaigns: store }, ctx.organizationId, input.campaignId), { findApiKey: (keyHash) => keyStore.findByHash(keyHash) });
 */
export function createApiHandler<S extends z.core.$ZodObject, R>(
  operation: Operation<S>,
  useCase: (input: z.output<S>, context: RequestContext) => Promise<R>,
  dependencies: ApiHandlerDependencies,
  options: ApiHandlerOptions<R> = {},
): ApiHandler {
  if (operation.jsonOnly) {
    throw new Error(
      `${operation.operationId} takes JSON bodies only (jsonOnly): build its handler without the form parsers (createJsonApiHandler; jsonIdempotentApiHandler of lib/root.ts)`,
    );
  }
  return buildApiHandler(operation, useCase, dependencies, options, formBodies());
}

/**
 * {@link createApiHandler} for a `jsonOnly` operation (lib/http/operation.ts): the same pipeline without the
 * urlencoded and multipart parsers, which its body guard never lets a body reach, so its bundle carries
 * neither them nor busboy (bench `bundles`). A form body is answered 400 `invalid_request` as before.
 *
 * @throws Error when the operation is not `jsonOnly` (it takes form bodies: {@link createApiHandler}), at module load.
 */
export function createJsonApiHandler<S extends z.core.$ZodObject, R>(
  operation: Operation<S>,
  useCase: (input: z.output<S>, context: RequestContext) => Promise<R>,
  dependencies: ApiHandlerDependencies,
  options: ApiHandlerOptions<R> = {},
): ApiHandler {
  if (!operation.jsonOnly) {
    throw new Error(
      `${operation.operationId} takes form bodies (it is not jsonOnly): build its handler with the form parsers (createApiHandler; idempotentApiHandler of lib/root.ts)`,
    );
  }
  return buildApiHandler(operation, useCase, dependencies, options, undefined);
}

/** What {@link createApiHandler} wires in (see its parameters). */
export interface ApiHandlerDependencies {
  findApiKey: ApiKeyLookup;
  apiKeyCache?: ApiKeyCache;
  idempotency?: IdempotencyStage;
  requestLimiter?: RequestLimiter;
  audit?: RequestAudit;
}

/** How {@link createApiHandler} builds the pipeline (see its parameters). */
export interface ApiHandlerOptions<R> {
  keyCheck?: KeyCheckMode;
  headers?: (data: R) => Record<string, string>;
  settlesCommit?: boolean;
  withoutScopeStage?: true;
  /**
   * The answer of a streamed success (lib/http/stream.ts `streamedAnswerOf`), `undefined` for any other data: given
   * by a streaming operation's handler only (lib/root.ts `streamingApiHandler`), so no other bundle carries the
   * stream's code.
   */
  streamedAnswer?: (data: R) => StreamingResult | undefined;
}

/** The pipeline of {@link createApiHandler}, with the form parsers or (a JSON-only operation) without. */
function buildApiHandler<S extends z.core.$ZodObject, R>(
  operation: Operation<S>,
  useCase: (input: z.output<S>, context: RequestContext) => Promise<R>,
  dependencies: ApiHandlerDependencies,
  options: ApiHandlerOptions<R>,
  forms: FormBodies | undefined,
): ApiHandler {
  if (operation.idempotent && !dependencies.idempotency) {
    throw new Error(
      `${operation.operationId} is idempotent: build its handler with an idempotency stage (idempotentApiHandler of lib/root.ts)`,
    );
  }
  useEnglishIssueMessages();
  const audit = dependencies.audit;
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PipelineContext>({
    ...requestTracing(),
    ...(options.settlesCommit ? { timeoutEarlyInMillis: 0 } : {}),
  })
    .use(injectLambdaContext(logger)) // keys: reset by requestTracing at the next request's start
    .use(errorEnvelope(dependencies.requestLimiter))
    .use(
      authentication(
        dependencies.findApiKey,
        dependencies.apiKeyCache,
        options.keyCheck ?? 'before',
        dependencies.requestLimiter,
        operation as Operation,
        options.withoutScopeStage !== true,
      ),
    )
    .use(bodyGuard(operation.jsonOnly))
    .use(forBodyKind('json', httpJsonBodyParser({ disableContentTypeCheck: true })))
    .use(forms?.middlewares ?? [])
    .use(validation(operation, forms))
    .use(campaignUsage(dependencies.requestLimiter))
    .use(
      (dependencies.idempotency?.(operation) ?? []) as unknown as middy.MiddlewareObj<
        APIGatewayProxyEventV2,
        APIGatewayProxyStructuredResultV2,
        Error,
        PipelineContext
      >[],
    )
    .handler(async (_event, context, { signal: lambdaTimeout }) => {
      const keyCheck = context.keyCheck!;
      // Started when the use case first reads it: a read that never looks at its deadline pays for no controller or timer.
      let deadline: RequestDeadline | undefined;
      let data: R;
      try {
        data = await useCase(context.input as z.output<S>, {
          organizationId: keyCheck.organizationId,
          keyCheck,
          testMode: isTestOrganizationId(keyCheck.organizationId),
          requestId: context.requestId ?? context.awsRequestId,
          headers: _event.headers ?? {},
          get signal() {
            return (deadline ??= startDeadline(context, lambdaTimeout)).signal;
          },
          remainingMs: () =>
            typeof context.getRemainingTimeInMillis === 'function'
              ? context.getRemainingTimeInMillis()
              : API_FUNCTION_TIMEOUT_SECONDS * 1000,
          ...(context.idempotentWork ? { idempotentWork: context.idempotentWork } : {}),
          ...(audit && context.record
            ? {
                auditItem: (campaignId?: string | null) => {
                  context.auditedInTransaction = true;
                  return audit.changeItem(context.record!, campaignId ?? null);
                },
                writeAuditEntry: async (campaignId?: string | null) => {
                  await audit.writeAnswer(context.record!, { status: 200, code: null, campaignId: campaignId ?? null });
                  context.auditedInTransaction = true;
                },
              }
            : {}),
        });
      } finally {
        deadline?.end();
      }
      // The safety net: an answer never leaves on a key this request did not verify.
      await keyCheck.ensure();
      // A streamed success (lib/http/stream.ts): everything that could be refused was, before its first byte.
      const streamed = options.streamedAnswer?.(data);
      if (streamed) return streamed as unknown as APIGatewayProxyStructuredResultV2;
      const answer = success(data);
      return options.headers ? { ...answer, headers: { ...answer.headers, ...options.headers(data) } } : answer;
    });
  // The body parsers widen middy's event type; callers see the API Gateway event.
  // The RateLimit fields go on every answer, an idempotent replay's included (it leaves middy early).
  const served = handler as unknown as (
    event: APIGatewayProxyEventV2,
    context: PipelineContext,
  ) => Promise<APIGatewayProxyStructuredResultV2>;
  const dataHeaders = options.headers;
  // A saved success replayed (Idempotent-Replayed) gets the headers of its saved data too.
  const withDataHeaders = (response: APIGatewayProxyStructuredResultV2): APIGatewayProxyStructuredResultV2 =>
    dataHeaders && response.statusCode === 200 && response.headers?.['idempotent-replayed'] && typeof response.body === 'string'
      ? { ...response, headers: { ...response.headers, ...dataHeaders((JSON.parse(response.body) as { data: R }).data) } }
      : response;
  return (async (event, context) => {
    const response = withDataHeaders(await served(event, context as PipelineContext));
    await auditAnswer(audit, context as PipelineContext, response);
    return withRateLimitFields(response, context as PipelineContext);
  }) as ApiHandler;
}
