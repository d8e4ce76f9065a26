/**
 * Gives every API key issued before key IDs (before keys/create, list, revoke and rotate:
 * docs/authentication.md) its ID and its description, so `keys/list` and `key:list` show it
 * and the audit log names it (docs/audit.md). Such a key keeps every scope and no credit limit,
 * as it had. Each key is one transaction (its item gets `keyId`, its description is written),
 * conditional on the key still having no ID, with an ID derived from the key's hash: a second
 * run changes nothing, and a run stopped midway is resumed by running it again (the keys done
 * are skipped, the others done then). Safe beside requests: a revocation meanwhile is copied by
 * the next run's read, or lands on the described key (revocation by hash then covers both).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanItems as scan } from '../db/query';
import { transactWrite } from '../db/conditional';
import { earlierKeyDescriptionItems } from '../organizations/api-keys';

/** What {@link migrateApiKeyDescriptions} changed. */
export interface ApiKeyDescriptionMigration {
  /** Keys given an ID and a description now. */
  keys: number;
}

/**
 * Runs the migration; a second run changes nothing.
 * @returns how many keys were described.
 */
export async function migrateApiKeyDescriptions({
  client,
  tableName,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
}): Promise<ApiKeyDescriptionMigration> {
  const result: ApiKeyDescriptionMigration = { keys: 0 };
  for await (const key of scan(client, tableName, '#type = :key AND attribute_not_exists(keyId)', { ':key': 'apiKey' })) {
    // Refused when another run (or a crash's earlier try) described it first: nothing left to do for it.
    const outcome = await transactWrite(client, { TransactItems: earlierKeyDescriptionItems(tableName, key) });
    if (outcome.ok) result.keys++;
  }
  return result;
}
