/**
 * Campaigns in the single table (docs/data-model.md, access patterns 7-12).
 */
import {
  GetCommand,
  paginateQuery,
  QueryCommand,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { StoreMethod } from '../db/methods';
import { setting, resultsAccessPeriodSecondsSetting } from '../config';
import { batchGet } from '../db/batch';
import { batchGetCall } from '../db/batch-call';
import { withoutSdkLogger } from '../db/sdk-logger';
import { queryPartition } from '../db/query';
import { transactWrite, updateIf, type TransactItem } from '../db/conditional';
import { and, updateParts } from '../db/expression';
import { campaignItem, toCampaignRecord } from './item';
import * as campaignIs from './conditions';
import * as campaignChanges from './changes';
import { TABLE_INDEXES, type IndexDefinition } from '../db/table';
import * as keys from '../db/keys';
import type { CampaignStatus } from '../errors';
import { toOrganization, type OrganizationRecord } from '../organizations/store';
import { confirmActiveKey } from '../organizations/api-keys';
import type { KeyCheck } from '../http/auth';
import type { CampaignRecord } from './model';
import type { CreatedVia } from './schema';

/** Attributes of a list item as read from an index. */
export type CampaignListRecord = Pick<
  CampaignRecord,
  'id' | 'status' | 'createdVia' | 'name' | 'excludeEnrichedWithinDays' | 'createdAt' | 'resultsExpireAt'
> & { listSk: string };

/** A list query: statuses and surfaces are each "any" when undefined. */
export interface CampaignListQuery {
  organizationId: string;
  statuses?: readonly CampaignStatus[];
  createdVia?: readonly CreatedVia[];
  limit: number;
  /** Exclusive upper bound on `listSk` (the previous page's last item). */
  after?: string;
  now: Date;
}

/** Changes of an update (docs/campaigns.md). */
export interface CampaignChanges {
  name?: string;
  excludeEnrichedWithinDays?: number | null;
}

/** Outcome of a conditional campaign write that may be refused. */
export type ConditionalOutcome = { ok: true; campaign: CampaignRecord } | { ok: false; current?: CampaignRecord; launching?: boolean };

/** Data access for campaigns. */
export interface CampaignStore {
  /**
   * Writes a new campaign (and its owner item, and `alsoPut`: an idempotency key's work marker, the
   * request's audit entry (docs/audit.md), in one transaction).
   */
  create(record: CampaignRecord, alsoPut?: readonly TransactItem[]): Promise<void>;
  /** The organization a campaign belongs to; `undefined` when unknown (operator use only). */
  ownerOf(campaignId: string): Promise<string | undefined>;
  /** Reads a campaign (strongly consistent); `undefined` when unknown. */
  get(organizationId: string, campaignId: string): Promise<CampaignRecord | undefined>;
  /**
   * Reads a campaign and its organization in one round trip (BatchGetItem, strongly consistent).
   * @param keyCheck - the request's API-key check: while unverified, verified on the organization's list of active keys before anything returns (lib/organizations/api-keys.ts `confirmActiveKey`).
   * @throws RevokedApiKeyError from the key check.
   */
  getWithOrganization(
    organizationId: string,
    campaignId: string,
    keyCheck?: KeyCheck,
  ): Promise<{ campaign?: CampaignRecord; organization?: OrganizationRecord }>;
  /**
   * Applies changes to an API-created draft; refused otherwise (`current` tells why). With `alsoPut`
   * (the request's audit entry, docs/audit.md), in one transaction with those items, and the draft read back
   * (a draft deleted before the read-back answers as a missing one: `{ ok: false }` without `current`).
   */
  updateDraft(
    organizationId: string,
    campaignId: string,
    changes: CampaignChanges,
    alsoPut?: readonly TransactItem[],
  ): Promise<ConditionalOutcome>;
  /**
   * Reads several campaigns of one organization (BatchGetItem, strongly consistent, 100 keys a call);
   * unknown IDs are left out, the order is not kept.
   */
  getMany(organizationId: string, campaignIds: readonly string[]): Promise<CampaignRecord[]>;
  /** IDs of an organization's campaigns stored in `status` (every page of its status partition; the reconciler's walk). */
  idsInStatus(organizationId: string, status: CampaignStatus): Promise<string[]>;
  /**
   * IDs of an organization's campaigns stored `enriched` whose `resultsExpireAt` is at or before `before`: the
   * sparse expiry index read up to that bound, so live campaigns are never read (the reconciler's expiry check).
   */
  lapsedIds(organizationId: string, before: Date): Promise<string[]>;
  /** One page of list items, newest first; `hasMore` when another page exists. */
  list(query: CampaignListQuery): Promise<{ items: CampaignListRecord[]; hasMore: boolean }>;
}

/**
 * What a list query reads: a partition of a list index (`live` keeps only
 * `enriched` items not yet past resultsExpireAt), or the lapsed campaigns
 * (stored `enriched`, past resultsExpireAt) found through the sparse expiry index.
 */
type ListSource =
  | { kind: 'partition'; indexName: string; partitionKeyName: string; partitionKey: string; live?: boolean }
  | { kind: 'lapsed'; createdVia?: readonly string[] };

/**
 * The sources a query reads (docs/pagination.md, docs/lifetimes.md). `expired` is the stored
 * `expired` partition plus the lapsed campaigns; `enriched` leaves the
 * lapsed ones out.
 */
export function listSources(query: Pick<CampaignListQuery, 'organizationId' | 'statuses' | 'createdVia'>): ListSource[] {
  const { all, byStatus, byCreatedVia, byStatusAndCreatedVia } = TABLE_INDEXES;
  const org = query.organizationId;
  const vias = query.createdVia && [...new Set(query.createdVia)];
  const partition = (index: IndexDefinition, campaign: { status?: string; createdVia?: string }, live?: boolean): ListSource => {
    const indexKeys = keys.campaignIndexes(org, {
      id: '',
      createdAt: '',
      status: campaign.status ?? '',
      createdVia: campaign.createdVia ?? '',
    });
    return {
      kind: 'partition',
      indexName: index.indexName,
      partitionKeyName: index.partitionKey,
      partitionKey: indexKeys[index.partitionKey as 'gsi1pk'],
      ...(live ? { live } : {}),
    };
  };
  if (!query.statuses) return vias ? vias.map((createdVia) => partition(byCreatedVia, { createdVia })) : [partition(all, {})];

  const wanted = new Set(query.statuses);
  const sources: ListSource[] = [];
  for (const status of wanted) {
    // `enriched` alone must not show lapsed campaigns; with `expired` it shows them all.
    const live = status === 'enriched' && !wanted.has('expired');
    if (vias) for (const createdVia of vias) sources.push(partition(byStatusAndCreatedVia, { status, createdVia }, live));
    else sources.push(partition(byStatus, { status }, live));
  }
  if (wanted.has('expired') && !wanted.has('enriched')) sources.push({ kind: 'lapsed', ...(vias ? { createdVia: vias } : {}) });
  return sources;
}

const newestFirst = (a: { listSk: string }, b: { listSk: string }) => (a.listSk < b.listSk ? 1 : a.listSk > b.listSk ? -1 : 0);

/**
 * The campaign read alone ({@link CampaignStore.get}), for a function that needs nothing else of the store: its
 * bundle then carries none of the store's list, key-check and write code (the workflow's CompleteEnrichment; bench `bundles`).
 */
export function createCampaignReader({
  client,
  tableName,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
}): Pick<CampaignStore, 'get'> {
  return {
    async get(organizationId, campaignId) {
      const { Item } = await client.send(
        new GetCommand({ TableName: tableName, Key: keys.campaign(organizationId, campaignId), ConsistentRead: true }),
      );
      return Item ? toCampaignRecord(Item) : undefined;
    },
  };
}

/**
 * The campaign reads a launch and a quote make ({@link CampaignStore.get} and {@link CampaignStore.getWithOrganization},
 * the same as {@link createCampaignStore}'s), for a function that needs nothing else of the store: its bundle then
 * carries none of the store's list and write code (CampaignsEnrich, CampaignsQuote; bench `bundles`).
 */
export function createCampaignOrganizationReader({
  client,
  tableName,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
}): Pick<CampaignStore, 'get' | 'getWithOrganization'> {
  return {
    ...createCampaignReader({ client, tableName }),

    async getWithOrganization(organizationId, campaignId, keyCheck) {
      // One BatchGetItem (unprocessed keys are read again by batchGetCall); the organization item carries the key's revocation.
      const campaignKey = keys.campaign(organizationId, campaignId);
      const found = await batchGetCall(client, tableName, [campaignKey, keys.organization(organizationId)], undefined, {
        consistentRead: true,
      });
      const campaignItemFound = found.find((item) => item.pk === campaignKey.pk && item.sk === campaignKey.sk);
      const organizationItem = found.find((item) => item.pk === campaignKey.pk && item.sk === 'ORG');
      confirmActiveKey(keyCheck, organizationItem);
      return {
        ...(campaignItemFound ? { campaign: toCampaignRecord(campaignItemFound) } : {}),
        ...(organizationItem ? { organization: toOrganization(organizationItem) } : {}),
      };
    },
  };
}

/**
 * Lapsed campaigns the first read of an `expired` list asks for (docs/data-model.md "Expiry as read"): often enough
 * to tell, once the other sources' page is known, that no further lapsed campaign can enter it, and at the expiry
 * index's items of about 400 bytes (list fields and keys), within the one 4 KB read unit (half a unit, eventually
 * consistent) a read of fewer would cost too.
 * A page that needs more reads only the items it still misses, one more round trip.
 */
const LAPSED_PROBE = 8;

/**
 * {@link CampaignStore.updateDraft} (lib/db/methods.ts): `campaigns/update`'s function builds this method alone.
 */
export const updateDraft: StoreMethod<CampaignStore, 'updateDraft'> =
  ({ client, tableName }) =>
  async (organizationId, campaignId, changes, alsoPut = []) => {
    // Not while a launch evaluates the campaign with its current settings.
    const outcome = await updateIf(
      client,
      {
        TableName: tableName,
        Key: keys.campaign(organizationId, campaignId),
        ...updateParts(campaignChanges.edit(changes), and(campaignIs.present(), campaignIs.apiDraft(), campaignIs.unlocked(new Date()))),
      },
      alsoPut,
    );
    // Written, then deleted before the read-back (updateIf): the campaign is gone, as for a missing one.
    if (outcome.ok) return outcome.item ? { ok: true, campaign: toCampaignRecord(outcome.item) } : { ok: false };
    const item = outcome.old;
    if (!item) return { ok: false };
    return { ok: false, current: toCampaignRecord(item), launching: item.status === 'draft' && item.createdVia === 'api' };
  };

/**
 * {@link CampaignStore.list} (lib/db/methods.ts): `campaigns/list`'s function builds this method alone.
 */
export const list: StoreMethod<CampaignStore, 'list'> = ({ client, tableName }) => {
  /**
   * Reads up to `wanted` items of one source below `after`, newest first.
   * @param others - the other sources' items, once read (lapsed campaigns stop once no unread one can enter the page).
   */
  const readSource = async (
    source: ListSource,
    organizationId: string,
    wanted: number,
    after: string | undefined,
    now: Date,
    others: () => Promise<readonly CampaignListRecord[]> = async () => [],
  ): Promise<CampaignListRecord[]> => {
    if (source.kind === 'lapsed') return readLapsed(source, organizationId, wanted, after, now, others);
    const items: CampaignListRecord[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const values: Record<string, unknown> = { ':pk': source.partitionKey };
      let keyCondition = '#pk = :pk';
      if (after !== undefined) {
        keyCondition += ' AND listSk < :after';
        values[':after'] = after;
      }
      if (source.live) values[':now'] = now.toISOString();
      const page = await client.send(
        withoutSdkLogger(
          new QueryCommand({
            TableName: tableName,
            IndexName: source.indexName,
            KeyConditionExpression: keyCondition,
            FilterExpression: source.live ? 'resultsExpireAt > :now' : undefined,
            ExpressionAttributeNames: { '#pk': source.partitionKeyName },
            ExpressionAttributeValues: values,
            ScanIndexForward: false,
            Limit: wanted - items.length,
            ExclusiveStartKey: exclusiveStartKey,
            ReturnConsumedCapacity: 'TOTAL',
          }),
        ),
      );
      for (const item of page.Items ?? []) items.push(item as CampaignListRecord);
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (items.length < wanted && exclusiveStartKey);
    return items;
  };

  /**
   * Lapsed campaigns (stored `enriched`, past resultsExpireAt) below `after`,
   * newest first: the sparse expiry index read from `now` backwards, first
   * {@link LAPSED_PROBE} items (in the wave of the other sources' reads), then,
   * once the other sources' page is known and only if a lapsed campaign may
   * still enter it, the items the page still misses; never a live campaign. It stops once no
   * unread one can enter the page: an unread item expires at or before the
   * last one read (E), so it was created at or before E − the result access
   * period (created ≤ completed = expiry − period); once `wanted` items of
   * this source and the others together sort after that, the rest cannot
   * enter. The first page reads about a page of lapsed campaigns however
   * many there are (docs/pagination.md). Assumes every stored campaign's access
   * period is at least the current setting (shortening it only reads more);
   * a setting lengthened while campaigns of the shorter period sit lapsed
   * could leave one of them out of a page until the workflow (or the
   * reconciler) rewrites it `expired`.
   */
  const readLapsed = async (
    source: Extract<ListSource, { kind: 'lapsed' }>,
    organizationId: string,
    wanted: number,
    after: string | undefined,
    now: Date,
    others: () => Promise<readonly CampaignListRecord[]>,
  ) => {
    const index = TABLE_INDEXES.enrichedByExpiry;
    const periodMs = setting(resultsAccessPeriodSecondsSetting) * 1000;
    const candidates: CampaignListRecord[] = [];
    let exclusiveStartKey: Record<string, unknown> | undefined;
    // A probe first: when the other sources fill the page (many campaigns lapsed long ago), it is all that is read.
    let ask = Math.min(LAPSED_PROBE, wanted);
    for (;;) {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index.indexName,
          // `$` sorts above `#` and below every ID character: the bound includes campaigns expiring exactly now.
          KeyConditionExpression: '#pk = :pk AND #sk < :bound',
          ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
          ExpressionAttributeValues: {
            ':pk': keys.enrichedExpiry(organizationId, { id: '', resultsExpireAt: '' }).gsi5pk,
            ':bound': `${now.toISOString()}$`,
          },
          ScanIndexForward: false,
          Limit: ask,
          ExclusiveStartKey: exclusiveStartKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      const items = (page.Items ?? []) as (CampaignListRecord & { expirySk?: string })[];
      for (const item of items) {
        if ((after === undefined || item.listSk < after) && (!source.createdVia || source.createdVia.includes(item.createdVia)))
          candidates.push(item);
      }
      candidates.sort(newestFirst).splice(wanted);
      exclusiveStartKey = page.LastEvaluatedKey;
      const last = items.at(-1)?.expirySk;
      if (!exclusiveStartKey || last === undefined) break;
      // Every unread item sorts below `${E − period}$`.
      const unreadBelow = `${new Date(Date.parse(last.slice(0, last.indexOf('#'))) - periodMs).toISOString()}$`;
      // The page's items known to beat every unread one, from this source and the others: once `wanted`, done;
      // else at most the missing ones are read next (each read may lower the bound, so the count is checked again).
      const beat = (list: readonly CampaignListRecord[]) => list.filter((item) => item.listSk >= unreadBelow).length;
      const known = beat(candidates) + beat(await others());
      if (known >= wanted) break;
      ask = wanted - known;
    }
    return candidates;
  };

  return async (query) => {
    const sources = listSources(query);
    const wanted = query.limit + 1;
    // All sources in one wave. Once the partitions are read, the lapsed source, if still paging, stops as soon as
    // its items and theirs fill the page with items no unread lapsed campaign can beat.
    const partitions = Promise.all(
      sources
        .filter((source) => source.kind === 'partition')
        .map((source) => readSource(source, query.organizationId, wanted, query.after, query.now)),
    ).then((pages) => pages.flat().sort(newestFirst));
    const lapsed = Promise.all(
      sources
        .filter((source) => source.kind === 'lapsed')
        .map((source) => readSource(source, query.organizationId, wanted, query.after, query.now, () => partitions)),
    );
    const [partitionItems, lapsedItems] = await Promise.all([partitions, lapsed]);
    const merged = [...partitionItems, ...lapsedItems.flat()].sort(newestFirst);
    return { items: merged.slice(0, query.limit), hasMore: merged.length > query.limit };
  };
};

/** Builds the DynamoDB implementation of {@link CampaignStore}. */
export function createCampaignStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): CampaignStore {
  const { get, getWithOrganization } = createCampaignOrganizationReader({ client, tableName });

  return {
    get,

    async create(record, alsoPut = []) {
      const outcome = await transactWrite(client, {
        TransactItems: [
          ...alsoPut,
          { Put: { TableName: tableName, Item: campaignItem(record), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              TableName: tableName,
              Item: { ...keys.campaignOwner(record.id), type: 'campaignOwner', organizationId: record.organizationId },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      });
      if (!outcome.ok) throw new Error(`Campaign ID ${record.id} collided; nothing was written`);
    },

    async ownerOf(campaignId) {
      const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: keys.campaignOwner(campaignId) }));
      return Item ? String(Item.organizationId) : undefined;
    },

    getWithOrganization,

    updateDraft: updateDraft({ client, tableName }),

    async getMany(organizationId, campaignIds) {
      if (campaignIds.length === 0) return [];
      const found = await batchGet(
        client,
        tableName,
        campaignIds.map((campaignId) => keys.campaign(organizationId, campaignId)),
        undefined,
        { consistentRead: true },
      );
      return found.map((item) => toCampaignRecord(item));
    },

    async lapsedIds(organizationId, before) {
      const index = TABLE_INDEXES.enrichedByExpiry;
      const ids: string[] = [];
      const pages = paginateQuery(
        { client },
        {
          TableName: tableName,
          IndexName: index.indexName,
          // `expirySk` is `<resultsExpireAt>#<id>`; `$` sorts above `#` and below every ID character: resultsExpireAt ≤ before.
          KeyConditionExpression: '#pk = :pk AND #sk < :bound',
          ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey, '#id': 'id' },
          ExpressionAttributeValues: {
            ':pk': keys.enrichedExpiry(organizationId, { id: '', resultsExpireAt: '' }).gsi5pk,
            ':bound': `${before.toISOString()}$`,
          },
          ProjectionExpression: '#id',
        },
      );
      for await (const page of pages) for (const item of page.Items ?? []) ids.push(String(item.id));
      return ids;
    },

    async idsInStatus(organizationId, status) {
      const partition = keys.campaignIndexes(organizationId, { id: '', createdAt: '', status, createdVia: '' }).gsi2pk;
      return (await queryPartition(client, tableName, TABLE_INDEXES.byStatus, partition, ['id'])).map((item) => String(item.id));
    },

    list: list({ client, tableName }),
  };
}
