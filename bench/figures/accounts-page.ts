/**
 * Figure "accounts page" (docs/launch.md "a page costs reads in proportion to
 * the page, never to the list"): what one page of `/v1/campaigns/accounts`
 * reads, for a campaign of 1,000 and of 100,000 accounts: DynamoDB and S3
 * calls, the bytes they returned, and the read capacity of the manifest.
 *
 * Each campaign is written through the product's own stores (no workflow
 * run, which the scale figure measures): the campaign item
 * (`campaigns().create`), the evaluation (`outcomes().recordEvaluation`) and
 * every workflow batch (`outcomes().recordBatch`), as enrich and the
 * FindContacts tasks write them. Pages are read through the API; calls and
 * bytes are what the SDK middleware of bench/lib/stack.ts recorded for the
 * request. Flat means the same number of calls at both sizes.
 */
import { campaigns, outcomes } from '../../lib/root';
import { newAttemptId, newCampaignId } from '../../lib/ids';
import { batchesOf, ENRICHMENT_BATCH_SIZE } from '../../lib/enrichment/workflow';
import type { AccountBucket } from '../../lib/enrichment/evaluate';
import type { CampaignRecord } from '../../lib/campaigns/model';
import type { Results } from '../lib/results';
import type { BenchStack, CallRecord } from '../lib/stack';
import { postCounted, PATHS } from '../lib/api';
import { benchOrganization } from '../lib/fixtures';
import { median, round } from '../lib/stats';
import { objectKeys } from '../../lib/objects';

/** Evaluation bucket of position `i`: 5 % each excluded bucket, the rest eligible. */
const bucketOf = (i: number): AccountBucket =>
  i % 20 === 3 ? 'invalid' : i % 20 === 7 ? 'recentlyEnriched' : i % 20 === 11 ? 'crmExcluded' : 'eligible';

/** Cost of one page. */
interface PageCost {
  accounts: number;
  dynamodbCalls: number;
  dynamodbBytes: number;
  /** Consumed capacity DynamoDB reported (the manifest read asks for it). */
  rcu: number;
  s3Calls: number;
  s3Bytes: number;
}

const costOf = (calls: readonly CallRecord[], accounts: number): PageCost => {
  const dynamodb = calls.filter((c) => c.service === 'dynamodb' && c.kind !== 'auth');
  const s3 = calls.filter((c) => c.service === 's3');
  const bytes = (list: readonly CallRecord[]) => list.reduce((sum, c) => sum + (c.bytes ?? 0), 0);
  return {
    accounts,
    dynamodbCalls: dynamodb.length,
    dynamodbBytes: bytes(dynamodb),
    rcu: dynamodb.reduce((sum, c) => sum + (c.capacity ?? 0), 0),
    s3Calls: s3.length,
    s3Bytes: bytes(s3),
  };
};

/** Writes an enriched campaign of `size` accounts with its evaluation and every batch recorded. */
async function writeCampaign(organizationId: string, size: number): Promise<{ campaignId: string; writeSeconds: number }> {
  const started = performance.now();
  const campaignId = newCampaignId();
  const evaluationId = newAttemptId();
  const accountIds = Array.from({ length: size }, (_, i) => `acc_${campaignId.slice(5, 11)}_${String(i).padStart(6, '0')}`);
  const buckets = accountIds.map((_, i) => bucketOf(i));
  const eligible = buckets.filter((b) => b === 'eligible').length;
  const now = new Date().toISOString();
  const record: CampaignRecord = {
    id: campaignId,
    organizationId,
    name: `Accounts page ${size}`,
    status: 'enriched',
    createdVia: 'api',
    excludeEnrichedWithinDays: 30,
    createdAt: now,
    accountsRequested: size,
    accountsObjectKey: `campaigns/${organizationId}/${campaignId}/accounts.txt`,
    accountsEligible: eligible,
    accountsExcluded: { total: size - eligible, invalid: size / 20, recentlyEnriched: size / 20, crmExcluded: size / 20 },
    creditsCharged: eligible,
    lastEnrichment: null,
    completedAt: now,
    resultsExpireAt: '2099-01-01T00:00:00.000Z',
    results: { totalAccounts: eligible, totalContactsFound: 0, pctAccountsWithContact: 0, pctAccountsWithMobile: 0 },
    attempt: {
      id: evaluationId,
      startedAt: now,
      eligible,
      charged: eligible,
      creditsPerAccount: 1,
      eligibleObjectKey: objectKeys.eligibleList(organizationId, campaignId, evaluationId),
      executionArn: 'arn:bench',
    },
  };
  await campaigns().create(record);
  await outcomes().recordEvaluation({
    organizationId,
    campaignId,
    evaluationId,
    evaluatedAt: now,
    accountIds,
    buckets,
    batchSize: ENRICHMENT_BATCH_SIZE,
  });
  // Every eligible account has 1-3 contacts but the very last one, which has none: one `not_found` at the list's end.
  const batches = batchesOf(eligible);
  for (let i = 0; i < batches.length; i += 8) {
    await Promise.all(
      batches.slice(i, i + 8).map((batch) =>
        outcomes().recordBatch({
          organizationId,
          campaignId,
          evaluationId,
          batch,
          contactsFound: Array.from({ length: batch.count }, (_, k) =>
            batch.offset + k === eligible - 1 ? 0 : 1 + ((batch.offset + k) % 3),
          ),
        }),
      ),
    );
  }
  return { campaignId, writeSeconds: (performance.now() - started) / 1000 };
}

export async function runAccountsPage(results: Results, stack: BenchStack, options: { sizes: readonly number[] }): Promise<void> {
  const group = 'accounts page';
  const { apiKey, organizationId } = await benchOrganization('Bench accounts page');
  const path = PATHS.accounts;
  const page = async (body: Record<string, unknown>) => {
    const reply = await postCounted<{ accounts: unknown[]; nextCursor: string | null }>(stack, path, apiKey, body);
    if (reply.status !== 200) throw new Error(`accounts answered ${reply.status}: ${JSON.stringify(reply.error)}`);
    return { cost: costOf(reply.scope.calls, reply.data.accounts.length), nextCursor: reply.data.nextCursor };
  };

  // The same page at both sizes: pages that exist in a list of 1,000 as in one of 100,000.
  const kinds = [
    'first page, no filter (limit 100)',
    'first page, no filter (limit 1,000)',
    'filters.outcome = crm_excluded (5 % of accounts, limit 50)',
    'filters.outcome = not_found (1 account, the list’s last; limit 100)',
  ] as const;
  const measured = new Map<number, Record<(typeof kinds)[number], PageCost>>();
  const walks = new Map<number, PageCost[]>();
  for (const size of options.sizes) {
    const { campaignId, writeSeconds } = await writeCampaign(organizationId, size);
    const first = await page({ campaignId, limit: 100 });
    const crm = await page({ campaignId, filters: { outcome: 'crm_excluded' }, limit: 50 });
    const notFound = await page({ campaignId, filters: { outcome: 'not_found' }, limit: 100 });
    if (crm.cost.accounts !== 50 || notFound.cost.accounts !== 1)
      throw new Error(`unexpected filtered pages: ${crm.cost.accounts} crm_excluded, ${notFound.cost.accounts} not_found`);
    // Every page of 1,000 with the API's own cursors.
    const walked: PageCost[] = [];
    let cursor: string | undefined;
    do {
      const next = await page({ campaignId, limit: 1_000, ...(cursor ? { cursor } : {}) });
      walked.push(next.cost);
      cursor = next.nextCursor ?? undefined;
    } while (cursor);
    if (walked.reduce((sum, c) => sum + c.accounts, 0) !== size) throw new Error(`walking ${size} accounts returned another count`);
    walks.set(size, walked);
    measured.set(size, { [kinds[0]]: first.cost, [kinds[1]]: walked[0]!, [kinds[2]]: crm.cost, [kinds[3]]: notFound.cost } as Record<
      (typeof kinds)[number],
      PageCost
    >);
    const calls = walked.map((c) => c.dynamodbCalls + c.s3Calls);
    results.note(
      group,
      `${size.toLocaleString('en-US')} accounts: written in ${round(writeSeconds, 1)} s (${Math.ceil(size / 1_000)} outcome chunks, ${batchesOf(Math.round(size * 0.85)).length} workflow batches); ` +
        `all ${walked.length} pages of 1,000: read calls per page median ${median(calls)}, max ${Math.max(...calls)}; bytes per page max ${Math.max(...walked.map((c) => c.s3Bytes + c.dynamodbBytes)).toLocaleString('en-US')}.`,
    );
  }

  const [small, large] = [Math.min(...options.sizes), Math.max(...options.sizes)];
  const at = (size: number) => measured.get(size)!;
  const n = (v: number) => v.toLocaleString('en-US');
  const change = (a: number, b: number) => (a === 0 ? (b === 0 ? 0 : Infinity) : ((b - a) / a) * 100);
  for (const kind of kinds) {
    const a = at(small)[kind];
    const b = at(large)[kind];
    results.add({
      group,
      name: `${kind}: read calls change ${n(small)} → ${n(large)} accounts`,
      value: change(a.dynamodbCalls + a.s3Calls, b.dynamodbCalls + b.s3Calls),
      unit: '%',
      budget: { op: '<=', limit: 0, text: 'flat: the same calls' },
      floor: { value: a.dynamodbCalls + a.s3Calls, unit: 'calls', what: `same page at ${n(small)} accounts` },
      extra: {
        accounts: b.accounts,
        [`DynamoDB calls at ${n(small)}/${n(large)}`]: `${a.dynamodbCalls}/${b.dynamodbCalls}`,
        [`S3 calls at ${n(small)}/${n(large)}`]: `${a.s3Calls}/${b.s3Calls}`,
        [`manifest RCU at ${n(small)}/${n(large)}`]: `${round(a.rcu, 2)}/${round(b.rcu, 2)}`,
      },
    });
    results.add({
      group,
      name: `${kind}: bytes read change ${n(small)} → ${n(large)} accounts`,
      value: change(a.dynamodbBytes + a.s3Bytes, b.dynamodbBytes + b.s3Bytes),
      unit: '%',
      extra: {
        [`DynamoDB bytes at ${n(small)}/${n(large)}`]: `${n(a.dynamodbBytes)}/${n(b.dynamodbBytes)}`,
        [`S3 bytes at ${n(small)}/${n(large)}`]: `${n(a.s3Bytes)}/${n(b.s3Bytes)}`,
      },
      note: 'reported only',
    });
  }
  // The bound of an unfiltered page whatever its position: 2 GetItems, 2 chunks, 3 batch objects (docs/data-model.md).
  const worst = (size: number) => Math.max(...walks.get(size)!.map((c) => c.dynamodbCalls + c.s3Calls));
  results.add({
    group,
    name: `every page of 1,000 of the ${n(large)}-account list: most read calls of any page`,
    value: worst(large),
    unit: 'calls',
    budget: { op: '<=', limit: 7, text: '≤ 7 (2 GetItems + 2 chunks + 3 batch objects)' },
    extra: { pages: walks.get(large)!.length, [`at ${n(small)}`]: worst(small) },
  });
  results.note(
    group,
    'Calls exclude the API-key lookup. DynamoDB: the campaign item and the outcome manifest (two GetItems in parallel); only the manifest grows with the list ' +
      '(per chunk of 1,000 accounts: its first eligible index, one hex digit, and its batch/found/not-found set members), ~40 bytes of DynamoDB JSON per 1,000 accounts, ' +
      'still one read capacity unit at 100,000 accounts. S3: the chunk objects under the page and the contact-count objects of their workflow batches (docs/data-model.md).',
  );
}
