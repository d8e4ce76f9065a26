/**
 * Organizations and their API keys in the single table (docs/data-model.md).
 *
 * Data access sits behind {@link OrganizationStore}; {@link createOrganizationStore}
 * builds the DynamoDB implementation from a client and a table name.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys } from '../db/table';
import { hashApiKey, newApiKey, newOrganizationId } from '../ids';
import { NotFoundError } from '../errors';

/** The organization item as stored. Balances in credits, capacity in accounts. */
export interface OrganizationRecord {
  id: string;
  name: string;
  /** smb credit balance (credits). */
  smbCredits: number;
  /** Research-agent credit balance (credits). */
  researchAgentCredits: number;
  /** Ceiling on accounts enriching at once (accounts). */
  maxEnrichingAccounts: number;
  /** Accounts enriching now across every surface (accounts), including {@link externalEnrichingAccounts}. */
  enrichingAccounts: number;
  /** Accounts enriching through other surfaces (the interactive interface), set by operators (accounts). */
  externalEnrichingAccounts: number;
  createdAt: string;
}

/** The API key item as stored: only the hash of the key. */
export interface ApiKeyRecord {
  keyHash: string;
  organizationId: string;
  createdAt: string;
  revokedAt?: string;
}

/** Figures of a new organization. */
export interface NewOrganization {
  name: string;
  smbCredits?: number;
  researchAgentCredits?: number;
  maxEnrichingAccounts?: number;
}

/** Data access for organizations and API keys. */
export interface OrganizationStore {
  /** Creates an organization and its first API key in one transaction; returns the plaintext key once. */
  create(input: NewOrganization): Promise<{ organization: OrganizationRecord; apiKey: string }>;
  /** Reads an organization; `undefined` when unknown. */
  get(organizationId: string): Promise<OrganizationRecord | undefined>;
  /** Reads an API key by its plaintext value; `undefined` when unknown. */
  findApiKey(apiKey: string): Promise<ApiKeyRecord | undefined>;
  /** Issues another key for an organization. @throws NotFoundError for an unknown organization. */
  createApiKey(organizationId: string): Promise<string>;
  /** Revokes a key. @returns false when the key is unknown. */
  revokeApiKey(apiKey: string): Promise<boolean>;
  /**
   * Adds `delta` credits (may be negative) to the smb balance; the balance never goes below 0.
   * @throws NotFoundError for an unknown organization; RangeError when the balance would go negative.
   */
  adjustSmbCredits(organizationId: string, delta: number): Promise<OrganizationRecord>;
  /**
   * Sets the ceiling and/or the accounts enriching through other surfaces (accounts).
   * @throws NotFoundError for an unknown organization.
   */
  setCapacity(organizationId: string, change: { maxEnrichingAccounts?: number; externalEnrichingAccounts?: number }): Promise<OrganizationRecord>;
}

/** Demo defaults of decisions §9 are chosen by callers; these are the bare defaults. */
const DEFAULTS = { smbCredits: 0, researchAgentCredits: 0, maxEnrichingAccounts: 5_000 };

/** Builds the DynamoDB implementation of {@link OrganizationStore}. */
export function createOrganizationStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): OrganizationStore {
  const get = async (organizationId: string): Promise<OrganizationRecord | undefined> => {
    const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: keys.organization(organizationId), ConsistentRead: true }));
    return Item ? toOrganization(Item) : undefined;
  };

  const putKey = (organizationId: string, apiKey: string, createdAt: string) => ({
    Put: {
      TableName: tableName,
      Item: { ...keys.apiKey(hashApiKey(apiKey)), type: 'apiKey', keyHash: hashApiKey(apiKey), organizationId, createdAt },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  });

  return {
    get,

    async create(input) {
      const organization: OrganizationRecord = {
        id: newOrganizationId(),
        name: input.name,
        smbCredits: input.smbCredits ?? DEFAULTS.smbCredits,
        researchAgentCredits: input.researchAgentCredits ?? DEFAULTS.researchAgentCredits,
        maxEnrichingAccounts: input.maxEnrichingAccounts ?? DEFAULTS.maxEnrichingAccounts,
        enrichingAccounts: 0,
        externalEnrichingAccounts: 0,
        createdAt: new Date().toISOString(),
      };
      const apiKey = newApiKey();
      await client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: { ...keys.organization(organization.id), type: 'organization', ...organization },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            putKey(organization.id, apiKey, organization.createdAt),
          ],
        }),
      );
      return { organization, apiKey };
    },

    async findApiKey(apiKey) {
      // Consistent: a revocation takes effect on the very next request.
      const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: keys.apiKey(hashApiKey(apiKey)), ConsistentRead: true }));
      if (!Item) return undefined;
      return {
        keyHash: String(Item.keyHash),
        organizationId: String(Item.organizationId),
        createdAt: String(Item.createdAt),
        ...(Item.revokedAt ? { revokedAt: String(Item.revokedAt) } : {}),
      };
    },

    async createApiKey(organizationId) {
      const apiKey = newApiKey();
      try {
        await client.send(
          new TransactWriteCommand({
            TransactItems: [
              { ConditionCheck: { TableName: tableName, Key: keys.organization(organizationId), ConditionExpression: 'attribute_exists(pk)' } },
              putKey(organizationId, apiKey, new Date().toISOString()),
            ],
          }),
        );
      } catch (error) {
        if (error instanceof TransactionCanceledException && error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') {
          throw new NotFoundError('organization', organizationId);
        }
        throw error;
      }
      return apiKey;
    },

    async revokeApiKey(apiKey) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.apiKey(hashApiKey(apiKey)),
            UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':now': new Date().toISOString() },
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw error;
      }
    },

    async adjustSmbCredits(organizationId, delta) {
      try {
        const { Attributes } = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.organization(organizationId),
            UpdateExpression: 'SET smbCredits = smbCredits + :delta',
            ConditionExpression: 'attribute_exists(pk) AND smbCredits >= :floor',
            ExpressionAttributeValues: { ':delta': delta, ':floor': Math.max(0, -delta) },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return toOrganization(Attributes!);
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) {
          if (!error.Item) throw new NotFoundError('organization', organizationId);
          throw new RangeError(`The smb balance is ${String(error.Item.smbCredits?.N)} credits; removing ${-delta} would make it negative.`);
        }
        throw error;
      }
    },

    async setCapacity(organizationId, change) {
      // Optimistic update: the external figure is folded into enrichingAccounts
      // by its delta, so the launch condition needs one attribute only.
      for (;;) {
        const current = await get(organizationId);
        if (!current) throw new NotFoundError('organization', organizationId);
        const external = change.externalEnrichingAccounts ?? current.externalEnrichingAccounts;
        const max = change.maxEnrichingAccounts ?? current.maxEnrichingAccounts;
        try {
          const { Attributes } = await client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.organization(organizationId),
              UpdateExpression: 'SET maxEnrichingAccounts = :max, externalEnrichingAccounts = :external, enrichingAccounts = enrichingAccounts + :delta',
              ConditionExpression: 'externalEnrichingAccounts = :oldExternal',
              ExpressionAttributeValues: {
                ':max': max,
                ':external': external,
                ':oldExternal': current.externalEnrichingAccounts,
                ':delta': external - current.externalEnrichingAccounts,
              },
              ReturnValues: 'ALL_NEW',
            }),
          );
          return toOrganization(Attributes!);
        } catch (error) {
          if (error instanceof ConditionalCheckFailedException) continue;
          throw error;
        }
      }
    },
  };
}

/** Maps a stored item to an {@link OrganizationRecord}. */
export function toOrganization(item: Record<string, unknown>): OrganizationRecord {
  return {
    id: String(item.id),
    name: String(item.name),
    smbCredits: Number(item.smbCredits),
    researchAgentCredits: Number(item.researchAgentCredits),
    maxEnrichingAccounts: Number(item.maxEnrichingAccounts),
    enrichingAccounts: Number(item.enrichingAccounts),
    externalEnrichingAccounts: Number(item.externalEnrichingAccounts ?? 0),
    createdAt: String(item.createdAt),
  };
}
