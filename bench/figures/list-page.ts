/**
 * Figure "list page": consumed read capacity of one list page filtered on a
 * rare status (`tam_only`, 3 campaigns) when the organization has 100 and
 * then 10,000 campaigns. Campaigns are written straight to the table with
 * the store's own item builder (`campaignItem`), as an import would; the
 * page is read through the API and the capacity is what DynamoDB Local
 * returned for the list Queries (they ask for ReturnConsumedCapacity TOTAL).
 * Flat means within ±10 % between the two sizes.
 */
import { ddb } from '../../lib/aws';
import { newCampaignId } from '../../lib/ids';
import { batchPut } from '../../lib/db/batch';
import { campaignItem } from '../../lib/campaigns/item';
import type { CampaignRecord } from '../../lib/campaigns/model';
import type { CampaignStatus } from '../../lib/errors';
import type { Results } from '../lib/results';
import type { BenchStack } from '../lib/stack';
import { postCounted, PATHS } from '../lib/api';
import { benchOrganization } from '../lib/fixtures';
import { round } from '../lib/stats';

const COMMON: Array<{ status: CampaignStatus; createdVia: CampaignRecord['createdVia'] }> = [
  { status: 'draft', createdVia: 'api' },
  { status: 'enriched', createdVia: 'api' },
  { status: 'expired', createdVia: 'api' },
  { status: 'draft', createdVia: 'ui' },
  { status: 'enriching', createdVia: 'api' },
];

function record(organizationId: string, index: number, status: CampaignStatus, createdVia: CampaignRecord['createdVia']): CampaignRecord {
  // Older campaigns first: index 0 is the oldest.
  const createdAt = new Date(Date.UTC(2025, 0, 1) + index * 60_000).toISOString();
  const enriched = status === 'enriched' || status === 'expired';
  return {
    id: newCampaignId(),
    organizationId,
    name: `Campaign ${index}`,
    status,
    createdVia,
    excludeEnrichedWithinDays: null,
    createdAt,
    accountsRequested: 100,
    accountsObjectKey: `campaigns/${organizationId}/c${index}/accounts.txt`,
    accountsEligible: enriched ? 90 : null,
    accountsExcluded: enriched ? { total: 10, invalid: 10, recentlyEnriched: 0, crmExcluded: 0 } : null,
    creditsCharged: enriched ? 90 : 0,
    lastEnrichment: null,
    ...(enriched
      ? {
          completedAt: createdAt,
          // enriched ones stay live for years; expired ones are stored expired.
          resultsExpireAt: status === 'enriched' ? '2099-01-01T00:00:00.000Z' : '2025-02-01T00:00:00.000Z',
          results: { totalAccounts: 90, totalContactsFound: 300, pctAccountsWithContact: 0.8, pctAccountsWithMobile: 0.4 },
        }
      : {}),
  };
}

export async function runListPage(
  results: Results,
  stack: BenchStack,
  options: { small: number; large: number; lapsed: number },
): Promise<void> {
  const group = 'list page';
  const { organizationId, apiKey } = await benchOrganization('Bench list');
  const write = async (from: number, to: number) => {
    const items: Record<string, unknown>[] = [];
    for (let i = from; i < to; i++) {
      // Three rare campaigns among the oldest (index 10, 20, 30), the rest common statuses.
      const rare = i === 10 || i === 20 || i === 30;
      const shape = rare ? { status: 'tam_only' as const, createdVia: 'ui' as const } : COMMON[i % COMMON.length]!;
      items.push(campaignItem(record(organizationId, i, shape.status, shape.createdVia)));
    }
    // Four batchPut calls at once (16 BatchWriteItem each): DynamoDB Local serves many requests at once.
    const quarter = Math.ceil(items.length / 4);
    await Promise.all([0, 1, 2, 3].map((q) => batchPut(ddb, stack.tableName, items.slice(q * quarter, (q + 1) * quarter))));
  };
  const pages = {
    rare: { filters: { status: 'tam_only' } },
    common: { filters: { status: 'draft' } },
    all: {},
  };
  const read = async (body: unknown) => {
    const reply = await postCounted<{ campaigns: unknown[] }>(stack, PATHS.list, apiKey, body);
    if (reply.status !== 200) throw new Error(`list answered ${reply.status}: ${JSON.stringify(reply.error)}`);
    const queries = reply.scope.calls.filter((c) => c.service === 'dynamodb' && c.command === 'Query');
    const missing = queries.filter((q) => q.capacity === undefined).length;
    if (missing > 0) throw new Error('DynamoDB Local returned no ConsumedCapacity for the list queries');
    return { capacity: queries.reduce((s, q) => s + (q.capacity ?? 0), 0), queries: queries.length, items: reply.data.campaigns.length };
  };

  let t = performance.now();
  await write(0, options.small);
  const smallWriteS = (performance.now() - t) / 1000;
  const atSmall = { rare: await read(pages.rare), common: await read(pages.common), all: await read(pages.all) };
  t = performance.now();
  await write(options.small, options.large);
  const largeWriteS = (performance.now() - t) / 1000;
  const atLarge = { rare: await read(pages.rare), common: await read(pages.common), all: await read(pages.all) };

  const change = (a: number, b: number) => (Math.abs(b - a) / a) * 100;
  const n = (v: number) => v.toLocaleString('en-US');
  results.add({
    group,
    name: `filters.status = tam_only (3 of ${n(options.large)}): consumed RCU change ${n(options.small)} → ${n(options.large)} campaigns`,
    value: change(atSmall.rare.capacity, atLarge.rare.capacity),
    unit: '%',
    budget: { op: '<=', limit: 10, text: 'flat: ≤ 10 % change' },
    floor: { value: atSmall.rare.capacity, unit: 'RCU', what: `same page at ${n(options.small)} campaigns` },
    extra: {
      [`RCU at ${n(options.small)}`]: round(atSmall.rare.capacity, 2),
      [`RCU at ${n(options.large)}`]: round(atLarge.rare.capacity, 2),
      items: atLarge.rare.items,
      queries: atLarge.rare.queries,
    },
  });
  for (const [key, label] of [
    ['common', 'filters.status = draft (25 items)'],
    ['all', 'no filter (25 items)'],
  ] as const) {
    results.add({
      group,
      name: `${label}: consumed RCU change ${n(options.small)} → ${n(options.large)} campaigns`,
      value: change(atSmall[key].capacity, atLarge[key].capacity),
      unit: '%',
      extra: {
        [`RCU at ${n(options.small)}`]: round(atSmall[key].capacity, 2),
        [`RCU at ${n(options.large)}`]: round(atLarge[key].capacity, 2),
        items: atLarge[key].items,
        queries: atLarge[key].queries,
      },
      note: 'reported only',
    });
  }
  // Issue #29: an `expired` page when many campaigns lapsed (stored `enriched` past resultsExpireAt: the workflow has not rewritten
  // them yet), against a plain page of the same organization. Campaigns are created a minute apart; each lapsed one completed
  // 10 s after it was created and kept its results for the 30-day access period, as the workflow writes it.
  {
    const lapsedOrg = await benchOrganization('Bench list lapsed');
    const start = Date.UTC(2025, 0, 1);
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < options.lapsed + 100; i++) {
      const base = record(lapsedOrg.organizationId, i, i < options.lapsed ? 'enriched' : COMMON[i % COMMON.length]!.status, 'api');
      const createdAt = new Date(start + i * 60_000).toISOString();
      const lapsed =
        i < options.lapsed
          ? {
              completedAt: new Date(start + i * 60_000 + 10_000).toISOString(),
              resultsExpireAt: new Date(start + i * 60_000 + 10_000 + 30 * 86_400_000).toISOString(),
            }
          : {};
      items.push(campaignItem({ ...base, createdAt, ...lapsed }));
    }
    const quarter = Math.ceil(items.length / 4);
    await Promise.all([0, 1, 2, 3].map((q) => batchPut(ddb, stack.tableName, items.slice(q * quarter, (q + 1) * quarter))));
    const readPage = async (body: unknown) => {
      const reply = await postCounted<{ campaigns: unknown[]; nextCursor: string | null }>(stack, PATHS.list, lapsedOrg.apiKey, body);
      if (reply.status !== 200) throw new Error(`list answered ${reply.status}: ${JSON.stringify(reply.error)}`);
      const queries = reply.scope.calls.filter((c) => c.service === 'dynamodb' && c.command === 'Query');
      return {
        capacity: queries.reduce((sum, q) => sum + (q.capacity ?? 0), 0),
        queries: queries.length,
        items: reply.data.campaigns.length,
        nextCursor: reply.data.nextCursor,
      };
    };
    const plain = await readPage({});
    const expiredPage = await readPage({ filters: { status: 'expired' } });
    const secondPage = await readPage({ filters: { status: 'expired' }, cursor: expiredPage.nextCursor });
    results.add({
      group,
      name: `filters.status = expired, ${n(options.lapsed)} lapsed campaigns: consumed RCU of the first page against a plain page`,
      value: expiredPage.capacity / plain.capacity,
      unit: '×',
      budget: { op: '<=', limit: 2, text: '≤ 2 × a plain page' },
      floor: { value: plain.capacity, unit: 'RCU', what: "the same organization's page with no filter" },
      extra: {
        RCU: round(expiredPage.capacity, 2),
        queries: expiredPage.queries,
        items: expiredPage.items,
        'second page RCU': round(secondPage.capacity, 2),
      },
      note: 'lib/campaigns/store.ts readLapsed: the sparse expiry index read backwards a page at a time, stopping once no unread lapsed campaign can enter the page',
    });
  }

  results.note(
    group,
    `Campaigns written with BatchWriteItem of \`campaignItem(record)\` (lib/campaigns/item.ts): ${n(options.small)} in ${round(smallWriteS, 1)} s, ` +
      `then ${n(options.large - options.small)} more in ${round(largeWriteS, 1)} s. The 3 tam_only campaigns (createdVia ui) are among the oldest, ` +
      "the rest cycle through draft/enriched/expired/enriching. Capacity is the sum of ConsumedCapacity.CapacityUnits of the page's Queries.",
  );
}
