/**
 * Brings every organization's list of active API keys (issue #18;
 * lib/organizations/api-keys.ts) in line with its key items: organizations
 * stored before the list get it (`activeApiKeys`, `activeApiKeysSince`),
 * after which describe, get and enrich check revocation on the organization
 * item instead of reading the key item; and a list that a key written by an
 * older version of the code left wrong is repaired (a key revoked without
 * being taken off the list, or issued without being added). Idempotent:
 * `npm start` runs it on its data folder, operators with
 * `npx ops migrate` (after a deploy that follows a rollback, too).
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
import * as keys from '../db/keys';
import { batchGet } from '../db/batch';
import { transactWrite } from '../db/conditional';
import { activeKeyListOf, activeKeysUpdate, keyNotRevoked } from '../organizations/api-keys';

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
export async function migrateApiKeyLists({
  client,
  tableName,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
}): Promise<ApiKeyListMigration> {
  const result: ApiKeyListMigration = { organizations: 0, keys: 0, removed: 0 };
  // The organization items as the (consistent) scan read them, and the hashes of each one's keys.
  const organizations = new Map<string, { item: Record<string, unknown>; hashes: string[] }>();
  for await (const item of scan(client, tableName, '#type = :organization', { ':organization': 'organization' }))
    organizations.set(String(item.id), { item, hashes: [] });
  for await (const key of scan(client, tableName, '#type = :key', { ':key': 'apiKey' }))
    organizations.get(String(key.organizationId))?.hashes.push(String(key.keyHash));

  for (const [organizationId, { item: scanned, hashes }] of organizations) {
    let changed = false;
    for (let attempt = 1; ; attempt++) {
      // The scan's item first; after a failed transaction, fresh reads: the organization's list, and which of its keys are revoked now.
      const organization =
        attempt === 1
          ? scanned
          : (await client.send(new GetCommand({ TableName: tableName, Key: keys.organization(organizationId), ConsistentRead: true })))
              .Item;
      if (!organization) break;
      // A list not stored as a string set is rewritten from the key items.
      const { hashes: listed, complete } = activeKeyListOf(organization) ?? { hashes: new Set<string>(), complete: false };
      const items =
        hashes.length > 0
          ? await batchGet(
              client,
              tableName,
              hashes.map((hash) => keys.apiKey(hash)),
              undefined,
              { consistentRead: true },
            )
          : [];
      const revoked = items
        .filter((item) => item.revokedAt !== undefined)
        .map((item) => String(item.keyHash))
        .filter((hash) => listed.has(hash));
      const missing = items
        .filter((item) => item.revokedAt === undefined)
        .map((item) => String(item.keyHash))
        .filter((hash) => !listed.has(hash));
      if (complete && revoked.length === 0 && missing.length === 0) {
        if (changed) result.organizations++;
        break;
      }

      // Off the list first: a revocation is final, so this needs no condition on the key items.
      if (revoked.length > 0) {
        const outcome = await transactWrite(client, { TransactItems: [activeKeysUpdate(tableName, organizationId, { remove: revoked })] });
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
        if (chunk.length === 0 && !markComplete) continue;
        const outcome = await transactWrite(client, {
          TransactItems: [
            activeKeysUpdate(tableName, organizationId, {
              add: chunk,
              ...(markComplete ? { completeSince: new Date().toISOString() } : {}),
            }),
            ...chunk.map((hash) => keyNotRevoked(tableName, hash)),
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
      if (attempt >= MAX_ATTEMPTS)
        throw new Error(`Organization ${organizationId} changed while its API keys were listed; run the migration again`);
    }
  }
  return result;
}
