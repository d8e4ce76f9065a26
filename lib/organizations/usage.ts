/**
 * `POST /v1/org/usage` (docs/authentication.md "Usage"): an organization's requests and credits over a range of UTC
 * days, one row per day, API key or campaign.
 *
 * - Requests: the request day items the limiter writes (lib/http/request-counts.ts), one Query of the organization's
 *   partition over the range: one item (< 1 KB) per day with requests.
 * - Credits: the ledger's entries written in the range (lib/credits/store.ts `entriesBetween`), charges and refunds
 *   by their `keyId`, campaign and day.
 *
 * Requests are counted per key and day only, never per campaign (that count would grow the day item with the
 * campaigns touched): campaign rows carry `requests: null`.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys } from '../db/table';
import { dayOf, requestsPerKey, UNNAMED_KEY } from '../http/request-counts';
import type { LedgerStore } from '../credits/store';
import type { UsageInput } from './schema';

/** One row of usage: the group's key, its requests and the credits charged and refunded in the range. */
export type UsageRow = ({ day: string } | { keyId: string } | { campaignId: string }) & {
  /** Authenticated requests (refusals included); null for campaign rows (not counted per campaign). */
  requests: number | null;
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

/** Builds the DynamoDB {@link RequestDayReader}: one Query (pages of 1 MB) of the organization's request days. */
export function createRequestDayReader({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): RequestDayReader {
  return async (organizationId, from, to) => {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: {
            ':pk': keys.requestDay(organizationId, from).pk,
            ':from': keys.requestDay(organizationId, from).sk,
            ':to': keys.requestDay(organizationId, to).sk,
          },
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  };
}

/** What {@link orgUsage} needs. */
export interface UsageDependencies {
  requestDays: RequestDayReader;
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
  const [days, entries] = await Promise.all([
    deps.requestDays(organizationId, from, to),
    deps.ledger.entriesBetween(organizationId, `${from}T00:00:00.000Z`, end),
  ]);
  const rows = new Map<string, { requests: number; creditsCharged: number; creditsRefunded: number }>();
  const row = (group: string) => {
    let found = rows.get(group);
    if (!found) rows.set(group, (found = { requests: 0, creditsCharged: 0, creditsRefunded: 0 }));
    return found;
  };
  if (groupBy !== 'campaign')
    for (const item of days)
      for (const [keyId, n] of requestsPerKey(item)) {
        if (groupBy === 'key' && keyId === UNNAMED_KEY) continue; // keys from before key IDs: counted in days only
        row(groupBy === 'day' ? dayOf(item) : keyId).requests += n;
      }
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
      .map(([group, r]) => ({ [field]: group, ...r, ...(groupBy === 'campaign' ? { requests: null } : {}) }) as UsageRow),
  };
}
