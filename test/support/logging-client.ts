/**
 * A DocumentClient on the test stack's DynamoDB Local whose SDK logger records the command of each call it is
 * told of: what tests of the reads that leave the SDK's logger middleware out (lib/db/sdk-logger.ts) count.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The client and, in call order, the command name of each call its logger saw (`GetItemCommand`, …). */
export function loggingClient(): { client: DynamoDBDocumentClient; logged: string[] } {
  const logged: string[] = [];
  const logger = {
    trace() {},
    debug() {},
    warn() {},
    error() {},
    info: (entry: { commandName?: string }) => logged.push(String(entry.commandName)),
  };
  const client = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, logger }));
  return { client, logged };
}
