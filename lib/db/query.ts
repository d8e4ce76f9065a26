/**
 * Reading a whole index partition (every page), for the walks that need all
 * of one (the reconcilers, the recency-pending set), and the whole table
 * through a filter, for the one-off migrations. Pages of the API use bounded
 * queries of their own instead.
 */
import { paginateQuery, paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { IndexDefinition } from './table';

/**
 * Every item of one partition of an index, in index order.
 * @param projection - attribute names to read (default: what the index projects).
 */
export async function queryPartition(
  client: DynamoDBDocumentClient,
  tableName: string,
  index: IndexDefinition,
  partitionKey: string,
  projection?: readonly string[],
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const names: Record<string, string> = { '#pk': index.partitionKey };
  projection?.forEach((attribute, i) => (names[`#p${i}`] = attribute));
  const pages = paginateQuery(
    { client },
    {
      TableName: tableName,
      IndexName: index.indexName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': partitionKey },
      ...(projection ? { ProjectionExpression: projection.map((_, i) => `#p${i}`).join(', ') } : {}),
    },
  );
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
}

/**
 * Every item of the table that `filter` keeps, page by page (Scan, strongly
 * consistent): for the one-off migrations only, never a request's path.
 * @param filter - a FilterExpression; `#type` names the items' `type` attribute.
 * @param values - its ExpressionAttributeValues.
 */
export async function* scanItems(
  client: DynamoDBDocumentClient,
  tableName: string,
  filter: string,
  values: Record<string, unknown>,
): AsyncGenerator<Record<string, unknown>> {
  const pages = paginateScan(
    { client },
    {
      TableName: tableName,
      FilterExpression: filter,
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: values,
      ConsistentRead: true,
    },
  );
  for await (const page of pages) yield* page.Items ?? [];
}
