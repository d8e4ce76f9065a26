/**
 * Safe retries with `Idempotency-Key` (docs/idempotency.md), as a middy middleware
 * of the request pipeline (lib/http/pipeline.ts).
 *
 * It runs after authentication and validation, so it knows the organization
 * and the validated input:
 *
 * - before: claims organization + operation + key with the input's
 *   fingerprint and a lock that lapses with the function's timeout. A key
 *   already held answers from the record: the saved answer, replayed with
 *   `Idempotent-Replayed: true`; 422 `idempotency_key_reused` for another
 *   input; 409 `idempotency_key_in_use` (`Retry-After: 1`) while the first
 *   request still runs.
 * - after / onError: saves a 2xx answer or a business refusal (402, 404,
 *   409 `campaign_not_enrichable` / `campaign_not_editable` /
 *   `campaign_not_cancelable`, 422); releases
 *   the key on anything else (400, 401, 409 `enrichment_pending`, 429, 5xx),
 *   so the caller may retry the same request.
 *
 * Our own, not the Powertools idempotency utility: its published persistence
 * layer can delete a running request's lock (powertools-lambda-typescript
 * issue #5675), and its records are not scoped per organization.
 */
import { randomUUID } from 'node:crypto';
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ApiError, IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../errors';
import { logger } from '../observability';
import { failure, success } from '../http/envelope';
import type { Operation } from '../http/operation';
import { fingerprintOf, IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, parseIdempotencyKey } from './key';
import type { IdempotencyScope, IdempotencyStore, IdempotentWork, SavedResponse } from './store';

/** What the middleware reads from the pipeline's context, and what it leaves there. */
export interface IdempotencyContext extends Context {
  organizationId?: string;
  requestId?: string;
  /** The validated input (after the schema). */
  input?: unknown;
  /** Set once this request holds its key: the work done under it (lib/idempotency/store.ts), for the use case. */
  idempotentWork?: IdempotentWork;
}

/**
 * How an operation's success answer is kept and replayed, when its `data`
 * holds something no saved answer may hold (docs/idempotency.md: a webhook
 * endpoint's signing secret). `toSaved` maps `data` to what is stored;
 * `fromSaved` maps it back at replay (reading what it must: e.g. whether the
 * secret still signs). Without it the exact body is saved and replayed.
 */
export interface SavedAnswerCodec {
  toSaved(data: unknown): unknown;
  fromSaved(saved: unknown, context: { organizationId: string }): Promise<unknown>;
}

/** Options of {@link idempotency}. */
export interface IdempotencyOptions {
  /** The operation's {@link SavedAnswerCodec}, if its answer holds a secret. */
  savedAnswer?: SavedAnswerCodec;
  /**
   * The operation's saved answers can name a person (identifier hashes): they
   * are listed under the organization so an erasure purges those that hold
   * the person (lib/idempotency/store.ts `purgeAnswers`; docs/privacy.md "Erasure").
   */
  personalAnswers?: boolean;
  /** The store of idempotency records (built lazily, once per process): what a request claims, saves and releases. */
  store: () => Pick<IdempotencyStore, 'work' | 'claim' | 'complete' | 'release'>;
  /** Seconds a key is kept (`IDEMPOTENCY_TTL_SECONDS`). */
  ttlSeconds: () => number;
  /** Lock length when the Lambda context gives no remaining time, in ms. @default 29,000 (the API functions' timeout) */
  defaultLockMs?: number;
}

type Request = middy.Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, IdempotencyContext>;

/** Where the claim of the running request is kept between its phases. */
const CLAIM = Symbol('idempotencyClaim');
type Claimed = Request & { [CLAIM]?: { scope: IdempotencyScope; token: string } };

/** Business refusals whose answer is saved and replayed (docs/idempotency.md). */
const SAVED_CONFLICTS = new Set(['campaign_not_enrichable', 'campaign_not_editable', 'campaign_not_cancelable']);

/** Whether an error answer (HTTP status and code) is saved as a business refusal rather than releasing the key (docs/idempotency.md). */
export function isSavedRefusal(error: Pick<ApiError, 'statusCode' | 'code'>): boolean {
  return (
    error.statusCode === 402 ||
    error.statusCode === 404 ||
    error.statusCode === 422 ||
    (error.statusCode === 409 && SAVED_CONFLICTS.has(error.code))
  );
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/**
 * The idempotency middleware of one operation; a no-op unless the operation
 * is declared `idempotent` and the request carries `Idempotency-Key`.
 *
 * @throws InvalidRequestError for a malformed key; IdempotencyKeyReusedError; IdempotencyKeyInUseError.
 */
export function idempotency(
  operation: Pick<Operation, 'operationId' | 'idempotent'>,
  options: IdempotencyOptions,
): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, IdempotencyContext> {
  if (!operation.idempotent) return { before: () => undefined };

  const save = async (request: Claimed, response: SavedResponse) => {
    const claim = request[CLAIM];
    if (!claim) return;
    delete request[CLAIM];
    try {
      if (!(await options.store().complete(claim.scope, claim.token, response, options.personalAnswers))) {
        logger.warn('Idempotency claim lost before its answer was saved (the lock lapsed)', { idempotencyKey: claim.scope.key });
      }
    } catch (error) {
      // The work is done; the caller still gets its answer. A retry finds the
      // key in progress until the lock lapses, then runs again.
      logger.error('Saving the idempotent answer failed', { error, idempotencyKey: claim.scope.key });
    }
  };

  const release = async (request: Claimed) => {
    const claim = request[CLAIM];
    if (!claim) return;
    delete request[CLAIM];
    try {
      await options.store().release(claim.scope, claim.token);
    } catch (error) {
      logger.error('Releasing the idempotency key failed; it frees itself when the lock lapses', {
        error,
        idempotencyKey: claim.scope.key,
      });
    }
  };

  return {
    before: async (request: Claimed) => {
      const key = parseIdempotencyKey(request.event.headers?.[IDEMPOTENCY_KEY_HEADER]);
      if (key === undefined) return undefined;
      const scope: IdempotencyScope = { organizationId: request.context.organizationId!, operationId: operation.operationId, key };
      const fingerprint = fingerprintOf(request.context.input);
      const token = randomUUID();
      const now = Date.now();
      const remaining = typeof request.context.getRemainingTimeInMillis === 'function' ? request.context.getRemainingTimeInMillis() : 0;
      const lockMs = remaining > 0 ? remaining : (options.defaultLockMs ?? 29_000);
      const outcome = await options.store().claim({
        ...scope,
        fingerprint,
        token,
        requestId: request.context.requestId ?? request.context.awsRequestId,
        now,
        lockExpiresAt: now + lockMs,
        ttlSeconds: options.ttlSeconds(),
      });
      logger.appendKeys({ idempotencyKey: key });
      if (outcome.ok) {
        request[CLAIM] = { scope, token };
        request.context.idempotentWork = options.store().work(scope, now, options.ttlSeconds());
        return undefined;
      }
      const record = outcome.record;
      if (record.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
      if (record.status !== 'completed' || !record.response) throw new IdempotencyKeyInUseError();
      logger.info('Idempotent replay', { originalRequestId: record.requestId, statusCode: record.response.statusCode });
      let body = record.response.body;
      if (options.savedAnswer && record.response.statusCode >= 200 && record.response.statusCode < 300) {
        const saved = (JSON.parse(body) as { data: unknown }).data;
        body = success(await options.savedAnswer.fromSaved(saved, { organizationId: scope.organizationId })).body as string;
      }
      // Answer early: the saved status and body, marked as a replay.
      return { statusCode: record.response.statusCode, headers: { ...JSON_HEADERS, [IDEMPOTENT_REPLAYED_HEADER]: 'true' }, body };
    },
    after: async (request: Claimed) => {
      const response = request.response;
      if (!request[CLAIM] || !response) return;
      const statusCode = response.statusCode ?? 200;
      if (statusCode >= 200 && statusCode < 300) {
        const codec = options.savedAnswer;
        // What is saved never holds what the codec keeps out (a secret); the answer sent now is unchanged.
        const body = codec
          ? (success(codec.toSaved((JSON.parse(response.body ?? 'null') as { data: unknown }).data)).body as string)
          : (response.body ?? '');
        await save(request, { statusCode, body });
      } else await release(request);
    },
    onError: async (request: Claimed) => {
      if (!request[CLAIM]) return;
      const error = request.error;
      if (error instanceof ApiError && isSavedRefusal(error)) {
        const answer = failure(error.statusCode, error.toJSON());
        await save(request, { statusCode: error.statusCode, body: answer.body as string });
      } else {
        await release(request);
      }
    },
  };
}
