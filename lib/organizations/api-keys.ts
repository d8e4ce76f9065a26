/**
 * API keys in the single table (spec "Authentication"; decisions §6;
 * docs/data-model.md): the key item `APIKEY#<sha256 of the key>` stores only
 * the key's hash, its organization and when it was issued or revoked; the
 * organization item lists the hashes of its active keys
 * (`activeApiKeys`, a string set, complete from `activeApiKeysSince`),
 * written by the same transactions that issue and revoke keys.
 *
 * Why the list (issue #18): a request whose key this process knows checks
 * revocation on the organization item that describe, get and enrich read
 * anyway ({@link confirmActiveKey}), so no key item rides in their read.
 * An organization created before the list has no `activeApiKeysSince`: its
 * requests read the key item instead (one more read, the same answer).
 *
 * The one owner of API keys: the key item, the organization's list, the
 * lookup authentication wires (lib/http/auth.ts, through lib/root.ts), and
 * issuing and revoking keys. Kept apart from the organization store so an API
 * function that reads no organization bundles only this.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys } from '../db/table';
import { transactWrite, updateIf } from '../db/conditional';
import { hashApiKey, newApiKey } from '../ids';
import { NotFoundError } from '../errors';
import type { KeyCheck } from '../http/auth';

/** The API key item as stored: only the hash of the key. */
export interface ApiKeyRecord {
  /** SHA-256 hex digest of the plaintext key. */
  keyHash: string;
  organizationId: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601, once revoked. */
  revokedAt?: string;
}

/** Data access for API keys. */
export interface ApiKeyStore {
  /** Reads a key by its plaintext value (strongly consistent: a revocation shows on the very next request); `undefined` when unknown. */
  find(apiKey: string): Promise<ApiKeyRecord | undefined>;
  /** As {@link find}, by the key's SHA-256 hex digest (`hashApiKey`): what authentication, which has hashed the key already, reads. */
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Issues another key for an organization, listed among its active keys in
   * the same transaction; returns the plaintext key (shown once).
   * @throws NotFoundError for an unknown organization.
   */
  create(organizationId: string): Promise<string>;
  /**
   * Revokes a key (keeps the first revocation time) and takes it off its
   * organization's list of active keys, in one transaction: the very next
   * request with it is refused, whichever item that request checks.
   * @returns false when the key is unknown.
   */
  revoke(apiKey: string): Promise<boolean>;
}

/**
 * The attributes of a new organization item that list its first key as its
 * only active one, complete from `createdAt` (merged into the item by
 * lib/organizations/store.ts).
 * @param apiKey - the plaintext key (only its hash is stored).
 */
export function firstActiveKey(apiKey: string, createdAt: string): { activeApiKeys: Set<string>; activeApiKeysSince: string } {
  return { activeApiKeys: new Set([hashApiKey(apiKey)]), activeApiKeysSince: createdAt };
}

/**
 * The transaction item that writes a new key (conditional on the key being
 * new), for {@link ApiKeyStore.create} and the organization's first key.
 * @param apiKey - the plaintext key (only its hash is stored).
 * @param createdAt - ISO 8601.
 */
export function apiKeyPut(tableName: string, organizationId: string, apiKey: string, createdAt: string) {
  const keyHash = hashApiKey(apiKey);
  return {
    Put: {
      TableName: tableName,
      Item: { ...keys.apiKey(keyHash), type: 'apiKey', keyHash, organizationId, createdAt },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Builds the DynamoDB implementation of {@link ApiKeyStore}. */
export function createApiKeyStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): ApiKeyStore {
  const findByHash = async (keyHash: string): Promise<ApiKeyRecord | undefined> => {
    const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: keys.apiKey(keyHash), ConsistentRead: true }));
    return Item ? toApiKeyRecord(Item) : undefined;
  };
  return {
    find: (apiKey) => findByHash(hashApiKey(apiKey)),
    findByHash,

    async create(organizationId) {
      const apiKey = newApiKey();
      // The key item and its place in the organization's list, together (or neither: an unknown organization).
      const outcome = await transactWrite(client, {
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: keys.organization(organizationId),
              UpdateExpression: 'ADD activeApiKeys :hash',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':hash': new Set([hashApiKey(apiKey)]) },
            },
          },
          apiKeyPut(tableName, organizationId, apiKey, new Date().toISOString()),
        ],
      });
      if (!outcome.ok) throw new NotFoundError('organization', organizationId);
      return apiKey;
    },

    async revoke(apiKey) {
      const keyHash = hashApiKey(apiKey);
      const record = await findByHash(keyHash);
      if (!record) return false;
      const revokeItem = {
        TableName: tableName,
        Key: keys.apiKey(keyHash),
        UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
      };
      // The revocation and the key's removal from its organization's list, together: no request
      // between them finds the key revoked on one and active on the other.
      const outcome = await transactWrite(client, {
        TransactItems: [
          { Update: revokeItem },
          {
            Update: {
              TableName: tableName,
              Key: keys.organization(record.organizationId),
              UpdateExpression: 'DELETE activeApiKeys :hash',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':hash': new Set([keyHash]) },
            },
          },
        ],
      });
      if (outcome.ok) return true;
      // A key outliving its organization: no list to update (an UpdateItem would create a stub organization).
      if (outcome.failed.includes(1) && !outcome.failed.includes(0)) return (await updateIf(client, { ...revokeItem, ReturnValues: 'NONE' })).ok;
      return false;
    },
  };
}

/** Maps a stored API key item to an {@link ApiKeyRecord}. */
function toApiKeyRecord(item: Record<string, unknown>): ApiKeyRecord {
  return {
    keyHash: String(item.keyHash),
    organizationId: String(item.organizationId),
    createdAt: String(item.createdAt),
    ...(item.revokedAt ? { revokedAt: String(item.revokedAt) } : {}),
  };
}

/**
 * Verifies a request's key on the organization item the store read, strongly
 * consistent, in the request's own round trip (lib/http/auth.ts
 * {@link KeyCheck}): listed in `activeApiKeys` → verified; not listed → the
 * key was revoked. Call it before using anything the read returned.
 *
 * Leaves the check open (the pipeline, or the use case before a write, then
 * reads the key item: `KeyCheck.ensure`) when there is nothing to check
 * against: no organization item, another organization's item, one created
 * before the list (`activeApiKeysSince` absent), or a list not stored as a
 * string set.
 *
 * @param keyCheck - the request's check; none or verified: nothing to do.
 * @param organizationItem - the organization item as read (DocumentClient form), `undefined` when not found.
 * @throws RevokedApiKeyError when the list does not hold the key.
 *
 * @example
 * const found = await batchGet(client, tableName, [keys.campaign(o, c), keys.organization(o)], undefined, { consistentRead: true });
 * confirmActiveKey(keyCheck, found.find((item) => item.sk === 'ORG'));
 */
export function confirmActiveKey(keyCheck: KeyCheck | undefined, organizationItem: Record<string, unknown> | undefined): void {
  if (!keyCheck || keyCheck.verified || organizationItem?.activeApiKeysSince === undefined || organizationItem.id !== keyCheck.organizationId) return;
  // An empty string set is no attribute at all: every key of the organization was revoked.
  const active = organizationItem.activeApiKeys;
  if (active !== undefined && !(active instanceof Set)) return;
  keyCheck.confirmListed(active?.has(keyCheck.keyHash) ?? false);
}
