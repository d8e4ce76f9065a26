/**
 * Creates the single table (from the same {@link TABLE_DEFINITION} the CDK
 * stack uses) and the bucket on the local endpoints, when missing.
 */
import { CreateTableCommand, paginateListTables, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { TABLE_DEFINITION } from '../../lib/db/table';

/**
 * Whether the table exists, by ListTables: DynamoDB Local answers
 * DescribeTable by counting the table's items (ItemCount), a walk of the
 * whole table (seconds at 100,000 items), which a start must not make
 * (README.md#set-up).
 */
export async function tableExists(client: DynamoDBClient, tableName: string): Promise<boolean> {
  for await (const page of paginateListTables({ client }, {})) if (page.TableNames?.includes(tableName)) return true;
  return false;
}

/** Creates the table if it does not exist yet. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  if (await tableExists(client, tableName)) return;
  const keyAttributes = new Set<string>([TABLE_DEFINITION.partitionKey, TABLE_DEFINITION.sortKey]);
  for (const index of TABLE_DEFINITION.indexes) keyAttributes.add(index.partitionKey).add(index.sortKey);
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...keyAttributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: TABLE_DEFINITION.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_DEFINITION.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: TABLE_DEFINITION.indexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: index.projectedAttributes },
      })),
    }),
  );
}

/**
 * Creates the bucket if it does not exist yet. s3rver creates its configured
 * buckets at start, so a HeadBucket that failed for another reason (the
 * endpoint still settling after a restart on a loaded machine) can meet
 * "already exists": that is success.
 */
export async function ensureBucket(client: S3Client, bucketName: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucketName }));
  } catch {
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucketName }));
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name !== 'BucketAlreadyExists' && name !== 'BucketAlreadyOwnedByYou') throw error;
    }
  }
}
