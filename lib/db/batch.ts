/**
 * Batch reads and writes with DynamoDB's limits handled: 100 keys per
 * BatchGetItem, 25 requests per BatchWriteItem, unprocessed keys retried with
 * backoff, calls run in parallel up to a bound.
 */
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import { withoutSdkLogger } from './sdk-logger';

/** Keys per BatchGetItem call (DynamoDB limit). */
export const BATCH_GET_SIZE = 100;
/** Requests per BatchWriteItem call (DynamoDB limit). */
export const BATCH_WRITE_SIZE = 25;
/** Batch calls in flight at once per operation. */
export const BATCH_CONCURRENCY = 16;

/** Splits an array into chunks of `size`. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/** Waits before retry `attempt` (exponential, capped at 2 s, jittered). */
const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(2_000, 20 * 2 ** attempt) * (0.5 + Math.random() / 2)));

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
  const names = projection ? Object.fromEntries(['pk', 'sk', ...projection].map((name, i) => [`#a${i}`, name])) : undefined;
  return batchGetWith(keys, async (pending) => {
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
  });
}

/**
 * Reads any number of keys through `readOnce` (one BatchGetItem of at most {@link BATCH_GET_SIZE} keys, in whatever
 * encoding the caller reads): calls of {@link BATCH_GET_SIZE} keys, {@link BATCH_CONCURRENCY} at once, each call's
 * unprocessed keys retried with {@link backoff}. A handful of keys (the hot path) is one call, without the pool.
 * @returns the items found, in no particular order.
 */
export async function batchGetWith<K, T>(
  keys: readonly K[],
  readOnce: (keys: readonly K[]) => Promise<{ items: T[]; unprocessed: readonly K[] }>,
): Promise<T[]> {
  const read = async (group: readonly K[]) => {
    const found: T[] = [];
    let pending = group;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) await backoff(attempt);
      const { items, unprocessed } = await readOnce(pending);
      found.push(...items);
      pending = unprocessed;
    }
    return found;
  };
  if (keys.length <= BATCH_GET_SIZE) return read(keys);
  const pages = await pMap(chunk(keys, BATCH_GET_SIZE), read, { concurrency: BATCH_CONCURRENCY });
  return pages.flat();
}

/** Runs many write requests (puts or deletes), 25 a call; unprocessed ones are retried with backoff. */
async function batchWrite(
  client: DynamoDBDocumentClient,
  tableName: string,
  requests: readonly ({ PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } })[],
): Promise<void> {
  await pMap(
    chunk(requests, BATCH_WRITE_SIZE),
    async (group) => {
      let pending = group;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 0) await backoff(attempt);
        const { UnprocessedItems } = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: [...pending] } }));
        pending = (UnprocessedItems?.[tableName] as typeof pending | undefined) ?? [];
      }
    },
    { concurrency: BATCH_CONCURRENCY },
  );
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
