/**
 * Reading the credit ledger, and the operator's balance adjustments
 * (README.md#operator-cli `org:credits`, docs/launch.md#the-credit-ledger; docs/data-model.md "Ledger").
 */
import { GetCommand, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { StoreMethod, TableAccess } from '../db/methods';
import { randomUUID } from 'node:crypto';
import { LEDGER_INDEXES, TABLE_INDEXES } from '../db/table';
import * as keys from '../db/keys';
import { queryPartition } from '../db/query';
import { batchGet } from '../db/batch';
import { and } from '../db/expression';
import type { TransactItem } from '../db/conditional';
import { NotFoundError } from '../errors';
import {
  balanceCovers,
  ledgerEntries,
  movementItems,
  sumOf,
  toLedgerEntry,
  transactMovement,
  type LedgerEntry,
  type LedgerKind,
} from './ledger';

/** One page of the ledger query, newest first. */
export interface LedgerPageQuery {
  organizationId: string;
  campaignId?: string;
  kind?: LedgerKind;
  /** Entries per page (1..1000). */
  limit: number;
  /** Exclusive upper bound on `listSk` (the previous page's last entry). */
  after?: string;
}

/** A consistent view of one organization's money. */
export interface LedgerAudit {
  organizationId: string;
  /** The smb balance on the organization item (credits). */
  balance: number;
  /** Σ of the organization's ledger entries (credits). */
  ledgerSum: number;
  /** Entries read. */
  entries: number;
  /**
   * Campaigns whose `credits.charged` differs from minus the sum of their
   * entries, read in the same quiet round as the balance (empty when all agree).
   */
  campaignDrift: CampaignChargeDrift[];
}

/** A campaign whose `creditsCharged` differs from its ledger (issue #31). */
export interface CampaignChargeDrift {
  organizationId: string;
  campaignId: string;
  /** `credits.charged` on the campaign item (credits). */
  charged: number;
  /** −Σ of the campaign's entries (credits). */
  ledgerCharged: number;
  /** charged − ledgerCharged (credits). */
  drift: number;
}

/** Data access for the ledger. */
export interface LedgerStore {
  /** One page of entries, newest first (`createdAt`, then `id`); `hasMore` when another page exists; `last` is the cursor position. */
  page(query: LedgerPageQuery): Promise<{ entries: LedgerEntry[]; hasMore: boolean; last?: string }>;
  /** Every entry of an organization, or of one of its campaigns, oldest first (strongly consistent). */
  entriesOf(organizationId: string, campaignId?: string): Promise<LedgerEntry[]>;
  /**
   * Balance and ledger sum of an organization, and each campaign's
   * `creditsCharged` against its entries, read as of one instant: the
   * organization item is read before and after the entries and campaigns,
   * and the read is repeated until no movement happened in between.
   * @returns undefined for an unknown organization.
   */
  audit(organizationId: string): Promise<LedgerAudit | undefined>;
  /**
   * The organization's entries written in `[from, to)` (ISO 8601), with their `keyId` (org/usage,
   * docs/authentication.md "Usage"): one Query of the ledger's list index by `listSk` range (pages of up to 1 MB),
   * then a BatchGetItem of the charges' and refunds' items for their `keyId`, which the index does not project.
   * Reads in proportion to the entries in the range.
   */
  entriesBetween(organizationId: string, from: string, to: string): Promise<LedgerEntry[]>;
  /** IDs of every organization (the registry partition of gsi1), oldest first. */
  organizationIds(): Promise<string[]>;
  /**
   * An operator's adjustment of the smb balance by `credits` (may be negative) with its ledger entry.
   * The entry's ID derives from the organization and `adjustmentId` (a random one when absent), so the
   * same adjustment ID adjusts once: a retry after a lost answer finds its entry and moves nothing (issue #31).
   * @returns the balance after it (credits), the entry (none for an adjustment of 0, which writes nothing),
   *   and `replayed` when the adjustment ID had been applied already.
   * @throws NotFoundError for an unknown organization; RangeError when the balance would go below 0;
   *   AdjustmentIdReusedError when the adjustment ID was applied with another amount or note.
   * @param alsoPut - items written in the adjustment's transaction (the operator's audit entry, docs/audit.md).
   */
  adjust(
    organizationId: string,
    credits: number,
    note?: string,
    adjustmentId?: string,
    alsoPut?: readonly TransactItem[],
  ): Promise<{ balance: number; entry?: LedgerEntry; replayed?: boolean }>;
}

/** An operator's adjustment ID given again with another amount or note: nothing is written. */
export class AdjustmentIdReusedError extends Error {
  override name = 'AdjustmentIdReusedError';
  constructor(adjustmentId: string, entry: LedgerEntry) {
    super(
      `Adjustment ID "${adjustmentId}" was already applied as ${entry.amount > 0 ? '+' : ''}${entry.amount} credits${entry.note ? ` (note "${entry.note}")` : ''} at ${entry.createdAt}; use a new ID for another adjustment.`,
    );
  }
}

/** Reads of an audit before it gives up on a busy organization. */
const AUDIT_ROUNDS = 10;

/** A store method's factory (lib/db/methods.ts): an operation's bundle carries only the methods it names. */
type Method<K extends keyof LedgerStore> = StoreMethod<LedgerStore, K>;

/** {@link LedgerStore.page}. */
export const page: Method<'page'> =
  ({ client, tableName }) =>
  async (query) => {
    const index = query.campaignId
      ? query.kind
        ? LEDGER_INDEXES.byKindAndCampaign
        : LEDGER_INDEXES.byCampaign
      : query.kind
        ? LEDGER_INDEXES.byKind
        : LEDGER_INDEXES.all;
    const partitionKeys = keys.ledgerIndexes(query.organizationId, {
      id: '',
      createdAt: '',
      kind: query.kind ?? '',
      campaignId: query.campaignId ?? null,
    });
    const partitionKey = partitionKeys[index.partitionKey as keyof typeof partitionKeys];
    const { Items = [] } = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: index.indexName,
        KeyConditionExpression: query.after === undefined ? '#pk = :pk' : '#pk = :pk AND #sk < :after',
        ExpressionAttributeNames: { '#pk': index.partitionKey, ...(query.after === undefined ? {} : { '#sk': index.sortKey }) },
        ExpressionAttributeValues: { ':pk': partitionKey, ...(query.after === undefined ? {} : { ':after': query.after }) },
        ScanIndexForward: false,
        // One more than the page tells whether another page exists.
        Limit: query.limit + 1,
      }),
    );
    const items = Items.slice(0, query.limit);
    const last = items.at(-1);
    return {
      entries: items.map((item) => toLedgerEntry(item, query.organizationId)),
      hasMore: Items.length > query.limit,
      ...(last ? { last: String(last.listSk) } : {}),
    };
  };

/** {@link LedgerStore.entriesBetween}. */
export const entriesBetween: Method<'entriesBetween'> =
  ({ client, tableName }) =>
  async (organizationId, from, to) => {
    const index = LEDGER_INDEXES.all;
    const partition = keys.ledgerIndexes(organizationId, { id: '', createdAt: '', kind: '', campaignId: null });
    const listed: Record<string, unknown>[] = [];
    for await (const page of paginateQuery(
      { client },
      {
        TableName: tableName,
        IndexName: index.indexName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
        // listSk = createdAt#id: every entry stamped in [from, to) sorts between `from` and `to` (exclusive).
        ExpressionAttributeValues: { ':pk': partition[index.partitionKey as keyof typeof partition], ':from': from, ':to': to },
      },
    ))
      listed.push(...(page.Items ?? []).filter((item) => String(item.listSk) < to));
    const moved = listed.filter((item) => typeof item.campaignId === 'string');
    const stored = await batchGet(
      client,
      tableName,
      moved.map((item) => ({ pk: item.pk, sk: item.sk })),
      ['keyId'],
    );
    const keyIdOf = new Map(stored.map((item) => [`${String(item.pk)}|${String(item.sk)}`, item.keyId]));
    return listed.map((item) => {
      const keyId = keyIdOf.get(`${String(item.pk)}|${String(item.sk)}`);
      return toLedgerEntry({ ...item, ...(typeof keyId === 'string' ? { keyId } : {}) }, organizationId);
    });
  };

/** Builds the DynamoDB implementation of {@link LedgerStore}. */
export function createLedgerStore(table: TableAccess): LedgerStore {
  const { client, tableName } = table;
  const readOrganization = async (organizationId: string) => {
    const { Item } = await client.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.organization(organizationId),
        ConsistentRead: true,
        ProjectionExpression: 'smbCredits, ledgerEntries',
      }),
    );
    return Item && { balance: Number(Item.smbCredits), entries: Item.ledgerEntries === undefined ? undefined : Number(Item.ledgerEntries) };
  };

  /** Every campaign's `creditsCharged` (credits), by campaign ID: one consistent Query of the organization's campaign items. */
  const chargedOf = async (organizationId: string) => {
    const charged = new Map<string, number>();
    const pages = paginateQuery(
      { client },
      {
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.organization(organizationId).pk, ':prefix': keys.campaignPrefix() },
        ProjectionExpression: 'id, creditsCharged',
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) charged.set(String(item.id), Number(item.creditsCharged ?? 0));
    return charged;
  };

  /** Campaigns whose `creditsCharged` differs from minus the sum of their entries (a campaign with entries but no item counts as charged 0). */
  const campaignDriftOf = (
    organizationId: string,
    entries: readonly LedgerEntry[],
    charged: Map<string, number>,
  ): CampaignChargeDrift[] => {
    const ledgerCharged = new Map<string, number>();
    for (const entry of entries)
      if (entry.campaignId) ledgerCharged.set(entry.campaignId, (ledgerCharged.get(entry.campaignId) ?? 0) - entry.amount);
    const drift: CampaignChargeDrift[] = [];
    for (const campaignId of new Set([...charged.keys(), ...ledgerCharged.keys()])) {
      const onCampaign = charged.get(campaignId) ?? 0;
      const onLedger = ledgerCharged.get(campaignId) ?? 0;
      if (onCampaign !== onLedger)
        drift.push({ organizationId, campaignId, charged: onCampaign, ledgerCharged: onLedger, drift: onCampaign - onLedger });
    }
    return drift;
  };

  const entriesOf = async (organizationId: string, campaignId?: string) => {
    const entries: LedgerEntry[] = [];
    const pages = paginateQuery(
      { client },
      {
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.organization(organizationId).pk, ':prefix': keys.ledgerPrefix(campaignId) },
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) entries.push(toLedgerEntry(item));
    return entries.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  };

  return {
    entriesOf,

    page: page(table),

    entriesBetween: entriesBetween(table),

    async audit(organizationId) {
      for (let round = 0; ; round++) {
        const before = await readOrganization(organizationId);
        if (!before) return undefined;
        // Every movement of a campaign's credits writes its entry and bumps the entry counter in the same
        // transaction: entries and campaigns read between two equal counters are one instant's.
        const [entries, charged] = await Promise.all([entriesOf(organizationId), chargedOf(organizationId)]);
        const after = await readOrganization(organizationId);
        const quiet =
          after &&
          after.balance === before.balance &&
          after.entries === before.entries &&
          (before.entries === undefined || before.entries === entries.length);
        if (quiet || round + 1 >= AUDIT_ROUNDS) {
          return {
            organizationId,
            balance: after?.balance ?? before.balance,
            ledgerSum: sumOf(entries),
            entries: entries.length,
            campaignDrift: campaignDriftOf(organizationId, entries, charged),
          };
        }
      }
    },

    async organizationIds() {
      const items = await queryPartition(
        client,
        tableName,
        TABLE_INDEXES.all,
        keys.organizationRegistry({ id: '', createdAt: '' }).gsi1pk,
        ['id'],
      );
      return items.map((item) => String(item.id));
    },

    async adjust(organizationId, credits, note, adjustmentId, alsoPut = []) {
      if (credits === 0) {
        // Nothing moves, so nothing is written (no entry of 0 credits).
        const current = await readOrganization(organizationId);
        if (!current) throw new NotFoundError('organization', organizationId);
        return { balance: current.balance };
      }
      const movementId = adjustmentId ?? randomUUID();
      // Stamped when written (./ledger.ts transactMovement): entries only grow at the top.
      const { outcome, createdAt } = await transactMovement(
        client,
        (stamp) => {
          const items = movementItems(
            tableName,
            ledgerEntries.adjustment({ organizationId, credits, note: note ?? null, createdAt: stamp, movementId }),
            {
              condition: and({ expression: 'attribute_exists(pk)' }, balanceCovers(Math.max(0, -credits))),
            },
          );
          // The entry as it was when its Put failed: a retried adjustment ID.
          if (items[1]?.Put) items[1].Put.ReturnValuesOnConditionCheckFailure = 'ALL_OLD';
          return { TransactItems: [...items, ...alsoPut] };
        },
        0,
      );
      const entry = ledgerEntries.adjustment({ organizationId, credits, note: note ?? null, createdAt, movementId });
      if (!outcome.ok) {
        // The entry exists: this adjustment ID was applied already (a retry), whatever the balance says now.
        const applied = outcome.failed.includes(1) ? outcome.old[1] : undefined;
        if (applied && adjustmentId !== undefined) {
          const existing = toLedgerEntry(applied);
          if (existing.amount !== entry.amount || existing.note !== entry.note) throw new AdjustmentIdReusedError(adjustmentId, existing);
          const current = await readOrganization(organizationId);
          return { balance: current?.balance ?? 0, entry: existing, replayed: true };
        }
        const old = outcome.old[0];
        if (!old) throw new NotFoundError('organization', organizationId);
        throw new RangeError(`The smb balance is ${String(old.smbCredits)} credits; removing ${-credits} would make it negative.`);
      }
      const after = await readOrganization(organizationId);
      return { balance: after?.balance ?? 0, entry };
    },
  };
}
