/**
 * The idempotency stage of an idempotent operation's request pipeline
 * (docs/idempotency.md; lib/http/pipeline.ts): the key check an `in-read`
 * operation owes before a record is claimed, then the idempotency middleware.
 *
 * A module of its own so that only the handlers of idempotent operations
 * (built with `idempotentApiHandler` of lib/root.ts) bundle it, the records'
 * store and `canonicalize`; read operations never do (issue #18, bundle size).
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Operation } from '../http/operation';
import { idempotency, type IdempotencyContext, type IdempotencyOptions, type SavedAnswerCodec } from './middleware';
import { IDEMPOTENCY_KEY_HEADER } from './key';

/** What the stage reads from the pipeline's context besides {@link IdempotencyContext}: the request's API-key check (lib/http/auth.ts). */
export interface IdempotencyStageContext extends IdempotencyContext {
  keyCheck?: { ensure(): Promise<unknown> };
}

/** Middlewares the pipeline runs after validation and before the use case. */
export type IdempotencyStageMiddleware = middy.MiddlewareObj<
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Error,
  IdempotencyStageContext
>;

/**
 * Builds the stage of one operation (see {@link idempotencyStage}); `savedAnswer` keeps a secret out of its saved
 * answers; `personalAnswers` lists them for an erasure's purge ({@link IdempotencyOptions.personalAnswers}).
 */
export type IdempotencyStage = (
  operation: Pick<Operation, 'operationId' | 'idempotent'>,
  savedAnswer?: SavedAnswerCodec,
  personalAnswers?: boolean,
) => IdempotencyStageMiddleware[];

/**
 * The idempotency stage with these records.
 *
 * An operation whose key is verified in its read still writes nothing on an
 * unverified key: a request with an `Idempotency-Key` has its key verified
 * before the idempotency record is claimed (or a saved answer replayed).
 *
 * @param options - the records' store and how long a key is kept ({@link IdempotencyOptions}).
 * @returns for each operation: the key verification, then {@link idempotency}.
 */
export function idempotencyStage(options: IdempotencyOptions): IdempotencyStage {
  return (operation, savedAnswer, personalAnswers) => [
    {
      before: async (request) => {
        if (operation.idempotent && request.event.headers?.[IDEMPOTENCY_KEY_HEADER] !== undefined) await request.context.keyCheck?.ensure();
      },
    },
    idempotency(operation, { ...options, ...(savedAnswer ? { savedAnswer } : {}), ...(personalAnswers ? { personalAnswers } : {}) }),
  ];
}
