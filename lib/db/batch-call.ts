/**
 * One BatchGetItem or one BatchWriteItem, with its unprocessed keys or requests
 * retried with backoff until none is left: what a path that never needs more
 * than one call (a page of at most {@link BATCH_GET_SIZE} items, a flush of at
 * most {@link BATCH_WRITE_SIZE} writes) runs. Many calls at once, split and run
 * in parallel up to a bound, are `lib/db/batch.ts`, built on these; keeping the
 * single call in a module of its own keeps its callers' bundles free of the
 * concurrent-call code (docs/deploy.md "Prerequisites": a bundle carries what its function runs).
 */
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { withoutSdkLogger } from './sdk-logger';

/** Keys per BatchGetItem call (DynamoDB limit). */
export const BATCH_GET_SIZE = 100;
/** Requests per BatchWriteItem call (DynamoDB limit). */
export const BATCH_WRITE_SIZE = 25;

/** A write request of a BatchWriteItem call. */
export type BatchWriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

/** Waits before retry `attempt` (exponential, capped at 2 s, jittered). */
const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(2_000, 20 * 2 ** attempt) * (0.5 + Math.random() / 2)));

/**
 * Reads `keys` through `readOnce` (one BatchGetItem, in whatever encoding the caller reads), the keys it leaves
 * unprocessed read again with backoff until none is left.
 * @param keys - at most {@link BATCH_GET_SIZE}.
 * @returns the items found, in no particular order.
 * @throws RangeError when given more than {@link BATCH_GET_SIZE} keys (`batchGetWith` of lib/db/batch.ts splits them).
 */
export async function readUntilDone<K, T>(
  keys: readonly K[],
  readOnce: (keys: readonly K[]) => Promise<{ items: T[]; unprocessed: readonly K[] }>,
): Promise<T[]> {
  if (keys.length > BATCH_GET_SIZE) throw new RangeError(`One BatchGetItem reads at most ${BATCH_GET_SIZE} keys (got ${keys.length})`);
  const found: T[] = [];
  let pending = keys;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 0) await backoff(attempt);
    const { items, unprocessed } = await readOnce(pending);
    found.push(...items);
    pending = unprocessed;
  }
  return found;
}

/**
 * One BatchGetItem of `{ pk, sk }` keys through the DocumentClient, as {@link readUntilDone} (and `batchGetWith` of
 * lib/db/batch.ts) take it: the items it returned and the keys it left unprocessed.
 * @param projection - optional attribute names to read (always includes pk and sk).
 * @param options.consistentRead - strongly consistent reads (default eventually consistent).
 */
export function documentBatchGet(
  client: DynamoDBDocumentClient,
  tableName: string,
  projection?: readonly string[],
  options: { consistentRead?: boolean } = {},
): (keys: readonly Record<string, unknown>[]) => Promise<{ items: Record<string, unknown>[]; unprocessed: Record<string, unknown>[] }> {
  const names = projection ? Object.fromEntries(['pk', 'sk', ...projection].map((name, i) => [`#a${i}`, name])) : undefined;
  return async (pending) => {
    const { Responses, UnprocessedKeys } = await client.send(
      withoutSdkLogger(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: [...pending],
              ...(options.consistentRead ? { ConsistentRead: true } : {}),
              ...(names ? { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names } : {}),
            },
          },
        }),
      ),
    );
    return {
      items: Responses?.[tableName] ?? [],
      unprocessed: (UnprocessedKeys?.[tableName]?.Keys as Record<string, unknown>[] | undefined) ?? [],
    };
  };
}

/**
 * Reads at most {@link BATCH_GET_SIZE} items by key in one BatchGetItem (its unprocessed keys read again).
 * @param keys - `{ pk, sk }` keys, at most {@link BATCH_GET_SIZE}.
 * @param projection - optional attribute names to read (always includes pk and sk).
 * @param options.consistentRead - strongly consistent reads (default eventually consistent).
 * @returns the items found, in no particular order.
 * @throws RangeError when given more than {@link BATCH_GET_SIZE} keys (`batchGet` of lib/db/batch.ts reads any number).
 */
export const batchGetCall = (
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
  projection?: readonly string[],
  options: { consistentRead?: boolean } = {},
): Promise<Record<string, unknown>[]> => readUntilDone(keys, documentBatchGet(client, tableName, projection, options));

/** Batch calls in flight at once per operation: the bound of `lib/db/batch.ts`'s pool, and the most {@link batchGetAtOnce} starts. */
export const BATCH_CONCURRENCY = 16;

/** Splits an array into chunks of `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * Reads a bounded number of items by key, a page's: one {@link batchGetCall} per {@link BATCH_GET_SIZE} keys, all
 * at once. A page of at most {@link BATCH_GET_SIZE} × {@link BATCH_CONCURRENCY} keys never has more calls in flight
 * than `batchGet` of lib/db/batch.ts, which reads any number through a pool.
 * @param keys - `{ pk, sk }` keys, at most {@link BATCH_GET_SIZE} × {@link BATCH_CONCURRENCY}.
 * @returns the items found, in no particular order.
 * @throws RangeError when given more keys than that (`batchGet` of lib/db/batch.ts reads any number).
 */
export async function batchGetAtOnce(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
  projection?: readonly string[],
  options: { consistentRead?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  if (keys.length > BATCH_GET_SIZE * BATCH_CONCURRENCY)
    throw new RangeError(`batchGetAtOnce reads at most ${BATCH_GET_SIZE * BATCH_CONCURRENCY} keys (got ${keys.length})`);
  const readOnce = documentBatchGet(client, tableName, projection, options);
  const pages = await Promise.all(chunk(keys, BATCH_GET_SIZE).map((group) => readUntilDone(group, readOnce)));
  return pages.flat();
}

/**
 * Runs at most {@link BATCH_WRITE_SIZE} write requests (puts or deletes) in one BatchWriteItem, its unprocessed
 * requests retried with backoff until none is left.
 * @throws RangeError when given more than {@link BATCH_WRITE_SIZE} requests (lib/db/batch.ts writes any number).
 */
export async function batchWriteCall(
  client: DynamoDBDocumentClient,
  tableName: string,
  requests: readonly BatchWriteRequest[],
): Promise<void> {
  if (requests.length > BATCH_WRITE_SIZE)
    throw new RangeError(`One BatchWriteItem takes at most ${BATCH_WRITE_SIZE} requests (got ${requests.length})`);
  let pending = requests;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 0) await backoff(attempt);
    const { UnprocessedItems } = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: [...pending] } }));
    pending = (UnprocessedItems?.[tableName] as BatchWriteRequest[] | undefined) ?? [];
  }
}
