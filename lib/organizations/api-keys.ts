/**
 * API keys in the single table (spec "Authentication"; decisions §6;
 * docs/data-model.md): the key item `APIKEY#<sha256 of the key>` stores only
 * the key's hash, its organization and when it was issued or revoked.
 *
 * The one owner of the key item: the lookup authentication wires
 * (lib/http/auth.ts, through lib/root.ts), the key read a store adds to its
 * own BatchGetItem ({@link apiKeyRead}), and issuing and revoking keys.
 * Kept apart from the organization store so an API function that reads no
 * organization bundles only this.
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
   * Issues another key for an organization; returns the plaintext key (shown once).
   * @throws NotFoundError for an unknown organization.
   */
  create(organizationId: string): Promise<string>;
  /** Revokes a key (keeps the first revocation time). @returns false when the key is unknown. */
  revoke(apiKey: string): Promise<boolean>;
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
      const outcome = await transactWrite(client, {
        TransactItems: [
          { ConditionCheck: { TableName: tableName, Key: keys.organization(organizationId), ConditionExpression: 'attribute_exists(pk)' } },
          apiKeyPut(tableName, organizationId, apiKey, new Date().toISOString()),
        ],
      });
      if (!outcome.ok) throw new NotFoundError('organization', organizationId);
      return apiKey;
    },

    async revoke(apiKey) {
      const outcome = await updateIf(client, {
        TableName: tableName,
        Key: keys.apiKey(hashApiKey(apiKey)),
        UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
        ReturnValues: 'NONE',
      });
      return outcome.ok;
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
 * The API-key item a store reads in the same BatchGetItem as its data, for a
 * request whose key is not verified yet (lib/http/auth.ts {@link KeyCheck}).
 * The read must be strongly consistent, so a revocation shows on the very
 * next request.
 *
 * @param keyCheck - the request's check; none or verified: nothing to read.
 * @returns `keys`: the key item's Key to add to the batch (empty when nothing
 *   to read); `confirm(found)`: verifies the key item among the batch's items —
 *   call it before using anything the batch returned.
 * @throws (from `confirm`) InvalidApiKeyError when the key item is missing, RevokedApiKeyError when revoked.
 *
 * @example
 * const key = apiKeyRead(keyCheck);
 * const found = await batchGet(client, tableName, [keys.campaign(o, c), ...key.keys], undefined, { consistentRead: true });
 * key.confirm(found);
 */
export function apiKeyRead(keyCheck: KeyCheck | undefined): { keys: { pk: string; sk: string }[]; confirm(found: readonly Record<string, unknown>[]): void } {
  if (!keyCheck || keyCheck.verified) return { keys: [], confirm: () => undefined };
  const key = keys.apiKey(keyCheck.keyHash);
  return {
    keys: [key],
    confirm(found) {
      const item = found.find((candidate) => candidate.pk === key.pk && candidate.sk === key.sk);
      keyCheck.confirm(item ? toApiKeyRecord(item) : undefined);
    },
  };
}
