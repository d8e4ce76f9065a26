/**
 * Launch evaluation (docs/launch.md): every
 * requested account falls in exactly one bucket, in this precedence:
 * `invalid`, `recentlyEnriched`, `crmExcluded`; the rest are eligible.
 */
import type { ExcludedCounts } from '../campaigns/model';
import type { AccountFacts, AccountHistoryStore } from '../history/store';
import type { AccountStatus } from '../warehouse/schema';
import type { Warehouse, WarehouseAccountFields } from '../warehouse/warehouse';
import type { PendingRecency } from '../history/recency-pending';

/** The bucket of one account. */
export type AccountBucket = 'invalid' | 'recentlyEnriched' | 'crmExcluded' | 'eligible';

/** Outcome of evaluating a campaign's account list. */
export interface LaunchEvaluation {
  /** Distinct requested accounts. */
  requested: number;
  /** Eligible account IDs, in list order. */
  eligibleIds: string[];
  /** The eligible accounts' fields as the evaluation read them, aligned with `eligibleIds` (carried to the workflow's batches, so FindContacts reads only contacts). */
  eligibleAccounts: WarehouseAccountFields[];
  excluded: ExcludedCounts;
  /** The bucket of every requested account, aligned with the evaluated list (per-account outcomes, docs/launch.md#per-account-outcomes). */
  buckets: AccountBucket[];
}

/**
 * Start of the recency window in epoch milliseconds: enrichments completed
 * after it exclude the account. `undefined` (0 or null days) excludes nothing.
 */
export function recencyCutoff(excludeEnrichedWithinDays: number | null, now: Date): number | undefined {
  if (!excludeEnrichedWithinDays) return undefined;
  return now.getTime() - excludeEnrichedWithinDays * 86_400_000;
}

/** Classifies one account (docs/launch.md precedence). */
export function classifyAccount(
  status: AccountStatus | undefined,
  facts: AccountFacts | undefined,
  cutoff: number | undefined,
): AccountBucket {
  if (status !== 'active') return 'invalid';
  if (cutoff !== undefined && facts?.lastEnrichedAt !== undefined && Date.parse(facts.lastEnrichedAt) > cutoff) return 'recentlyEnriched';
  if (facts?.crmTarget) return 'crmExcluded';
  return 'eligible';
}

/** What a launch evaluation reads. */
export interface EvaluationDependencies {
  warehouse: Warehouse;
  accountHistory: Pick<AccountHistoryStore, 'getFacts'>;
}

/**
 * Evaluates an account list against the warehouse, the organization's
 * recent enrichments and its CRM targets. DynamoDB is read once per account
 * (the warehouse account item, 100 keys per BatchGetItem) and once per
 * history bucket its IDs fall in (lib/history/store.ts): what the list
 * touches, never the organization's campaigns or CRM list (docs/launch.md).
 *
 * Order matters: `pendingRecency` must come from an organization read made
 * BEFORE this call (launch and quote read the organization first). A
 * completion missing from that read had its history entries written before
 * it left the organization item, so the (strongly consistent) history read
 * made here sees them.
 *
 * @param input.accountIds - distinct account IDs of the campaign.
 * @param input.pendingRecency - the organization's completions awaiting their history entries (`OrganizationRecord.pendingRecency`).
 * @param input.historyBuckets - the history's bucket count from the same organization read (`OrganizationRecord.historyBuckets`); absent: the store reads it.
 */
export async function evaluateLaunch(
  deps: EvaluationDependencies,
  input: {
    organizationId: string;
    accountIds: readonly string[];
    excludeEnrichedWithinDays: number | null;
    now: Date;
    pendingRecency?: readonly PendingRecency[];
    historyBuckets?: number;
  },
): Promise<LaunchEvaluation> {
  const cutoff = recencyCutoff(input.excludeEnrichedWithinDays, input.now);
  const [statuses, facts] = await Promise.all([
    deps.warehouse.getAccountStatuses(input.accountIds),
    // Without a recency window (null or 0 days) enrichment times are not returned (the same shards hold the CRM targets).
    deps.accountHistory.getFacts(input.organizationId, input.accountIds, {
      ...(input.historyBuckets === undefined ? {} : { buckets: input.historyBuckets }),
      ...(cutoff === undefined ? { recency: false } : { recency: true, enrichedAfter: cutoff, pending: input.pendingRecency ?? [] }),
    }),
  ]);
  const excluded: ExcludedCounts = { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 };
  const eligibleIds: string[] = [];
  const eligibleAccounts: WarehouseAccountFields[] = [];
  const buckets: AccountBucket[] = [];
  for (const id of input.accountIds) {
    const account = statuses.get(id);
    const bucket = classifyAccount(account?.status, facts.get(id), cutoff);
    buckets.push(bucket);
    if (bucket === 'eligible') {
      eligibleIds.push(id);
      eligibleAccounts.push(account!);
    } else {
      excluded[bucket]++;
      excluded.total++;
    }
  }
  return { requested: input.accountIds.length, eligibleIds, eligibleAccounts, excluded, buckets };
}
