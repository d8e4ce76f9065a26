/**
 * One-off migration of account history written before recency markers
 * (docs/data-model.md "Recency and CRM targets"), idempotent: `npm start`
 * runs it on its data folder after the ledger migration.
 *
 * 1. Per-account `ENRICHED` items are written into the account history
 *    (lib/history/store.ts, grouped by organization and completion time),
 *    then deleted. Each held only the account's latest enrichment: the
 *    classification (the latest completion per account) is unchanged.
 * 2. Campaigns still in the old recency-pending index (`gsi6pk`
 *    `ORG#…#RECENCY_PENDING`: completed, per-account times not all written)
 *    get their eligible list recorded, then leave the index.
 * 3. Per-account `CRM` items become CRM targets of the history, then are deleted.
 *
 * (Until issue #29 the history was S3 markers and CRM lists, which this
 * migration wrote; it now writes the history store as it is.)
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { scanItems } from '../db/query';
import { chunk } from '../db/batch';
import { updateIf } from '../db/conditional';
import { updateParts } from '../db/expression';
import * as keys from '../db/keys';
import * as campaignChanges from '../campaigns/changes';
import type { AccountHistoryStore } from '../history/store';

/** What {@link migrateAccountHistory} changed. */
export interface HistoryMigration {
  /** Recency markers written (from ENRICHED items and from pending campaigns). */
  markers: number;
  /** ENRICHED items deleted. */
  enrichmentItems: number;
  /** CRM items moved into CRM lists. */
  crmItems: number;
}

/** Organization ID in a legacy per-account key `ORG#<org>#ACCOUNT#<account>`. */
const organizationOf = (pk: unknown): string => String(pk).slice('ORG#'.length, String(pk).indexOf('#ACCOUNT#'));

/** Runs the migration; a second run changes nothing. */
export async function migrateAccountHistory({
  client,
  tableName,
  history,
}: {
  client: DynamoDBDocumentClient;
  tableName: string;
  history: AccountHistoryStore;
}): Promise<HistoryMigration> {
  const result: HistoryMigration = { markers: 0, enrichmentItems: 0, crmItems: 0 };
  // One scan for the three kinds (a start on a large data folder reads the table once more, not three times).
  const legacy: Record<string, unknown>[] = [];
  for await (const item of scanItems(
    client,
    tableName,
    '#type IN (:enriched, :crm) OR (#type = :campaign AND begins_with(gsi6pk, :org) AND attribute_exists(completedAt))',
    {
      ':enriched': 'accountEnrichment',
      ':crm': 'crmTarget',
      ':campaign': 'campaign',
      ':org': 'ORG#',
    },
  )) {
    legacy.push(item);
  }
  const ofType = (type: string) => legacy.filter((item) => item.type === type);
  const deleteItems = async (items: readonly Record<string, unknown>[]) => {
    for (const group of chunk(items, 25)) {
      let pending: Record<string, unknown>[] = group.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } }));
      while (pending.length > 0) {
        const { UnprocessedItems } = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending as never } }));
        pending = (UnprocessedItems?.[tableName] as Record<string, unknown>[] | undefined) ?? [];
      }
    }
  };

  const enriched = ofType('accountEnrichment');
  const groups = new Map<string, { organizationId: string; campaignId: string; enrichedAt: string; accountIds: string[] }>();
  for (const item of enriched) {
    const organizationId = organizationOf(item.pk);
    const group = `${organizationId}\u0000${String(item.campaignId)}\u0000${String(item.lastEnrichedAt)}`;
    if (!groups.has(group))
      groups.set(group, { organizationId, campaignId: String(item.campaignId), enrichedAt: String(item.lastEnrichedAt), accountIds: [] });
    groups.get(group)!.accountIds.push(String(item.accountId));
  }
  for (const group of groups.values()) {
    await history.recordEnrichment(group.organizationId, group.accountIds, group.enrichedAt);
    result.markers++;
  }
  await deleteItems(enriched);
  result.enrichmentItems = enriched.length;

  // After the ENRICHED groups: a pending campaign's full eligible list replaces the partial marker of the same completion.
  for (const campaign of ofType('campaign')) {
    const attempt = campaign.attempt as { id: string; eligibleObjectKey: string } | undefined;
    const organizationId = String(campaign.organizationId);
    if (!attempt || String(campaign.gsi6pk) !== keys.recencyPending(organizationId).gsi6pk) continue;
    await history.recordCompletion(organizationId, String(campaign.id), String(campaign.completedAt), attempt.eligibleObjectKey);
    await updateIf(client, {
      TableName: tableName,
      Key: keys.campaign(organizationId, String(campaign.id)),
      ...updateParts(campaignChanges.finishRecording(), { expression: 'attribute_exists(gsi6pk)' }),
      ReturnValues: 'NONE',
    });
    result.markers++;
  }

  const crm = ofType('crmTarget');
  const byOrganization = new Map<string, string[]>();
  for (const item of crm) {
    const organizationId = organizationOf(item.pk);
    if (!byOrganization.has(organizationId)) byOrganization.set(organizationId, []);
    byOrganization.get(organizationId)!.push(String(item.accountId));
  }
  for (const [organizationId, accountIds] of byOrganization) await history.addCrmTargets(organizationId, accountIds);
  await deleteItems(crm);
  result.crmItems = crm.length;
  return result;
}
