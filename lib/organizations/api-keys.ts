/**
 * API keys in the single table (spec "Authentication"; docs/authentication.md;
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
import { hashApiKey, isTestOrganizationId, newApiKey, newTestApiKey } from '../ids';
import { NotFoundError } from '../errors';
import type { ApiKeyRecord, KeyCheck } from '../http/auth';
import { isScope, type Scope } from '../http/scopes';


/** Data access for API keys. */
export interface ApiKeyStore {
  /** Reads a key by its plaintext value (strongly consistent: a revocation shows on the very next request); `undefined` when unknown. */
  find(apiKey: string): Promise<ApiKeyRecord | undefined>;
  /** As {@link find}, by the key's SHA-256 hex digest (`hashApiKey`): what authentication, which has hashed the key already, reads. */
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Issues another key for an organization, listed among its active keys in
   * the same transaction; returns the plaintext key (shown once). A test
   * twin's keys are test keys (`cek_test_…`, docs/test-mode.md), a live
   * organization's live keys (`cek_…`): the key's shape follows its organization.
   * @param options.scopes - the key's scopes (lib/http/scopes.ts); none: every scope (what the operator's keys hold).
   * @throws NotFoundError for an unknown organization.
   */
  create(organizationId: string, options?: { scopes?: readonly Scope[] }): Promise<string>;
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
 * An organization's list of active keys as its item holds it: the hashes and
 * whether the list is complete (`activeApiKeysSince` present). A list whose
 * last key was revoked has no attribute at all (a string set is never empty):
 * no hashes. `undefined` when the attribute is not a string set.
 * @param organizationItem - the organization item as read (DocumentClient form).
 */
export function activeKeyListOf(organizationItem: Record<string, unknown>): { hashes: ReadonlySet<string>; complete: boolean } | undefined {
  const hashes = organizationItem.activeApiKeys;
  if (hashes !== undefined && !(hashes instanceof Set)) return undefined;
  return { hashes: (hashes as ReadonlySet<string> | undefined) ?? new Set<string>(), complete: organizationItem.activeApiKeysSince !== undefined };
}

/**
 * The transaction item that adds keys to an organization's list (and, with
 * `completeSince`, marks the list complete from that ISO 8601 time) or takes
 * keys off it; conditional on the organization existing (an UpdateItem would
 * otherwise create a stub organization). DynamoDB takes one action per
 * attribute in an update, so one item either adds or removes.
 * @param change.add / change.remove - key hashes.
 */
export function activeKeysUpdate(tableName: string, organizationId: string, change: { add: readonly string[]; completeSince?: string } | { remove: readonly string[] }) {
  const actions: string[] = [];
  const values: Record<string, unknown> = {};
  if ('remove' in change) {
    actions.push('DELETE activeApiKeys :hashes');
    values[':hashes'] = new Set(change.remove);
  } else {
    if (change.add.length > 0) {
      actions.push('ADD activeApiKeys :hashes');
      values[':hashes'] = new Set(change.add);
    }
    if (change.completeSince !== undefined) {
      actions.push('SET activeApiKeysSince = :since');
      values[':since'] = change.completeSince;
    }
  }
  return {
    Update: { TableName: tableName, Key: keys.organization(organizationId), UpdateExpression: actions.join(' '), ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: values },
  };
}

/** The transaction item that holds only while a key exists and is not revoked (a key may be listed only so). */
export function keyNotRevoked(tableName: string, keyHash: string) {
  return { ConditionCheck: { TableName: tableName, Key: keys.apiKey(keyHash), ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)' } };
}

/**
 * The transaction item that writes a new key (conditional on the key being
 * new), for {@link ApiKeyStore.create} and the organization's first key.
 * @param apiKey - the plaintext key (only its hash is stored).
 * @param createdAt - ISO 8601.
 * @param scopes - the key's scopes; none: every scope.
 */
export function apiKeyPut(tableName: string, organizationId: string, apiKey: string, createdAt: string, scopes?: readonly Scope[]) {
  const keyHash = hashApiKey(apiKey);
  return {
    Put: {
      TableName: tableName,
      // No `scopes`: every scope (a string set is never empty; keys.create refuses an empty list).
      Item: { ...keys.apiKey(keyHash), type: 'apiKey', keyHash, organizationId, createdAt, ...(scopes ? { scopes: [...scopes] } : {}) },
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

    async create(organizationId, options = {}) {
      const apiKey = isTestOrganizationId(organizationId) ? newTestApiKey() : newApiKey();
      // The key item and its place in the organization's list, together (or neither: an unknown organization).
      const outcome = await transactWrite(client, {
        TransactItems: [activeKeysUpdate(tableName, organizationId, { add: [hashApiKey(apiKey)] }), apiKeyPut(tableName, organizationId, apiKey, new Date().toISOString(), options.scopes)],
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
        TransactItems: [{ Update: revokeItem }, activeKeysUpdate(tableName, record.organizationId, { remove: [keyHash] })],
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
    ...(item.scopes instanceof Set || Array.isArray(item.scopes) ? { scopes: [...(item.scopes as Iterable<unknown>)].filter(isScope) } : {}),
    ...(item.expiresAt ? { expiresAt: String(item.expiresAt) } : {}),
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
  if (!keyCheck || keyCheck.verified || !organizationItem || organizationItem.id !== keyCheck.organizationId) return;
  const list = activeKeyListOf(organizationItem);
  if (!list?.complete) return;
  keyCheck.confirmListed(list.hashes.has(keyCheck.keyHash));
}
