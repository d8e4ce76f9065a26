/**
 * Batch reads and writes of any size with DynamoDB's limits handled: 100 keys per
 * BatchGetItem, 25 requests per BatchWriteItem, calls run in parallel up to a
 * bound, each call's unprocessed keys retried with backoff (lib/db/batch-call.ts,
 * which a path that never needs more than one call imports alone).
 */
import { type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import {
  BATCH_CONCURRENCY,
  BATCH_GET_SIZE,
  BATCH_WRITE_SIZE,
  documentBatchGet,
  batchWriteCall,
  chunk,
  readUntilDone,
  type BatchWriteRequest,
} from './batch-call';

export { BATCH_CONCURRENCY, BATCH_GET_SIZE, BATCH_WRITE_SIZE, chunk };

/**
 * Reads many items by key.
 * @param keys - `{ pk, sk }` keys, any number.
 * @param projection - optional attribute names to read (always includes pk and sk).
 * @param options.consistentRead - strongly consistent reads (default eventually consistent).
 * @returns the items found, in no particular order.
 */
export async function batchGet(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
  projection?: readonly string[],
  options: { consistentRead?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  return batchGetWith(keys, documentBatchGet(client, tableName, projection, options));
}

/**
 * Reads any number of keys through `readOnce` (one BatchGetItem of at most {@link BATCH_GET_SIZE} keys, in whatever
 * encoding the caller reads): calls of {@link BATCH_GET_SIZE} keys, {@link BATCH_CONCURRENCY} at once, each call's
 * unprocessed keys retried with backoff. A handful of keys (the hot path) is one call, without the pool.
 * @returns the items found, in no particular order.
 */
export async function batchGetWith<K, T>(
  keys: readonly K[],
  readOnce: (keys: readonly K[]) => Promise<{ items: T[]; unprocessed: readonly K[] }>,
): Promise<T[]> {
  if (keys.length <= BATCH_GET_SIZE) return readUntilDone(keys, readOnce);
  const pages = await pMap(chunk(keys, BATCH_GET_SIZE), (group) => readUntilDone(group, readOnce), { concurrency: BATCH_CONCURRENCY });
  return pages.flat();
}

/** Runs many write requests (puts or deletes), 25 a call, {@link BATCH_CONCURRENCY} calls at once; unprocessed ones are retried. */
async function batchWrite(client: DynamoDBDocumentClient, tableName: string, requests: readonly BatchWriteRequest[]): Promise<void> {
  await pMap(chunk(requests, BATCH_WRITE_SIZE), (group) => batchWriteCall(client, tableName, group), { concurrency: BATCH_CONCURRENCY });
}

/** Writes (puts) many items; unprocessed items are retried. */
export async function batchPut(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: readonly Record<string, unknown>[],
): Promise<void> {
  await batchWrite(
    client,
    tableName,
    items.map((Item) => ({ PutRequest: { Item } })),
  );
}

/** Deletes many items by key; unprocessed deletes are retried. */
export async function batchDelete(
  client: DynamoDBDocumentClient,
  tableName: string,
  itemKeys: readonly Record<string, unknown>[],
): Promise<void> {
  await batchWrite(
    client,
    tableName,
    itemKeys.map((Key) => ({ DeleteRequest: { Key } })),
  );
}
