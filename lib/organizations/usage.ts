/**
 * `POST /v1/org/usage` (docs/authentication.md "Usage"): an organization's requests and credits over a range of UTC
 * days, one row per day, API key or campaign.
 *
 * - Requests by day: the request day items the limiter writes (lib/http/request-counts.ts), one Query of the
 *   organization's partition over the range: one item (< 1 KB) per day with requests, one per row.
 * - Requests by key or campaign: the usage months the limiter writes beside them, one Query of the months the range
 *   touches (at most 4): one item (< 1 KB) per key or campaign and month, so at most 4 items per row.
 * - Credits: the ledger's entries written in the range (lib/credits/store.ts `entriesBetween`), charges and refunds
 *   by their `keyId`, campaign and day.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as keys from '../db/keys';
import { dayOf, requestsPerDay, requestsPerKey, usageIdOf, type UsageKind } from '../http/request-counts';
import type { LedgerStore } from '../credits/store';
import type { UsageInput } from './schema';

/** One row of usage: the group's key, its requests and the credits charged and refunded in the range. */
export type UsageRow = ({ day: string } | { keyId: string } | { campaignId: string }) & {
  /** Authenticated requests (refusals included); on a campaign row, the requests whose body named the campaign. */
  requests: number;
  creditsCharged: number;
  creditsRefunded: number;
};

/** The answer of `org/usage`. */
export interface Usage {
  from: string;
  to: string;
  rows: UsageRow[];
}

/** Reads the request day items of an organization over a range of days. */
export type RequestDayReader = (organizationId: string, from: string, to: string) => Promise<Record<string, unknown>[]>;

/** Every item of one partition whose sort key is in `[from, to]`: one Query, followed page by page (1 MB each). */
async function itemsBetween(
  client: DynamoDBDocumentClient,
  tableName: string,
  pk: string,
  from: string,
  to: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Builds the DynamoDB {@link RequestDayReader}: one Query (pages of 1 MB) of the organization's request days. */
export function createRequestDayReader({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): RequestDayReader {
  return (organizationId, from, to) =>
    itemsBetween(
      client,
      tableName,
      keys.requestDay(organizationId, from).pk,
      keys.requestDay(organizationId, from).sk,
      keys.requestDay(organizationId, to).sk,
    );
}

/** Reads the usage month items of one kind (`K` keys, `C` campaigns) of an organization over a range of months (`YYYY-MM`). */
export type UsageMonthReader = (
  organizationId: string,
  kind: UsageKind,
  fromMonth: string,
  toMonth: string,
) => Promise<Record<string, unknown>[]>;

/** Builds the DynamoDB {@link UsageMonthReader}: one Query (pages of 1 MB) of the organization's usage months. */
export function createUsageMonthReader({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): UsageMonthReader {
  return (organizationId, kind, fromMonth, toMonth) =>
    itemsBetween(
      client,
      tableName,
      keys.usageMonths(organizationId),
      keys.usageMonth(organizationId, kind, fromMonth, '').sk,
      `${keys.usageMonth(organizationId, kind, toMonth, '').sk}\uffff`,
    );
}

/** What {@link orgUsage} needs. */
export interface UsageDependencies {
  requestDays: RequestDayReader;
  usageMonths: UsageMonthReader;
  ledger: Pick<LedgerStore, 'entriesBetween'>;
}

/**
 * The organization's usage over `[from, to]` (UTC days, both included), grouped as asked; rows with neither a
 * request nor a credit are left out; sorted by day, key ID or campaign ID.
 * @throws the table's errors.
 */
export async function orgUsage(deps: UsageDependencies, organizationId: string, input: UsageInput): Promise<Usage> {
  const { from, to, groupBy } = input;
  const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString();
  const [days, months, entries] = await Promise.all([
    groupBy === 'day' ? deps.requestDays(organizationId, from, to) : [],
    groupBy === 'day' ? [] : deps.usageMonths(organizationId, groupBy === 'key' ? 'K' : 'C', from.slice(0, 7), to.slice(0, 7)),
    deps.ledger.entriesBetween(organizationId, `${from}T00:00:00.000Z`, end),
  ]);
  const rows = new Map<string, { requests: number; creditsCharged: number; creditsRefunded: number }>();
  const row = (group: string) => {
    let found = rows.get(group);
    if (!found) rows.set(group, (found = { requests: 0, creditsCharged: 0, creditsRefunded: 0 }));
    return found;
  };
  for (const item of days) for (const [, n] of requestsPerKey(item)) row(dayOf(item)).requests += n;
  // Keys from before key IDs are counted in day rows only (they have no usage months).
  for (const item of months) for (const [day, n] of requestsPerDay(item)) if (day >= from && day <= to) row(usageIdOf(item)).requests += n;
  for (const entry of entries) {
    if (entry.kind === 'adjustment') continue;
    const group = groupBy === 'day' ? entry.createdAt.slice(0, 10) : groupBy === 'key' ? entry.keyId : entry.campaignId;
    if (group === undefined || group === null) continue;
    if (entry.kind === 'charge') row(group).creditsCharged += -entry.amount;
    else row(group).creditsRefunded += entry.amount;
  }
  const field = groupBy === 'day' ? 'day' : groupBy === 'key' ? 'keyId' : 'campaignId';
  return {
    from,
    to,
    rows: [...rows.entries()]
      .filter(([, r]) => r.requests !== 0 || r.creditsCharged !== 0 || r.creditsRefunded !== 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([group, r]) => ({ [field]: group, ...r }) as UsageRow),
  };
}
