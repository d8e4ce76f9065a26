/**
 * Brings every organization's list of active API keys (issue #18;
 * lib/organizations/api-keys.ts) in line with its key items: organizations
 * stored before the list get it (`activeApiKeys`, `activeApiKeysSince`),
 * after which describe, get and enrich check revocation on the organization
 * item instead of reading the key item; and a list that a key written by an
 * older version of the code left wrong is repaired (a key revoked without
 * being taken off the list, or issued without being added). Idempotent:
 * `npm start` runs it on its data folder, operators with
 * `npm run ops -- keys:migrate` (after a deploy that follows a rollback, too).
 *
 * Safe beside requests and beside this version's `key:create` and
 * `key:revoke`: a revoked key is taken off (revocation never reverses); a
 * key is listed with ADD (a key issued meanwhile adds itself the same way,
 * neither overwrites the other) and only if it is still not revoked in the
 * same transaction (ConditionCheck): a revocation that lands first makes the
 * organization's transaction fail and be done again from fresh reads.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanItems as scan } from '../db/query';
import { keys } from '../db/table';
import { batchGet } from '../db/batch';
import { transactWrite } from '../db/conditional';

/** What {@link migrateApiKeyLists} changed. */
export interface ApiKeyListMigration {
  /** Organizations whose list was written or repaired. */
  organizations: number;
  /** Active keys added to a list. */
  keys: number;
  /** Revoked keys taken off a list. */
  removed: number;
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
  const result: ApiKeyListMigration = { organizations: 0, keys: 0, removed: 0 };
  const hashesOf = new Map<string, string[]>();
  for await (const organization of scan(client, tableName, '#type = :organization', { ':organization': 'organization' })) hashesOf.set(String(organization.id), []);
  for await (const key of scan(client, tableName, '#type = :key', { ':key': 'apiKey' })) hashesOf.get(String(key.organizationId))?.push(String(key.keyHash));

  const update = (organizationId: string, expression: string, values: Record<string, unknown>, condition = 'attribute_exists(pk)') => ({
    Update: { TableName: tableName, Key: keys.organization(organizationId), UpdateExpression: expression, ConditionExpression: condition, ExpressionAttributeValues: values },
  });

  for (const [organizationId, hashes] of hashesOf) {
    let changed = false;
    for (let attempt = 1; ; attempt++) {
      // Fresh reads each attempt: the organization's list, and which of its keys are revoked now.
      const { Item: organization } = await client.send(new GetCommand({ TableName: tableName, Key: keys.organization(organizationId), ConsistentRead: true }));
      if (!organization) break;
      const listed = (organization.activeApiKeys as ReadonlySet<string> | undefined) ?? new Set<string>();
      const complete = organization.activeApiKeysSince !== undefined;
      const items = hashes.length > 0 ? await batchGet(client, tableName, hashes.map((hash) => keys.apiKey(hash)), undefined, { consistentRead: true }) : [];
      const revoked = items.filter((item) => item.revokedAt !== undefined).map((item) => String(item.keyHash)).filter((hash) => listed.has(hash));
      const missing = items.filter((item) => item.revokedAt === undefined).map((item) => String(item.keyHash)).filter((hash) => !listed.has(hash));
      if (complete && revoked.length === 0 && missing.length === 0) {
        if (changed) result.organizations++;
        break;
      }

      // Off the list first: a revocation is final, so this needs no condition on the key items.
      if (revoked.length > 0) {
        const outcome = await transactWrite(client, { TransactItems: [update(organizationId, 'DELETE activeApiKeys :hashes', { ':hashes': new Set(revoked) })] });
        if (!outcome.ok) break; // the organization is gone
        result.removed += revoked.length;
        changed = true;
      }
      const chunks: string[][] = [];
      for (let i = 0; i < missing.length; i += KEYS_PER_TRANSACTION) chunks.push(missing.slice(i, i + KEYS_PER_TRANSACTION));
      if (chunks.length === 0) chunks.push([]);
      let written = true;
      for (const [index, chunk] of chunks.entries()) {
        // The list counts as complete only with its last keys added.
        const markComplete = index === chunks.length - 1 && !complete;
        const parts = [...(chunk.length > 0 ? ['ADD activeApiKeys :hashes'] : []), ...(markComplete ? ['SET activeApiKeysSince = :since'] : [])];
        if (parts.length === 0) continue;
        const outcome = await transactWrite(client, {
          TransactItems: [
            update(organizationId, parts.join(' '), { ...(chunk.length > 0 ? { ':hashes': new Set(chunk) } : {}), ...(markComplete ? { ':since': new Date().toISOString() } : {}) }),
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
        result.keys += missing.length;
        break;
      }
      if (attempt >= MAX_ATTEMPTS) throw new Error(`Organization ${organizationId} changed while its API keys were listed; run the migration again`);
    }
  }
  return result;
}
