/**
 * What an organization knows of individual accounts: when it last completed
 * an enrichment of each (recency exclusion) and which are CRM targets (CRM
 * exclusion). docs/launch.md, README.md#operator-cli; docs/data-model.md "Recency and CRM targets".
 *
 * Keyed by account, not by campaign: each account has one entry, in one of
 * {@link HISTORY_SHARDS} DynamoDB items per organization chosen by a hash of
 * its ID (`ORG#<org>#HISTORY#<shard>` / `HISTORY`, lib/db/table.ts
 * `keys.accountHistoryShard`). An entry holds the account's last enrichment
 * time (epoch milliseconds) and whether it is a CRM target; a later
 * completion replaces the time, so the organization's history holds each
 * account once however many campaigns enriched it.
 *
 * - A launch or a quote reads the shards of its own account IDs (strongly
 *   consistent BatchGetItem, 100 keys a call): at most one item per
 *   requested account, never the organization's campaigns or CRM lists.
 * - A completion rewrites the shards its accounts fall in (read, merge,
 *   conditional put on the shard's version, retried when a concurrent
 *   writer got there first): a 100,000-account completion writes at most
 *   4,096 items, not one per account (per-account items cost 1 WRU each,
 *   $0.000625 per 1,000 accounts; the measured figures are in
 *   docs/data-model.md).
 * - Entries are kept as long as the longest window (3,650 days,
 *   {@link HISTORY_RETENTION_DAYS}): each rewrite drops older enrichment
 *   times, and a shard holding no CRM target carries the table's `ttl`
 *   (its newest time + 3,650 days). CRM targets stay until removed.
 *
 * Shard item: `entries` (string), one line per account:
 * `<accountId>\t<enrichedAt, base 36 epoch ms, or empty>[\tc]` (`c`: CRM
 * target); account IDs hold no control characters (lib/account-lists/schema.ts).
 * `version` (number) orders the rewrites. At ~25 bytes an entry, DynamoDB's
 * 400 KB item limit holds ~16,000 accounts a shard: ~65 million distinct
 * accounts (enriched within 3,650 days, or CRM targets) per organization.
 */
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import pMap from 'p-map';
import type { PendingRecency } from './recency-pending';
import type { AccountListStore } from '../account-lists/account-list';
import { batchGet } from '../db/batch';
import { keys } from '../db/table';

/** Facts about one account for one organization. */
export interface AccountFacts {
  /** ISO time the organization's last enrichment of the account completed (when inside the window read). */
  lastEnrichedAt?: string;
  crmTarget: boolean;
}

/** Options of {@link AccountHistoryStore.getFacts}. */
export interface FactsOptions {
  /** Return enrichment times too (default true); without it only CRM targets are returned. */
  recency?: boolean;
  /**
   * Epoch milliseconds: an enrichment time is returned only when strictly
   * after it (the recency window's start, lib/enrichment/evaluate.ts).
   * Default: any time.
   */
  enrichedAfter?: number;
  /**
   * Completions whose entries are not written yet (lib/history/recency-pending.ts,
   * read from the organization item BEFORE this call): their accounts count as
   * enriched at the campaign's `completedAt` (recency starts when a campaign
   * reaches `enriched`, docs/launch.md). Only those after `enrichedAfter` are read.
   */
  pending?: readonly PendingRecency[];
}

/** One change to an account's history ({@link AccountHistoryStore.record}). */
export interface HistoryChange {
  accountId: string;
  /** ISO 8601: the account was enriched then (kept only when later than the time stored). */
  enrichedAt?: string;
  /** true: the account becomes a CRM target. */
  crmTarget?: boolean;
}

/** Data access for account enrichment times and CRM targets. */
export interface AccountHistoryStore {
  /**
   * Facts for the given accounts (accounts with none are absent): one
   * strongly consistent read of each shard the IDs fall in, nothing else.
   */
  getFacts(organizationId: string, accountIds: readonly string[], options?: FactsOptions): Promise<Map<string, AccountFacts>>;
  /** Adds CRM targets; returns how many distinct IDs were written. Idempotent. */
  addCrmTargets(organizationId: string, accountIds: readonly string[]): Promise<number>;
  /**
   * Records that the accounts were enriched at `enrichedAt`: each account's
   * time moves forward only, so a rerun or an older time changes nothing.
   */
  recordEnrichment(organizationId: string, accountIds: readonly string[], enrichedAt: string): Promise<void>;
  /**
   * Records a completed campaign: every account of its eligible list (object
   * `eligibleObjectKey`) enriched at `completedAt`. Idempotent.
   */
  recordCompletion(organizationId: string, campaignId: string, completedAt: string, eligibleObjectKey: string): Promise<void>;
  /**
   * Applies many changes at once (migration, seeding), each shard rewritten
   * once. Idempotent; times move forward only.
   * @returns shards rewritten.
   */
  record(organizationId: string, changes: Iterable<HistoryChange>): Promise<number>;
}

/** Shards per organization. A power of two; changing it needs a migration (entries are found by `shardOf`). */
export const HISTORY_SHARDS = 4096;

/** Days an enrichment time is kept: the longest recency window (docs/launch.md; MAX_EXCLUDE_DAYS in lib/campaigns/schema.ts). */
export const HISTORY_RETENTION_DAYS = 3650;

const RETENTION_MS = HISTORY_RETENTION_DAYS * 86_400_000;

/** Shard rewrites in flight at once. */
const WRITE_CONCURRENCY = 32;

/** The shard of an account: FNV-1a (32-bit) of its ID's UTF-16 code units, modulo {@link HISTORY_SHARDS}. */
export function shardOf(accountId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) {
    hash ^= accountId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) & (HISTORY_SHARDS - 1);
}

/** One account's entry in a shard. */
interface Entry {
  /** Epoch ms of the last enrichment, if any. */
  at?: number;
  crm: boolean;
}

/** Decodes a shard's `entries` attribute, calling `onEntry` for each line. */
function forEachEntry(entries: string, onEntry: (accountId: string, entry: Entry) => void): void {
  let start = 0;
  while (start < entries.length) {
    let end = entries.indexOf('\n', start);
    if (end < 0) end = entries.length;
    const tab = entries.indexOf('\t', start);
    if (tab > start && tab < end) {
      const second = entries.indexOf('\t', tab + 1);
      const timeEnd = second > tab && second < end ? second : end;
      const time = entries.slice(tab + 1, timeEnd);
      onEntry(entries.slice(start, tab), { ...(time === '' ? {} : { at: Number.parseInt(time, 36) }), crm: timeEnd < end });
    }
    start = end + 1;
  }
}

/** Encodes a shard's entries (the module comment's layout). */
function encodeEntries(entries: ReadonlyMap<string, Entry>): string {
  const lines: string[] = [];
  for (const [accountId, entry] of entries) lines.push(`${accountId}\t${entry.at === undefined ? '' : entry.at.toString(36)}${entry.crm ? '\tc' : ''}`);
  return lines.join('\n');
}

/** Epoch ms of an ISO time. @throws RangeError for an invalid time. */
const msOf = (time: string): number => {
  const ms = Date.parse(time);
  if (Number.isNaN(ms)) throw new RangeError(`Invalid enrichment time: ${time}`);
  return ms;
};

/**
 * The item of one shard holding `entries`, as the store writes it: entries
 * older than the retention dropped (CRM targets kept, without their time),
 * `ttl` (epoch seconds) = newest time + retention when no CRM target is in it.
 * @returns undefined when nothing is left to keep.
 */
export function historyShardItem(organizationId: string, shard: number, entries: ReadonlyMap<string, Entry>, version: number, now = Date.now()): Record<string, unknown> | undefined {
  const kept = new Map<string, Entry>();
  let newest = 0;
  let crm = false;
  for (const [accountId, entry] of entries) {
    const at = entry.at !== undefined && entry.at + RETENTION_MS > now ? entry.at : undefined;
    if (at === undefined && !entry.crm) continue;
    kept.set(accountId, { ...(at === undefined ? {} : { at }), crm: entry.crm });
    if (at !== undefined && at > newest) newest = at;
    crm ||= entry.crm;
  }
  if (kept.size === 0) return undefined;
  return {
    ...keys.accountHistoryShard(organizationId, shard),
    type: 'accountHistory',
    entries: encodeEntries(kept),
    version,
    ...(crm ? {} : { ttl: Math.ceil((newest + RETENTION_MS) / 1000) }),
  };
}

/** Builds the DynamoDB implementation of {@link AccountHistoryStore}. */
export function createAccountHistoryStore({
  client,
  tableName,
  accountLists,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Reads a completed campaign's eligible list ({@link AccountHistoryStore.recordCompletion}). */
  accountLists: Pick<AccountListStore, 'get'>;
}): AccountHistoryStore {
  /** Reads shards (strongly consistent) into `onShard(shard, item)`. */
  const readShards = async (organizationId: string, shards: readonly number[], projection?: readonly string[]) => {
    const items = await batchGet(
      client,
      tableName,
      shards.map((shard) => keys.accountHistoryShard(organizationId, shard)),
      projection,
      // Strongly consistent: a completion that left the organization item's pending list is seen (lib/history/recency-pending.ts).
      { consistentRead: true },
    );
    const byShard = new Map<number, Record<string, unknown>>();
    for (const item of items) byShard.set(Number(String(item.pk).slice(String(item.pk).lastIndexOf('#') + 1)), item);
    return byShard;
  };

  /** Merges one shard's changes: read, merge, put if the version is still the one read; again on a lost race. */
  const rewriteShard = async (organizationId: string, shard: number, changes: readonly HistoryChange[], read: Record<string, unknown> | undefined): Promise<void> => {
    let current = read;
    for (let attempt = 0; ; attempt++) {
      const entries = new Map<string, Entry>();
      if (typeof current?.entries === 'string') forEachEntry(current.entries, (accountId, entry) => entries.set(accountId, entry));
      let changed = false;
      for (const change of changes) {
        const known = entries.get(change.accountId);
        const at = change.enrichedAt === undefined ? undefined : msOf(change.enrichedAt);
        const next: Entry = {
          ...(known?.at !== undefined || at !== undefined ? { at: Math.max(known?.at ?? -Infinity, at ?? -Infinity) } : {}),
          crm: (known?.crm ?? false) || change.crmTarget === true,
        };
        if (next.at !== known?.at || next.crm !== known?.crm) changed = true;
        entries.set(change.accountId, next);
      }
      if (!changed) return;
      const version = typeof current?.version === 'number' ? current.version : 0;
      const item = historyShardItem(organizationId, shard, entries, version + 1);
      if (!item) return;
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ConditionExpression: current ? '#version = :version' : 'attribute_not_exists(pk)',
            ...(current ? { ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':version': version } } : {}),
          }),
        );
        return;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || attempt >= 20) throw error;
        current = (await readShards(organizationId, [shard])).get(shard);
      }
    }
  };

  const record = async (organizationId: string, changes: Iterable<HistoryChange>): Promise<number> => {
    const byShard = new Map<number, HistoryChange[]>();
    for (const change of changes) {
      const shard = shardOf(change.accountId);
      let list = byShard.get(shard);
      if (!list) byShard.set(shard, (list = []));
      list.push(change);
    }
    const shards = [...byShard.keys()];
    const read = await readShards(organizationId, shards);
    await pMap(shards, (shard) => rewriteShard(organizationId, shard, byShard.get(shard)!, read.get(shard)), { concurrency: WRITE_CONCURRENCY });
    return shards.length;
  };

  const recordEnrichment = async (organizationId: string, accountIds: readonly string[], enrichedAt: string) => {
    const at = new Date(msOf(enrichedAt)).toISOString();
    await record(organizationId, (function* () {
      for (const accountId of new Set(accountIds)) yield { accountId, enrichedAt: at };
    })());
  };

  return {
    async getFacts(organizationId, accountIds, options = {}) {
      const wanted = new Set(accountIds);
      const shards = [...new Set([...wanted].map(shardOf))];
      const read = await readShards(organizationId, shards, ['entries']);
      const recency = options.recency ?? true;
      const after = options.enrichedAfter ?? -Infinity;
      const facts = new Map<string, AccountFacts>();
      for (const item of read.values()) {
        if (typeof item.entries !== 'string') continue;
        forEachEntry(item.entries, (accountId, entry) => {
          if (!wanted.has(accountId)) return;
          const recent = recency && entry.at !== undefined && entry.at > after;
          if (!recent && !entry.crm) return;
          facts.set(accountId, { crmTarget: entry.crm, ...(recent ? { lastEnrichedAt: new Date(entry.at!).toISOString() } : {}) });
        });
      }
      if (recency) {
        // Completions whose entries are not written yet: their eligible lists, read whole (normally none).
        for (const entry of options.pending ?? []) {
          if (Date.parse(entry.completedAt) <= after) continue;
          for (const accountId of await accountLists.get(entry.eligibleObjectKey)) {
            if (!wanted.has(accountId)) continue;
            const known = facts.get(accountId);
            if (!known?.lastEnrichedAt || known.lastEnrichedAt < entry.completedAt) facts.set(accountId, { crmTarget: known?.crmTarget ?? false, lastEnrichedAt: entry.completedAt });
          }
        }
      }
      return facts;
    },

    async addCrmTargets(organizationId, accountIds) {
      const distinct = [...new Set(accountIds)];
      await record(organizationId, distinct.map((accountId) => ({ accountId, crmTarget: true })));
      return distinct.length;
    },

    recordEnrichment,

    async recordCompletion(organizationId, _campaignId, completedAt, eligibleObjectKey) {
      await recordEnrichment(organizationId, await accountLists.get(eligibleObjectKey), completedAt);
    },

    record,
  };
}
