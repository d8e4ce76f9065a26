/**
 * Fixtures of the hostile suite: organizations with campaigns in every state
 * (through the API where the API can reach the state, written to the table
 * where it cannot), and a snapshot of everything an organization owns in the
 * table, to prove that invalid or foreign requests change nothing.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { customAlphabet } from 'nanoid';
import { ddb } from '../../../lib/aws';
import { config } from '../../../lib/config';
import * as keys from '../../../lib/db/keys';
import { hashApiKey, newCampaignId } from '../../../lib/ids';
import { accountListKey } from '../../../lib/account-lists/account-list';
import type { CampaignRecord } from '../../../lib/campaigns/model';
import { campaigns } from '../../../lib/root';
import { pendingRecencyAttribute } from '../../../lib/history/recency-pending';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { account, contact, importAccounts, pollUntil, uniquePrefix } from '../../enrichment/support';
import { sendJson } from './contract';

export { uniquePrefix };

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const attemptSuffix = customAlphabet('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 21);

/**
 * Every item of an organization's partition (organization, campaigns, ledger)
 * and its API key item, read strongly consistent: what "the database is
 * unchanged" compares.
 */
export async function organizationSnapshot(
  organizationId: string,
  apiKey?: string,
): Promise<{ items: Record<string, unknown>[]; apiKey?: Record<string, unknown> }> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new QueryCommand({
        TableName: config.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.organization(organizationId).pk },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  items.sort((a, b) => String(a.sk).localeCompare(String(b.sk)));
  if (!apiKey) return { items };
  const { Item } = await ddb.send(
    new GetCommand({ TableName: config.tableName, Key: keys.apiKey(hashApiKey(apiKey)), ConsistentRead: true }),
  );
  return { items, ...(Item ? { apiKey: Item } : {}) };
}

/** The raw campaign item (with its launch lock, which the store's records leave out). */
export async function rawCampaignItem(organizationId: string, campaignId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: config.tableName, Key: keys.campaign(organizationId, campaignId), ConsistentRead: true }),
  );
  return Item;
}

/** The raw organization item (with its pending recency attributes, which the store's records leave out). */
export async function rawOrganizationItem(organizationId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: config.tableName, Key: keys.organization(organizationId), ConsistentRead: true }),
  );
  return Item;
}

/** Imports `count` active accounts `<prefix>_<i>`, each with `contacts` contacts (0: none). */
export async function warehouseAccounts(prefix: string, count: number, contacts = 1): Promise<string[]> {
  const accounts = Array.from({ length: count }, (_, i) =>
    account(
      `${prefix}_${i}`,
      'active',
      Array.from({ length: contacts }, (_, j) => contact(`${prefix}_${i}_c${j}`, { mobile: j === 0 })),
    ),
  );
  await importAccounts(accounts);
  return accounts.map((a) => a.accountId);
}

/** Creates an API draft over HTTP; returns its ID. */
export async function createDraft(
  baseUrl: string,
  apiKey: string,
  accountIds: string[],
  name = `Draft ${accountIds.length}`,
): Promise<string> {
  const res = await sendJson(baseUrl, '/v1/campaigns/create', apiKey, { name, accountIds });
  if (res.status !== 200) throw new Error(`create failed: ${res.text}`);
  return res.body.data.id as string;
}

/** Creates, launches and waits for an enriched campaign over HTTP (the real workflow); returns its ID. */
export async function createEnriched(
  baseUrl: string,
  apiKey: string,
  accountIds: string[],
  name = `Enriched ${accountIds.length}`,
): Promise<string> {
  const id = await createDraft(baseUrl, apiKey, accountIds, name);
  const launched = await sendJson(baseUrl, '/v1/campaigns/enrich', apiKey, { campaignId: id });
  if (launched.status !== 200) throw new Error(`enrich failed: ${launched.text}`);
  await pollUntil(
    () => sendJson(baseUrl, '/v1/campaigns/get', apiKey, { campaignId: id }),
    (r) => r.status === 200 && r.body.data.status === 'enriched',
  );
  // The workflow goes on recording enrichment times: wait until it has finished with both items it still writes —
  // the campaign (its recency-pending mark) and, last, the organization (its `recencyPending_<campaignId>` attribute,
  // removed by FinishRecording) — so a snapshot taken now stays true while the execution waits for the results' expiry.
  const organizationId = (await sendJson(baseUrl, '/v1/org/describe', apiKey)).body.data.organization.id as string;
  await pollUntil(
    () => rawCampaignItem(organizationId, id),
    (item) => item !== undefined && item.gsi6pk === undefined,
  );
  await pollUntil(
    () => rawOrganizationItem(organizationId),
    (item) => item !== undefined && !(pendingRecencyAttribute(id) in item),
  );
  return id;
}

/** A campaign record in any state, written straight to the table (states the API cannot reach on demand). */
export async function directCampaign(
  organizationId: string,
  state: 'enriching' | 'expired' | 'tam_only' | 'ui_draft' | 'data_cube_draft',
  name: string,
): Promise<string> {
  const id = newCampaignId();
  const now = Date.now();
  const attemptId = `att_${attemptSuffix()}`;
  const base: CampaignRecord = {
    id,
    organizationId,
    name,
    status: 'draft',
    createdVia: 'api',
    excludeEnrichedWithinDays: null,
    createdAt: iso(now - DAY_MS),
    accountsRequested: 3,
    accountsObjectKey: accountListKey(organizationId, id),
    accountsEligible: null,
    accountsExcluded: null,
    creditsCharged: 0,
    lastEnrichment: null,
  };
  const attempt = {
    id: attemptId,
    startedAt: iso(now - 2 * DAY_MS),
    eligible: 3,
    charged: 3,
    creditsPerAccount: 1,
    eligibleObjectKey: `campaigns/${organizationId}/${id}/attempts/${attemptId}/eligible.txt`,
    executionArn: `arn:aws:states:us-east-1:000000000000:execution:hostile:${attemptId}`,
  };
  const evaluated = { accountsEligible: 3, accountsExcluded: { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 } };
  const records: Record<typeof state, CampaignRecord> = {
    // An interface launch: enriching, counted under externalEnrichingAccounts by operators, not charged here.
    enriching: { ...base, ...evaluated, status: 'enriching', createdVia: 'ui' },
    expired: {
      ...base,
      ...evaluated,
      status: 'expired',
      createdVia: 'ui',
      attempt: { ...attempt, charged: 0 },
      completedAt: iso(now - 40 * DAY_MS),
      resultsExpireAt: iso(now - 10 * DAY_MS),
      results: { totalAccounts: 3, totalContactsFound: 0, pctAccountsWithContact: 0, pctAccountsWithMobile: 0 },
    },
    tam_only: { ...base, status: 'tam_only', createdVia: 'ui' },
    ui_draft: { ...base, createdVia: 'ui' },
    data_cube_draft: { ...base, createdVia: 'data_cube' },
  };
  await campaigns().create(records[state]);
  return id;
}
