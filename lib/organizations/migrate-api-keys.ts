/**
 * One-off migration of organizations stored before they listed their active
 * API keys (issue #18; lib/organizations/api-keys.ts): each gets
 * `activeApiKeys` (the hashes of its keys not revoked) and
 * `activeApiKeysSince`, after which describe, get and enrich check
 * revocation on the organization item instead of reading the key item.
 * Idempotent, and safe beside a running stack: `npm start` runs it on its
 * data folder, operators with `npm run ops -- keys:migrate`.
 *
 * Safe against keys issued or revoked meanwhile: a key issued since the scan
 * is added to the list by its own transaction (ADD, which this migration
 * also uses, so neither overwrites the other); every key this migration lists
 * is checked not revoked in the same transaction (ConditionCheck), and a
 * revocation that lands first makes the organization's transaction fail and
 * be done again from fresh reads.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanItems as scan } from '../db/query';
import { keys } from '../db/table';
import { batchGet } from '../db/batch';
import { transactWrite } from '../db/conditional';

/** What {@link migrateApiKeyLists} changed. */
export interface ApiKeyListMigration {
  /** Organizations that got their list. */
  organizations: number;
  /** Active keys listed. */
  keys: number;
}

/** Keys listed per transaction: TransactWriteItems takes 100 items, one is the organization's update. */
const KEYS_PER_TRANSACTION = 99;
/** Attempts per organization when keys are revoked while it is migrated. */
const MAX_ATTEMPTS = 5;

/**
 * Runs the migration; a second run changes nothing.
 * @throws Error naming the organization when its keys kept being revoked through {@link MAX_ATTEMPTS} attempts (run it again).
 */
export async function migrateApiKeyLists({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): Promise<ApiKeyListMigration> {
  const result: ApiKeyListMigration = { organizations: 0, keys: 0 };
  const organizations: string[] = [];
  for await (const organization of scan(client, tableName, '#type = :organization AND attribute_not_exists(activeApiKeysSince)', { ':organization': 'organization' })) {
    organizations.push(String(organization.id));
  }
  if (organizations.length === 0) return result;
  const hashesOf = new Map<string, string[]>(organizations.map((id) => [id, []]));
  for await (const key of scan(client, tableName, '#type = :key', { ':key': 'apiKey' })) hashesOf.get(String(key.organizationId))?.push(String(key.keyHash));

  for (const organizationId of organizations) {
    const hashes = hashesOf.get(organizationId)!;
    for (let attempt = 1; ; attempt++) {
      // Fresh reads each attempt: the keys not revoked now.
      const items = hashes.length > 0 ? await batchGet(client, tableName, hashes.map((hash) => keys.apiKey(hash)), undefined, { consistentRead: true }) : [];
      const active = items.filter((item) => item.revokedAt === undefined).map((item) => String(item.keyHash));
      const chunks: string[][] = [];
      for (let i = 0; i < active.length; i += KEYS_PER_TRANSACTION) chunks.push(active.slice(i, i + KEYS_PER_TRANSACTION));
      if (chunks.length === 0) chunks.push([]);
      let written = true;
      for (const [index, chunk] of chunks.entries()) {
        const last = index === chunks.length - 1;
        const set = [...(chunk.length > 0 ? ['ADD activeApiKeys :hashes'] : []), ...(last ? ['SET activeApiKeysSince = :since'] : [])];
        if (set.length === 0) continue;
        const outcome = await transactWrite(client, {
          TransactItems: [
            {
              Update: {
                TableName: tableName,
                Key: keys.organization(organizationId),
                UpdateExpression: set.join(' '),
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(activeApiKeysSince)',
                ExpressionAttributeValues: { ...(chunk.length > 0 ? { ':hashes': new Set(chunk) } : {}), ...(last ? { ':since': new Date().toISOString() } : {}) },
              },
            },
            ...chunk.map((hash) => ({ ConditionCheck: { TableName: tableName, Key: keys.apiKey(hash), ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)' } })),
          ],
        });
        if (!outcome.ok) {
          written = false;
          break;
        }
      }
      if (written) {
        result.organizations++;
        result.keys += active.length;
        break;
      }
      // Another run listed it meanwhile, or the organization is gone: nothing left to do.
      const { Item: current } = await client.send(new GetCommand({ TableName: tableName, Key: keys.organization(organizationId), ConsistentRead: true }));
      if (!current || current.activeApiKeysSince !== undefined) break;
      if (attempt >= MAX_ATTEMPTS) throw new Error(`Organization ${organizationId} changed while its API keys were listed; run the migration again`);
    }
  }
  return result;
}
