/**
 * Reading a whole index partition (every page), for the walks that need all
 * of one (the reconcilers, the recency-pending set). Pages of the API use
 * bounded queries of their own instead.
 */
import { paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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
