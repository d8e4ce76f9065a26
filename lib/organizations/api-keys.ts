/**
 * API keys in the single table (docs/authentication.md;
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
import { GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StoreMethod } from '../db/methods';
import * as keys from '../db/keys';
import { withoutSdkLogger } from '../db/sdk-logger';
import { transactWrite, updateIf, type TransactItem } from '../db/conditional';
import { derivedId, hashApiKey, isTestOrganizationId, newApiKey, newApiKeyId, newTestApiKey } from '../ids';
import { InvalidRequestError, NotFoundError } from '../errors';
import type { ApiKeyRecord, KeyCheck, KeyCreditLimits } from '../http/auth';
import { SCOPES, type Scope } from '../http/scopes';

/** How long the old secret of a rotated key keeps working: 24 h (docs/authentication.md "Rotating a key"). */
export const ROTATION_OVERLAP_SECONDS = 86_400;

/** Characters of a secret a key shows as its `prefix` (enough to recognize it, far too few to use it). */
export const KEY_PREFIX_LENGTH = 12;

/** A key's own credit limits, in credits; null: none (docs/authentication.md#per-key-credit-limits). Owned by authentication, which hands them to the launch. */
export type KeyLimits = KeyCreditLimits;

/** An API key as the API shows it (`keys/*`): never its secret. Times ISO 8601. */
export interface ApiKeyView {
  /** `key_…`: the key across rotations. */
  id: string;
  name: string;
  /** The first {@link KEY_PREFIX_LENGTH} characters of its current secret. */
  prefix: string;
  scopes: Scope[];
  limits: KeyLimits;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Whether it is a test key (`cek_test_…`, acting on the test twin). */
  test: boolean;
}

/** What a new key is given (keys/create, the operator's key:create). */
export interface NewKeyDetails {
  /** 1..100 characters; the operator's keys default to `Operator key`. */
  name?: string;
  /** none: every scope (what the operator's keys hold). */
  scopes?: readonly Scope[];
  limits?: Partial<KeyLimits>;
  /** ISO 8601; none: the key does not expire. */
  expiresAt?: string;
}

/** One page of an organization's keys, by key ID. */
export interface ApiKeyPage {
  keys: ApiKeyView[];
  /** The last key ID of the page, when more follow. */
  next: string | undefined;
}

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
  create(organizationId: string, options?: { scopes?: readonly Scope[]; alsoPut?: readonly TransactItem[] }): Promise<string>;
  /**
   * Revokes a key (keeps the first revocation time) and takes it off its
   * organization's list of active keys, in one transaction: the very next
   * request with it is refused, whichever item that request checks.
   * @param auditOf - the revocation's audit entry (docs/audit.md) for the key's organization, written in its transaction.
   * @returns false when the key is unknown.
   */
  revoke(apiKey: string, auditOf?: (organizationId: string) => TransactItem): Promise<boolean>;
  /**
   * Issues a key with its details (keys/create): its description and its
   * secret's item, listed among the organization's active keys, in one transaction.
   * @param now - the clock (tests move it).
   * @param alsoPut - items written in the same transaction (the request's audit entry, docs/audit.md).
   * @returns the key as shown, and its secret (shown this once).
   * @throws NotFoundError for an unknown organization.
   */
  issue(
    organizationId: string,
    details: NewKeyDetails,
    now?: Date,
    alsoPut?: readonly TransactItem[],
  ): Promise<{ key: ApiKeyView; secret: string }>;
  /**
   * A page of the organization's keys, by key ID (one Query of `limit + 1` items).
   * @param after - the key ID the previous page ended with.
   */
  page(organizationId: string, limit: number, after?: string): Promise<ApiKeyPage>;
  /**
   * Revokes a key by its ID: every secret it has (the current one and a rotated one still in its
   * overlap), in one transaction; a key revoked already is answered as it is.
   * @param alsoPut - items written in the revocation's transaction (its audit entry, docs/audit.md).
   * @returns the key as it is now, `undefined` when the organization has no such key.
   */
  revokeById(organizationId: string, keyId: string, now?: Date, alsoPut?: readonly TransactItem[]): Promise<ApiKeyView | undefined>;
  /**
   * Gives a key a new secret; the old one keeps working {@link ROTATION_OVERLAP_SECONDS} from `now`
   * (never past the key's own `expiresAt`); an older secret still in its overlap stops at once.
   * @param alsoPut - items written in the rotation's transaction (its audit entry, docs/audit.md).
   * @param allow - called with the key as stored, before anything is written; what it throws stops the rotation.
   * @returns the key with its new prefix, and the new secret (shown this once).
   * @throws NotFoundError when the organization has no such key.
   * @throws InvalidRequestError when the key is revoked.
   */
  rotate(
    organizationId: string,
    keyId: string,
    now?: Date,
    alsoPut?: readonly TransactItem[],
    allow?: (key: ApiKeyView) => void,
  ): Promise<{ key: ApiKeyView; secret: string }>;
}

/** A stored key description as the API shows it. */
function toApiKeyView(item: Record<string, unknown>): ApiKeyView {
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    id: String(item.keyId),
    name: String(item.name),
    prefix: String(item.prefix),
    scopes: storedScopes(item.scopes) ?? [...SCOPES],
    limits: storedLimits(item),
    createdAt: String(item.createdAt),
    expiresAt: text(item.expiresAt),
    lastUsedAt: text(item.lastUsedAt),
    revokedAt: text(item.revokedAt),
    test: isTestOrganizationId(String(item.organizationId)),
  };
}

/** A stored key item's credit limits (null: none). */
function storedLimits(item: Record<string, unknown>): KeyLimits {
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  return { maxCreditsPerLaunch: number(item.maxCreditsPerLaunch), monthlyCredits: number(item.monthlyCredits) };
}

/** Scopes as stored (a list), in the order of {@link SCOPES}; `undefined` when none are stored (every scope). */
function storedScopes(value: unknown): Scope[] | undefined {
  if (!(value instanceof Set) && !Array.isArray(value)) return undefined;
  const held = new Set([...(value as Iterable<unknown>)]);
  return SCOPES.filter((scope) => held.has(scope));
}

/**
 * The two items a new key writes, for one transaction: its secret's item
 * (what authentication reads: `keys.apiKey`) and its description (what
 * keys/list shows: `keys.apiKeyDescription`). Both conditional on being new.
 * @param apiKey - the plaintext secret (only its hash and first {@link KEY_PREFIX_LENGTH} characters are stored).
 * @param createdAt - ISO 8601.
 */
export function issuedKeyItems(
  tableName: string,
  organizationId: string,
  apiKey: string,
  createdAt: string,
  details: NewKeyDetails = {},
  keyId = newApiKeyId(),
) {
  const keyHash = hashApiKey(apiKey);
  const scopes = details.scopes ? { scopes: SCOPES.filter((scope) => details.scopes!.includes(scope)) } : {};
  const expiresAt = details.expiresAt ? { expiresAt: details.expiresAt } : {};
  const limits = {
    ...(details.limits?.maxCreditsPerLaunch != null ? { maxCreditsPerLaunch: details.limits.maxCreditsPerLaunch } : {}),
    ...(details.limits?.monthlyCredits != null ? { monthlyCredits: details.limits.monthlyCredits } : {}),
  };
  return [
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.apiKey(keyHash), type: 'apiKey', keyHash, organizationId, createdAt, keyId, ...scopes, ...expiresAt, ...limits },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    descriptionPut(tableName, {
      organizationId,
      keyId,
      name: details.name ?? OPERATOR_KEY_NAME,
      prefix: apiKey.slice(0, KEY_PREFIX_LENGTH),
      createdAt,
      currentHash: keyHash,
      ...scopes,
      ...expiresAt,
      ...limits,
    }),
  ] as const;
}

/** A key description's Put (what keys/list shows: `keys.apiKeyDescription`), conditional on being new. */
const descriptionPut = (
  tableName: string,
  description: { organizationId: string; keyId: string; name: string; prefix: string; createdAt: string; currentHash: string } & Record<
    string,
    unknown
  >,
) => ({
  Put: {
    TableName: tableName,
    Item: { ...keys.apiKeyDescription(description.organizationId, description.keyId), type: 'apiKeyDescription', ...description },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** The name keys/list shows for a key issued before key IDs (described by migration 006). */
export const EARLIER_KEY_NAME = 'Key from before key IDs';

/**
 * The two writes that give a key issued before key IDs its ID and its description, so keys/list
 * shows it (lib/migrations/api-key-descriptions.ts), for one transaction: the key item gets its
 * `keyId` (only if it still has none), the description is written (only if new). The ID is derived
 * from the key's hash, so a second run, or a run resumed after a crash, writes the same key. The
 * secret is not known (only its hash is stored): the description's `prefix` is the secret's kind
 * (`cek_` or `cek_test_`). No scopes are stored: the key keeps every scope (docs/authentication.md).
 * @param keyItem - the key item as stored (DocumentClient form), without `keyId`.
 */
export function earlierKeyDescriptionItems(tableName: string, keyItem: Record<string, unknown>): TransactItem[] {
  const keyHash = String(keyItem.keyHash);
  const organizationId = String(keyItem.organizationId);
  const keyId = derivedId('key', keyHash);
  const copied = Object.fromEntries(
    ['revokedAt', 'expiresAt', 'maxCreditsPerLaunch', 'monthlyCredits'].flatMap((field) =>
      keyItem[field] === undefined ? [] : [[field, keyItem[field]]],
    ),
  );
  return [
    {
      Update: {
        TableName: tableName,
        Key: keys.apiKey(keyHash),
        UpdateExpression: 'SET keyId = :keyId',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(keyId)',
        ExpressionAttributeValues: { ':keyId': keyId },
      },
    },
    descriptionPut(tableName, {
      organizationId,
      keyId,
      name: EARLIER_KEY_NAME,
      prefix: isTestOrganizationId(organizationId) ? 'cek_test_' : 'cek_',
      createdAt: String(keyItem.createdAt),
      currentHash: keyHash,
      ...copied,
    }),
  ];
}

/** The limit attributes of a stored key item (copied onto a rotated key's new secret). */
const limitsOf = (item: Record<string, unknown>) => ({
  ...(typeof item.maxCreditsPerLaunch === 'number' ? { maxCreditsPerLaunch: item.maxCreditsPerLaunch } : {}),
  ...(typeof item.monthlyCredits === 'number' ? { monthlyCredits: item.monthlyCredits } : {}),
});

/** The name of a key the operator makes without one. */
export const OPERATOR_KEY_NAME = 'Operator key';

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
  return {
    hashes: (hashes as ReadonlySet<string> | undefined) ?? new Set<string>(),
    complete: organizationItem.activeApiKeysSince !== undefined,
  };
}

/**
 * The transaction item that adds keys to an organization's list (and, with
 * `completeSince`, marks the list complete from that ISO 8601 time) or takes
 * keys off it; conditional on the organization existing (an UpdateItem would
 * otherwise create a stub organization). DynamoDB takes one action per
 * attribute in an update, so one item either adds or removes.
 * @param change.add / change.remove - key hashes.
 */
export function activeKeysUpdate(
  tableName: string,
  organizationId: string,
  change: { add: readonly string[]; completeSince?: string } | { remove: readonly string[] },
) {
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
    Update: {
      TableName: tableName,
      Key: keys.organization(organizationId),
      UpdateExpression: actions.join(' '),
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: values,
    },
  };
}

/** The transaction item that holds only while a key exists and is not revoked (a key may be listed only so). */
export function keyNotRevoked(tableName: string, keyHash: string) {
  return {
    ConditionCheck: {
      TableName: tableName,
      Key: keys.apiKey(keyHash),
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
    },
  };
}

/**
 * The key lookup alone (the same `findByHash` as {@link createApiKeyStore}): what authentication reads on every
 * request, so the bundles of functions that issue, list or revoke no key carry none of that code (bench `bundles`).
 */
export function createApiKeyReader({
  client,
  tableName,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
}): Pick<ApiKeyStore, 'findByHash'> {
  return {
    async findByHash(keyHash) {
      const { Item } = await client.send(
        withoutSdkLogger(new GetCommand({ TableName: tableName, Key: keys.apiKey(keyHash), ConsistentRead: true })),
      );
      return Item ? toApiKeyRecord(Item) : undefined;
    },
  };
}

/**
 * {@link ApiKeyStore.page} on its own (the store's own method is this one): what `keys/list` reads, so its
 * function's bundle carries none of the code that issues, rotates or revokes keys (docs/deploy.md, bench `bundles`).
 */
export function createApiKeyPager({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): Pick<ApiKeyStore, 'page'> {
  return {
    async page(organizationId, limit, after) {
      // The page's descriptions and, beside them, the keys' last uses (docs/authentication.md "Keys", `lastUsedAt`): the
      // use items are sorted as the descriptions and exist only for used keys, so the first limit + 1 after the
      // same cursor cover every used key of the page. One round trip.
      const query = (pk: string) =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: after === undefined ? 'pk = :pk' : 'pk = :pk AND sk > :after',
            ExpressionAttributeValues: {
              ':pk': pk,
              ...(after === undefined ? {} : { ':after': keys.apiKeyDescription(organizationId, after).sk }),
            },
            Limit: limit + 1,
          }),
        );
      const [{ Items = [] }, { Items: uses = [] }] = await Promise.all([
        query(keys.apiKeyDescriptions(organizationId)),
        query(keys.keyLastUses(organizationId)),
      ]);
      const lastUse = new Map(uses.map((use) => [String(use.sk), use.lastUsedAt]));
      const page = Items.slice(0, limit).map((item) => toApiKeyView({ ...item, lastUsedAt: lastUse.get(String(item.sk)) }));
      return { keys: page, next: Items.length > limit ? page.at(-1)?.id : undefined };
    },
  };
}

/**
 * {@link ApiKeyStore.issue} (lib/db/methods.ts): `keys/create`'s function builds this method alone.
 */
export const issue: StoreMethod<ApiKeyStore, 'issue'> =
  ({ client, tableName }) =>
  async (organizationId, details, now = new Date(), alsoPut = []) => {
    const secret = isTestOrganizationId(organizationId) ? newTestApiKey() : newApiKey();
    const items = issuedKeyItems(tableName, organizationId, secret, now.toISOString(), details);
    // The key's items and its place in the organization's list, together (or none: an unknown organization).
    const outcome = await transactWrite(client, {
      TransactItems: [activeKeysUpdate(tableName, organizationId, { add: [hashApiKey(secret)] }), ...items, ...alsoPut],
    });
    if (!outcome.ok) throw new NotFoundError('organization', organizationId);
    return { key: toApiKeyView(items[1].Put.Item), secret };
  };

/** Builds the DynamoDB implementation of {@link ApiKeyStore}. */
export function createApiKeyStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): ApiKeyStore {
  const { findByHash } = createApiKeyReader({ client, tableName });
  const readDescription = async (organizationId: string, keyId: string) =>
    (await client.send(new GetCommand({ TableName: tableName, Key: keys.apiKeyDescription(organizationId, keyId), ConsistentRead: true })))
      .Item;
  const issueKey = issue({ client, tableName });

  return {
    find: (apiKey) => findByHash(hashApiKey(apiKey)),
    findByHash,

    async create(organizationId, options = {}) {
      return (await issueKey(organizationId, options.scopes ? { scopes: options.scopes } : {}, new Date(), options.alsoPut)).secret;
    },

    issue: issueKey,

    page: createApiKeyPager({ client, tableName }).page,

    async revokeById(organizationId, keyId, now = new Date(), alsoPut = []) {
      const description = await readDescription(organizationId, keyId);
      if (!description) return undefined;
      if (description.revokedAt) return toApiKeyView(description);
      const at = now.toISOString();
      const hashes = [String(description.currentHash), ...(description.previousHash ? [String(description.previousHash)] : [])];
      const revoke = (key: Record<string, unknown>) => ({
        Update: {
          TableName: tableName,
          Key: key,
          UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':now': at },
        },
      });
      // Every secret of the key, its description and the organization's lists, together.
      const outcome = await transactWrite(client, {
        TransactItems: [
          revoke(keys.apiKeyDescription(organizationId, keyId)),
          ...hashes.map((hash) => revoke(keys.apiKey(hash))),
          {
            Update: {
              TableName: tableName,
              Key: keys.organization(organizationId),
              UpdateExpression: 'DELETE activeApiKeys :hashes, expiringApiKeys :hashes',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':hashes': new Set(hashes) },
            },
          },
          ...alsoPut,
        ],
      });
      if (!outcome.ok) throw new Error(`Revoking ${keyId} failed its conditions (items missing); nothing was written`);
      return toApiKeyView({ ...description, revokedAt: at });
    },

    async rotate(organizationId, keyId, now = new Date(), alsoPut = [], allow) {
      const description = await readDescription(organizationId, keyId);
      if (!description) throw new NotFoundError('api_key', keyId);
      allow?.(toApiKeyView(description));
      if (description.revokedAt)
        throw new InvalidRequestError('The key is revoked: a revoked key cannot be rotated; create a new one.', ['id: revoked key']);
      const at = now.toISOString();
      const oldHash = String(description.currentHash);
      const ownExpiry = typeof description.expiresAt === 'string' ? description.expiresAt : undefined;
      const overlapEnd = new Date(
        Math.min(now.getTime() + ROTATION_OVERLAP_SECONDS * 1000, ownExpiry ? Date.parse(ownExpiry) : Infinity),
      ).toISOString();
      const secret = isTestOrganizationId(organizationId) ? newTestApiKey() : newApiKey();
      const newHash = hashApiKey(secret);
      const [secretPut] = issuedKeyItems(
        tableName,
        organizationId,
        secret,
        at,
        {
          ...(storedScopes(description.scopes) ? { scopes: storedScopes(description.scopes)! } : {}),
          ...(ownExpiry ? { expiresAt: ownExpiry } : {}),
        },
        keyId,
      );
      const older =
        typeof description.previousHash === 'string' && description.previousHash !== oldHash ? description.previousHash : undefined;
      const endAt = (hash: string, until: string) => ({
        Update: {
          TableName: tableName,
          Key: keys.apiKey(hash),
          UpdateExpression: 'SET expiresAt = :until',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':until': until },
        },
      });
      const outcome = await transactWrite(client, {
        TransactItems: [
          { Put: { ...secretPut.Put, Item: { ...secretPut.Put.Item, ...limitsOf(description) } } },
          endAt(oldHash, overlapEnd),
          // A secret rotated out earlier and still in its overlap stops now: a key has at most two secrets.
          ...(older && typeof description.previousExpiresAt === 'string' && description.previousExpiresAt > at ? [endAt(older, at)] : []),
          {
            Update: {
              TableName: tableName,
              Key: keys.apiKeyDescription(organizationId, keyId),
              UpdateExpression:
                'SET currentHash = :new, previousHash = :old, previousExpiresAt = :until, prefix = :prefix, rotatedAt = :now',
              // Two rotations at once: one wins, the other writes nothing.
              ConditionExpression: 'currentHash = :old AND attribute_not_exists(revokedAt)',
              ExpressionAttributeValues: {
                ':new': newHash,
                ':old': oldHash,
                ':until': overlapEnd,
                ':prefix': secret.slice(0, KEY_PREFIX_LENGTH),
                ':now': at,
              },
            },
          },
          {
            // The new secret is listed; the old one is marked expiring, so a request with it reads its item (and its end).
            Update: {
              TableName: tableName,
              Key: keys.organization(organizationId),
              UpdateExpression: 'ADD activeApiKeys :new, expiringApiKeys :old',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':new': new Set([newHash]), ':old': new Set([oldHash]) },
            },
          },
          ...alsoPut,
        ],
      });
      if (!outcome.ok)
        throw new InvalidRequestError('The key changed meanwhile (rotated or revoked by another request): list it and try again.', [
          'id: changed meanwhile',
        ]);
      return { key: toApiKeyView({ ...description, prefix: secret.slice(0, KEY_PREFIX_LENGTH) }), secret };
    },

    async revoke(apiKey, auditOf) {
      const keyHash = hashApiKey(apiKey);
      const record = await findByHash(keyHash);
      if (!record) return false;
      // A key with a description: revoked by its ID (every secret of it, and the description).
      if (record.keyId && (await readDescription(record.organizationId, record.keyId)))
        return (
          (await this.revokeById(record.organizationId, record.keyId, new Date(), auditOf ? [auditOf(record.organizationId)] : [])) !==
          undefined
        );
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
          activeKeysUpdate(tableName, record.organizationId, { remove: [keyHash] }),
          ...(auditOf ? [auditOf(record.organizationId)] : []),
        ],
      });
      if (outcome.ok) return true;
      // A key outliving its organization: no list to update (an UpdateItem would create a stub organization).
      if (outcome.failed.includes(1) && !outcome.failed.includes(0))
        return (await updateIf(client, { ...revokeItem, ReturnValues: 'NONE' })).ok;
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
    ...(storedScopes(item.scopes) ? { scopes: storedScopes(item.scopes)! } : {}),
    ...(item.expiresAt ? { expiresAt: String(item.expiresAt) } : {}),
    ...(item.keyId ? { keyId: String(item.keyId) } : {}),
    ...(typeof item.maxCreditsPerLaunch === 'number' || typeof item.monthlyCredits === 'number' ? { limits: storedLimits(item) } : {}),
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
  // The old secret of a rotated key: its item holds when it stops (the request reads it).
  const expiring = organizationItem.expiringApiKeys;
  if (expiring instanceof Set && expiring.has(keyCheck.keyHash)) return;
  keyCheck.confirmListed(list.hashes.has(keyCheck.keyHash));
}
