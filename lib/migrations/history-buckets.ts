/**
 * One-off migration of the account history from its fixed shards (4,096
 * items per organization, `ORG#<org>#HISTORY#<shard>` / `HISTORY`, type
 * `accountHistory`, until issue #43) into the buckets of lib/history/store.ts
 * (docs/data-model.md "Recency and CRM targets").
 *
 * Each shard's entries are written into the buckets (times move forward
 * only, CRM flags are kept), and only then is the shard deleted: a run
 * stopped at any point writes the same entries again and deletes what is
 * left, and a second run finds no shard. Completions that land meanwhile
 * write into the buckets; an entry both places hold keeps the later time.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { chunk } from '../db/batch';
import { scanItems } from '../db/query';
import type { AccountHistoryStore, HistoryChange } from '../history/store';

/** What {@link migrateHistoryBuckets} changed. */
export interface HistoryBucketsMigration {
  /** Organizations whose shards were moved. */
  organizations: number;
  /** Shards read, written into buckets and deleted. */
  shards: number;
  /** Entries (accounts) written into buckets. */
  accounts: number;
}

/** Shards' entries written into buckets per `record` call (bounds the memory of a large organization's move). */
const ENTRIES_PER_WRITE = 20_000;

/** The item type of a former shard. */
const SHARD_TYPE = 'accountHistory';

/**
 * Reads a former shard's `entries`: one line per account,
 * `<accountId>\t<enrichedAt, base 36 epoch ms, or empty>[\tc]` (`c`: CRM target).
 */
export function legacyShardChanges(entries: string): HistoryChange[] {
  const changes: HistoryChange[] = [];
  for (const line of entries.split('\n')) {
    const [accountId, time, crm] = line.split('\t');
    if (!accountId || time === undefined) continue;
    const ms = time === '' ? undefined : Number.parseInt(time, 36);
    changes.push({
      accountId,
      ...(ms !== undefined && ms > 0 ? { enrichedAt: new Date(ms).toISOString() } : {}),
      ...(crm === 'c' ? { crmTarget: true } : {}),
    });
  }
  return changes;
}

/** Organization ID of a shard key `ORG#<org>#HISTORY#<shard>`. */
const organizationOf = (pk: unknown): string => String(pk).slice('ORG#'.length, String(pk).lastIndexOf('#HISTORY#'));

/**
 * Runs the migration; a second run changes nothing.
 * @param options.afterWrite - called after each group's entries are written, before its shards are deleted (tests stop a run there).
 */
export async function migrateHistoryBuckets(
  deps: { client: DynamoDBDocumentClient; tableName: string; history: AccountHistoryStore },
  options: { afterWrite?: () => Promise<void> | void } = {},
): Promise<HistoryBucketsMigration> {
  const result: HistoryBucketsMigration = { organizations: 0, shards: 0, accounts: 0 };
  const organizations = new Set<string>();
  const buffered = new Map<string, { keys: { pk: unknown; sk: unknown }[]; changes: HistoryChange[] }>();

  const flush = async (organizationId: string) => {
    const group = buffered.get(organizationId);
    if (!group || group.keys.length === 0) return;
    buffered.delete(organizationId);
    await deps.history.record(organizationId, group.changes);
    await options.afterWrite?.();
    // Only after the entries are written: a run stopped before this point moves the same shards again.
    for (const keys of chunk(group.keys, 25)) {
      let pending: Record<string, unknown>[] = keys.map((Key) => ({ DeleteRequest: { Key } }));
      while (pending.length > 0) {
        const { UnprocessedItems } = await deps.client.send(
          new BatchWriteCommand({ RequestItems: { [deps.tableName]: pending as never } }),
        );
        pending = (UnprocessedItems?.[deps.tableName] as Record<string, unknown>[] | undefined) ?? [];
      }
    }
    organizations.add(organizationId);
    result.shards += group.keys.length;
    result.accounts += group.changes.length;
  };

  for await (const item of scanItems(deps.client, deps.tableName, '#type = :shard', { ':shard': SHARD_TYPE })) {
    const organizationId = organizationOf(item.pk);
    let group = buffered.get(organizationId);
    if (!group) buffered.set(organizationId, (group = { keys: [], changes: [] }));
    group.keys.push({ pk: item.pk, sk: item.sk });
    if (typeof item.entries === 'string') group.changes.push(...legacyShardChanges(item.entries));
    if (group.changes.length >= ENTRIES_PER_WRITE) await flush(organizationId);
  }
  for (const organizationId of [...buffered.keys()]) await flush(organizationId);
  result.organizations = organizations.size;
  return result;
}
