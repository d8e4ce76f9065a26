/**
 * Idempotency records on the shared table (docs/idempotency.md; docs/data-model.md
 * "Idempotency record").
 *
 * One item per organization + operation + key. A request claims the key
 * with one conditional PutItem (the lock, valid until the function's
 * timeout); when it ends, its answer is saved in the same item (conditional
 * on the claim's token) or the item is deleted (conditional on the token),
 * so a request whose lock expired and was taken over can never overwrite or
 * delete its successor's record.
 *
 * DynamoDB deletes items past their `ttl` lazily (up to days later), so every
 * check here treats a record past `expiresAt` as absent.
 */
import { DeleteCommand, GetCommand, QueryCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { storeOf, type StoreMethod, type TableAccess } from '../db/methods';
import { TABLE_INDEXES } from '../db/table';
import * as keys from '../db/keys';
import { deleteIf, putIf, updateIf } from '../db/conditional';

/** Which request an idempotency record belongs to. */
export interface IdempotencyScope {
  organizationId: string;
  /** The operation's `operationId`, e.g. `createCampaign`. */
  operationId: string;
  /** The `Idempotency-Key` value, quotes removed. */
  key: string;
}

/** An answer worth replaying: HTTP status and the exact response body. */
export interface SavedResponse {
  statusCode: number;
  body: string;
}

/** An idempotency record as stored. */
export interface IdempotencyRecord {
  status: 'in_progress' | 'completed';
  /** SHA-256 (hex) of the validated input. */
  fingerprint: string;
  /** Request ID of the request that claimed the key. */
  requestId: string;
  /** When the key was first claimed (ISO 8601). */
  createdAt: string;
  /** Epoch milliseconds after which an `in_progress` lock is abandoned (the holder's function timeout). */
  lockExpiresAt: number;
  /** Epoch milliseconds after which the whole record counts as absent. */
  expiresAt: number;
  /** The saved answer, once `completed`. */
  response?: SavedResponse;
}

/** A claim attempt: who claims, with what input, and until when. */
export interface IdempotencyClaim extends IdempotencyScope {
  fingerprint: string;
  /** Random token of this claim; only its holder may complete or release it. */
  token: string;
  requestId: string;
  /** Current time, epoch milliseconds. */
  now: number;
  /** Epoch milliseconds when this request's lock lapses (now + the function's remaining time). */
  lockExpiresAt: number;
  /** Seconds the record is kept from now (`IDEMPOTENCY_TTL_SECONDS`). */
  ttlSeconds: number;
}

/**
 * The work a request does under its key (docs/idempotency.md: "work done under a
 * key is found again by it"), handed to the use case of an operation whose
 * work must be found again even when its answer is lost: a create that wrote
 * its campaign, a launch that charged. The use case puts {@link workItem} in
 * the very transaction that does the work, and asks {@link find} first: a
 * retry after any lost answer (a 5xx that released the key, a killed
 * function whose lock lapsed, a failed save of the answer) finds the
 * resource and answers it instead of working again.
 */
export interface IdempotentWork {
  /** The ID of the resource the work under this key wrote (a campaign ID), or undefined. */
  find(): Promise<string | undefined>;
  /** The transaction item recording that the work under this key wrote `resourceId` (kept as long as the key). */
  workItem(resourceId: string): NonNullable<TransactWriteCommandInput['TransactItems']>[number];
}

/** Data access for idempotency records. */
export interface IdempotencyStore {
  /** The {@link IdempotentWork} of one key, kept `ttlSeconds` from `now` (epoch ms). */
  work(scope: IdempotencyScope, now: number, ttlSeconds: number): IdempotentWork;
  /**
   * Claims the key for this request. Succeeds when no live record exists, or
   * when the existing one is a lapsed lock of the same input (its holder died).
   * @returns `{ ok: true }`, or the live record that holds the key.
   */
  claim(claim: IdempotencyClaim): Promise<{ ok: true } | { ok: false; record: IdempotencyRecord }>;
  /**
   * Saves the answer of a claim; a `personal` answer (one that can name a
   * person: identifier hashes) is also listed under its organization, for
   * {@link IdempotencyStore.purgeAnswers}.
   * @returns false when the claim was lost (its lock lapsed and another request took the key).
   */
  complete(scope: IdempotencyScope, token: string, response: SavedResponse, personal?: boolean): Promise<boolean>;
  /**
   * Deletes the organization's personal saved answers (see {@link IdempotencyStore.complete})
   * whose body `holds` says hold the person: one Query of the list index,
   * one GetItem per listed answer. A retry with a purged key runs again.
   * @returns how many were deleted.
   */
  purgeAnswers(organizationId: string, holds: (body: string) => boolean): Promise<number>;
  /** Deletes the record of a claim so the key can be used again. A lost claim is left alone. */
  release(scope: IdempotencyScope, token: string): Promise<void>;
}

/** A store method's factory (lib/db/methods.ts): an operation's bundle carries only the methods it names. */
type Method<K extends keyof IdempotencyStore> = StoreMethod<IdempotencyStore, K>;

/** The record's key of one Idempotency-Key. */
const keyOf = (scope: IdempotencyScope) => keys.idempotencyRecord(scope.organizationId, scope.operationId, scope.key);

/** {@link IdempotencyStore.work}. */
export const work: Method<'work'> =
  ({ client, tableName }) =>
  (scope, now, ttlSeconds) => {
    const key = keys.idempotentWork(scope.organizationId, scope.operationId, scope.key);
    return {
      async find() {
        const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
        // A marker past its expiry counts as absent (DynamoDB's TTL deletes lazily).
        return Item && Number(Item.expiresAt) > Date.now() ? String(Item.resourceId) : undefined;
      },
      workItem(resourceId) {
        const expiresAt = now + ttlSeconds * 1000;
        return {
          Put: {
            TableName: tableName,
            Item: { ...key, type: 'idempotentWork', resourceId, expiresAt, ttl: Math.ceil(expiresAt / 1000) },
          },
        };
      },
    };
  };

/** {@link IdempotencyStore.claim}. */
export const claim: Method<'claim'> =
  ({ client, tableName }) =>
  async (claim) => {
    const expiresAt = claim.now + claim.ttlSeconds * 1000;
    const record: IdempotencyRecord & { token: string } = {
      status: 'in_progress',
      fingerprint: claim.fingerprint,
      requestId: claim.requestId,
      createdAt: new Date(claim.now).toISOString(),
      lockExpiresAt: claim.lockExpiresAt,
      expiresAt,
      token: claim.token,
    };
    const outcome = await putIf(client, {
      TableName: tableName,
      Item: {
        ...keyOf(claim),
        type: 'idempotencyRecord',
        organizationId: claim.organizationId,
        operationId: claim.operationId,
        ...record,
        // DynamoDB's TTL (epoch seconds) deletes the item some time after expiresAt.
        ttl: Math.ceil(expiresAt / 1000),
      },
      // No live record; or a record past its expiry; or an abandoned lock on the same input.
      ConditionExpression:
        'attribute_not_exists(pk) OR expiresAt <= :now OR (#status = :inProgress AND lockExpiresAt <= :now AND fingerprint = :fingerprint)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':now': claim.now, ':inProgress': 'in_progress', ':fingerprint': claim.fingerprint },
    });
    if (outcome.ok) return { ok: true };
    const old = outcome.old as (IdempotencyRecord & { response?: { statusCode: number; body: string } }) | undefined;
    // A failed condition always has an item to show (the first clause failed); anything else is unexpected.
    if (!old) throw new Error('Idempotency claim refused with no record to answer from');
    return {
      ok: false,
      record: {
        status: old.status,
        fingerprint: old.fingerprint,
        requestId: old.requestId,
        createdAt: old.createdAt,
        lockExpiresAt: old.lockExpiresAt,
        expiresAt: old.expiresAt,
        ...(old.response ? { response: { statusCode: old.response.statusCode, body: old.response.body } } : {}),
      },
    };
  };

/** {@link IdempotencyStore.complete}. */
export const complete: Method<'complete'> =
  ({ client, tableName }) =>
  async (scope, token, response, personal = false) => {
    const listed = personal ? keys.personalSavedAnswer(scope.organizationId, scope.operationId, scope.key) : undefined;
    const outcome = await updateIf(client, {
      TableName: tableName,
      Key: keyOf(scope),
      UpdateExpression: `SET #status = :completed, #response = :response${listed ? ', gsi1pk = :gsi1pk, listSk = :listSk' : ''}`,
      ConditionExpression: '#token = :token',
      ExpressionAttributeNames: { '#status': 'status', '#response': 'response', '#token': 'token' },
      ExpressionAttributeValues: {
        ':completed': 'completed',
        ':response': response,
        ':token': token,
        ...(listed ? { ':gsi1pk': listed.gsi1pk, ':listSk': listed.listSk } : {}),
      },
      ReturnValues: 'NONE',
    });
    return outcome.ok;
  };

/** {@link IdempotencyStore.purgeAnswers}. */
export const purgeAnswers: Method<'purgeAnswers'> =
  ({ client, tableName }) =>
  async (organizationId, holds) => {
    const partition = keys.personalSavedAnswer(organizationId, '', '').gsi1pk;
    let purged = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: TABLE_INDEXES.all.indexName,
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': partition },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const listed of page.Items ?? []) {
        const key = { pk: listed.pk, sk: listed.sk };
        const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
        const body = (Item?.response as SavedResponse | undefined)?.body;
        if (body === undefined || !holds(body)) continue;
        await client.send(new DeleteCommand({ TableName: tableName, Key: key }));
        purged++;
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return purged;
  };

/** {@link IdempotencyStore.release}. */
export const release: Method<'release'> =
  ({ client, tableName }) =>
  async (scope, token) => {
    // A failed condition: the record is no longer ours (our lock lapsed and another request took it).
    await deleteIf(client, {
      TableName: tableName,
      Key: keyOf(scope),
      ConditionExpression: '#token = :token',
      ExpressionAttributeNames: { '#token': 'token' },
      ExpressionAttributeValues: { ':token': token },
    });
  };

/** Builds the DynamoDB implementation of {@link IdempotencyStore}: every method (a request's stage builds only those it calls). */
export function createIdempotencyStore(table: TableAccess): IdempotencyStore {
  return storeOf(table, { work, claim, complete, purgeAnswers, release });
}
