/**
 * Organizations in the single table (docs/data-model.md); their API keys are
 * lib/organizations/api-keys.ts.
 *
 * Data access sits behind {@link OrganizationStore}; {@link createOrganizationStore}
 * builds the DynamoDB implementation from a client and a table name.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { storeOf, type StoreMethod, type TableAccess } from '../db/methods';
import * as keys from '../db/keys';
import { transactWrite, updateIf, type TransactItem } from '../db/conditional';
import { updateParts } from '../db/expression';
import { isTestOrganizationId, newApiKey, newOrganizationId, testOrganizationIdOf } from '../ids';
import { NotFoundError } from '../errors';
import { LEDGER_WRITTEN_AT, ledgerEntries, ledgerPut } from '../credits/ledger';
import type { KeyCheck } from '../http/auth';
import { confirmActiveKey, firstActiveKey, issuedKeyItems } from './api-keys';
import { pendingRecencyOf, type PendingRecency } from '../history/recency-pending';
import { limitOverridesOf, type LimitOverrides } from './limits';

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
  /**
   * Enriched campaigns whose history entries are not written yet (docs/launch.md;
   * lib/history/recency-pending.ts); absent when none (the usual case).
   */
  pendingRecency?: PendingRecency[];
  /**
   * Buckets of the organization's account history (linear hashing's N,
   * lib/history/store.ts); absent until its first split (1 bucket).
   */
  historyBuckets?: number;
  /** A test twin's live organization (docs/test-mode.md): the ID and name its answers show; absent on a live organization. */
  liveOrganizationId?: string;
  /** A live organization's test twin, once created (docs/test-mode.md); absent on a twin and before the first test key. */
  testOrganizationId?: string;
  /** The operator's overrides of the deployment's limits (docs/limits.md; lib/organizations/limits.ts); absent when none. */
  limits?: LimitOverrides;
}

/**
 * The organization's ID as its customer knows it (docs/test-mode.md): a test
 * twin's live organization's ID, or its own. What answers and events show
 * (describe; any event body naming the organization).
 */
export const publicOrganizationId = (organization: Pick<OrganizationRecord, 'id' | 'liveOrganizationId'>): string =>
  organization.liveOrganizationId ?? organization.id;

/** Opening test credits of a test twin (credits; docs/test-mode.md), its `initial_grant` ledger entry. */
export const TEST_TWIN_CREDITS = 1_000_000;
/**
 * A test twin's ceiling on accounts enriching at once (accounts): the
 * largest account list a campaign takes (docs/campaigns.md), so any test campaign
 * can launch on its own (docs/test-mode.md).
 */
export const TEST_TWIN_MAX_ENRICHING_ACCOUNTS = 100_000;

/** Figures of a new organization. */
export interface NewOrganization {
  name: string;
  smbCredits?: number;
  researchAgentCredits?: number;
  maxEnrichingAccounts?: number;
}

/** Data access for organizations. */
export interface OrganizationStore {
  /**
   * Creates an organization, its first API key (listed as its active key,
   * lib/organizations/api-keys.ts) and the ledger entry of its
   * opening smb balance (`initial_grant`, when above 0) in one transaction;
   * returns the plaintext key once.
   */
  create(input: NewOrganization): Promise<{ organization: OrganizationRecord; apiKey: string }>;
  /**
   * Reads an organization (one GetItem, strongly consistent); `undefined` when unknown.
   * @param keyCheck - the request's API-key check: while unverified, verified on the organization's list of active keys before anything returns (lib/organizations/api-keys.ts `confirmActiveKey`).
   * @throws RevokedApiKeyError from the key check.
   */
  get(organizationId: string, keyCheck?: KeyCheck): Promise<OrganizationRecord | undefined>;
  /**
   * The organization's smb credit balance (credits): one strongly consistent GetItem that reads that attribute
   * only (docs/events.md, an event's `data.campaign.credits.remaining`); `undefined` for an unknown organization.
   */
  smbCredits(organizationId: string): Promise<number | undefined>;
  /**
   * Sets the ceiling and/or the accounts enriching through other surfaces (accounts).
   * @throws NotFoundError for an unknown organization.
   */
  setCapacity(
    organizationId: string,
    change: { maxEnrichingAccounts?: number; externalEnrichingAccounts?: number },
    alsoPut?: readonly TransactItem[],
  ): Promise<OrganizationRecord>;
  /**
   * The test twin of a live organization (docs/test-mode.md), created on first
   * call: an organization item of its own (`org_test_…`, derived from the
   * live ID, so concurrent calls create one), with the live organization's
   * name, {@link TEST_TWIN_CREDITS} test credits and their `initial_grant`
   * ledger entry, a ceiling of {@link TEST_TWIN_MAX_ENRICHING_ACCOUNTS}, no
   * key yet (lib/organizations/api-keys.ts issues `cek_test_` keys to it), and
   * linked both ways (`liveOrganizationId` on the twin, `testOrganizationId`
   * on the live item), in one transaction.
   * @throws NotFoundError for an unknown live organization, or an ID that is a twin's.
   */
  testTwin(liveOrganizationId: string): Promise<OrganizationRecord>;
}

/** Demo defaults of README.md#set-up are chosen by callers; these are the bare defaults. */
const DEFAULTS = { smbCredits: 0, researchAgentCredits: 0, maxEnrichingAccounts: 5_000 };

/** A store method's factory (lib/db/methods.ts): each operation's bundle carries only the methods it names. */
type Method<K extends keyof OrganizationStore> = StoreMethod<OrganizationStore, K>;

/** {@link OrganizationStore.get}. */
export const getOrganization: Method<'get'> =
  ({ client, tableName }) =>
  async (organizationId, keyCheck) => {
    const { Item } = await client.send(
      new GetCommand({ TableName: tableName, Key: keys.organization(organizationId), ConsistentRead: true }),
    );
    confirmActiveKey(keyCheck, Item);
    return Item ? toOrganization(Item) : undefined;
  };

/** {@link OrganizationStore.smbCredits}: no decoding of the rest of the item, so its bundle carries no other. */
export const readSmbCredits: Method<'smbCredits'> =
  ({ client, tableName }) =>
  async (organizationId) => {
    const { Item } = await client.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.organization(organizationId),
        ConsistentRead: true,
        ProjectionExpression: 'smbCredits',
      }),
    );
    return Item ? Number(Item.smbCredits) : undefined;
  };

/** {@link OrganizationStore.testTwin}. */
export const testTwin: Method<'testTwin'> = (table) => {
  const { client, tableName } = table;
  const get = getOrganization(table);
  return async (liveOrganizationId) => {
    // A twin has no twin of its own.
    if (isTestOrganizationId(liveOrganizationId)) throw new NotFoundError('organization', liveOrganizationId);
    const twinId = testOrganizationIdOf(liveOrganizationId);
    const existing = await get(twinId);
    if (existing) return existing;
    const live = await get(liveOrganizationId);
    if (!live) throw new NotFoundError('organization', liveOrganizationId);
    const twin: OrganizationRecord = {
      id: twinId,
      name: live.name,
      smbCredits: TEST_TWIN_CREDITS,
      researchAgentCredits: 0,
      maxEnrichingAccounts: TEST_TWIN_MAX_ENRICHING_ACCOUNTS,
      enrichingAccounts: 0,
      externalEnrichingAccounts: 0,
      createdAt: new Date().toISOString(),
      liveOrganizationId,
    };
    const grant = ledgerEntries.initialGrant({ organizationId: twinId, credits: TEST_TWIN_CREDITS, createdAt: twin.createdAt });
    const outcome = await transactWrite(client, {
      TransactItems: [
        {
          Put: {
            TableName: tableName,
            // The list of active keys is complete from the start, and empty until the first test key.
            Item: {
              ...keys.organization(twinId),
              ...keys.organizationRegistry(twin),
              type: 'organization',
              mode: 'test',
              ...twin,
              ledgerEntries: 1,
              activeApiKeysSince: twin.createdAt,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ledgerPut(tableName, grant),
        {
          Update: {
            TableName: tableName,
            Key: keys.organization(liveOrganizationId),
            UpdateExpression: 'SET testOrganizationId = :twin',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':twin': twinId },
          },
        },
      ],
    });
    if (outcome.ok) return twin;
    // A concurrent call created it first (or the live organization went away meanwhile).
    const created = await get(twinId);
    if (!created) throw new NotFoundError('organization', liveOrganizationId);
    return created;
  };
};

/** {@link OrganizationStore.create}. */
export const createOrganization: Method<'create'> =
  ({ client, tableName }) =>
  async (input) => {
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
    const grant =
      organization.smbCredits > 0
        ? ledgerEntries.initialGrant({
            organizationId: organization.id,
            credits: organization.smbCredits,
            createdAt: organization.createdAt,
          })
        : undefined;
    const outcome = await transactWrite(client, {
      TransactItems: [
        {
          Put: {
            TableName: tableName,
            Item: {
              ...keys.organization(organization.id),
              ...keys.organizationRegistry(organization),
              type: 'organization',
              ...organization,
              ledgerEntries: grant ? 1 : 0,
              // The ledger's clock (lib/credits/ledger.ts): later entries are stamped after the grant.
              ...(grant ? { [LEDGER_WRITTEN_AT]: grant.createdAt } : {}),
              ...firstActiveKey(apiKey, organization.createdAt),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...issuedKeyItems(tableName, organization.id, apiKey, organization.createdAt),
        ...(grant ? [ledgerPut(tableName, grant)] : []),
      ],
    });
    if (!outcome.ok) throw new Error(`Organization ID ${organization.id} or its key collided; nothing was written`);
    return { organization, apiKey };
  };

/** {@link OrganizationStore.setCapacity}. */
export const setCapacity: Method<'setCapacity'> = (table) => {
  const { client, tableName } = table;
  const get = getOrganization(table);
  return async (organizationId, change, alsoPut = []) => {
    // Optimistic update: the external figure is folded into enrichingAccounts
    // by its delta, so the launch condition needs one attribute only.
    for (;;) {
      const current = await get(organizationId);
      if (!current) throw new NotFoundError('organization', organizationId);
      const external = change.externalEnrichingAccounts ?? current.externalEnrichingAccounts;
      const max = change.maxEnrichingAccounts ?? current.maxEnrichingAccounts;
      const outcome = await updateIf(
        client,
        {
          TableName: tableName,
          Key: keys.organization(organizationId),
          ...updateParts(
            {
              set: { maxEnrichingAccounts: max, externalEnrichingAccounts: external },
              increment: { enrichingAccounts: external - current.externalEnrichingAccounts },
            },
            {
              expression:
                'attribute_exists(pk) AND (attribute_not_exists(externalEnrichingAccounts) OR externalEnrichingAccounts = :c_old)',
              values: { ':c_old': current.externalEnrichingAccounts },
            },
          ),
        },
        alsoPut,
      );
      if (outcome.ok) {
        // Written, then deleted before the read-back (updateIf): the organization is gone.
        if (!outcome.item) throw new NotFoundError('organization', organizationId);
        return toOrganization(outcome.item);
      }
    }
  };
};

/** Builds the DynamoDB implementation of {@link OrganizationStore}: every method (an operation's function builds only the ones it calls). */
export function createOrganizationStore(table: TableAccess): OrganizationStore {
  return storeOf(table, { get: getOrganization, smbCredits: readSmbCredits, testTwin, create: createOrganization, setCapacity });
}

/** Maps a stored item to an {@link OrganizationRecord}. */
export function toOrganization(item: Record<string, unknown>): OrganizationRecord {
  const pending = pendingRecencyOf(item);
  const limits = limitOverridesOf(item);
  return {
    id: String(item.id),
    name: String(item.name),
    smbCredits: Number(item.smbCredits),
    researchAgentCredits: Number(item.researchAgentCredits),
    maxEnrichingAccounts: Number(item.maxEnrichingAccounts),
    enrichingAccounts: Number(item.enrichingAccounts),
    externalEnrichingAccounts: Number(item.externalEnrichingAccounts ?? 0),
    createdAt: String(item.createdAt),
    ...(pending.length > 0 ? { pendingRecency: pending } : {}),
    ...(typeof item.historyBuckets === 'number' ? { historyBuckets: item.historyBuckets } : {}),
    ...(item.liveOrganizationId !== undefined ? { liveOrganizationId: String(item.liveOrganizationId) } : {}),
    ...(item.testOrganizationId !== undefined ? { testOrganizationId: String(item.testOrganizationId) } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
}
