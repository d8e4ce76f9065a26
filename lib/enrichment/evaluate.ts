/**
 * Launch evaluation (spec "Enrich a campaign" 3-6; decisions §4): every
 * requested account falls in exactly one bucket, in this precedence:
 * `invalid`, `recentlyEnriched`, `crmExcluded`; the rest are eligible.
 */
import type { ExcludedCounts } from '../campaigns/model';
import type { AccountFacts, AccountHistoryStore } from '../organizations/account-history';
import type { AccountStatus } from '../warehouse/schema';
import type { Warehouse } from '../warehouse/warehouse';
import type { AccountListStore } from '../campaigns/account-list';
import type { EnrichmentStore } from './store';

/** The bucket of one account. */
export type AccountBucket = 'invalid' | 'recentlyEnriched' | 'crmExcluded' | 'eligible';

/** Outcome of evaluating a campaign's account list. */
export interface LaunchEvaluation {
  /** Distinct requested accounts. */
  requested: number;
  /** Eligible account IDs, in list order. */
  eligibleIds: string[];
  excluded: ExcludedCounts;
  /** The bucket of every requested account, aligned with the evaluated list (per-account outcomes, decisions §11). */
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

/** Classifies one account (decisions §4 precedence). */
export function classifyAccount(status: AccountStatus | undefined, facts: AccountFacts | undefined, cutoff: number | undefined): AccountBucket {
  if (status !== 'active') return 'invalid';
  if (cutoff !== undefined && facts?.lastEnrichedAt !== undefined && Date.parse(facts.lastEnrichedAt) > cutoff) return 'recentlyEnriched';
  if (facts?.crmTarget) return 'crmExcluded';
  return 'eligible';
}

/** What a launch evaluation reads. */
export interface EvaluationDependencies {
  warehouse: Warehouse;
  accountHistory: AccountHistoryStore;
  enrichment: Pick<EnrichmentStore, 'pendingRecency'>;
  accountLists: Pick<AccountListStore, 'get'>;
}

/**
 * Enrichment times not yet recorded per account: accounts of enriched
 * campaigns whose recording step is still running count as enriched at the
 * campaign's `completedAt` (decisions §4: recency starts when a campaign
 * reaches `enriched`). Normally empty.
 */
async function pendingEnrichmentTimes(deps: EvaluationDependencies, organizationId: string): Promise<Map<string, string>> {
  const times = new Map<string, string>();
  for (const pending of await deps.enrichment.pendingRecency(organizationId)) {
    for (const id of await deps.accountLists.get(pending.eligibleObjectKey)) {
      const known = times.get(id);
      if (!known || known < pending.completedAt) times.set(id, pending.completedAt);
    }
  }
  return times;
}

/**
 * Evaluates an account list against the warehouse, the organization's
 * recent enrichments and its CRM targets, with batched parallel reads.
 * @param input.accountIds - distinct account IDs of the campaign.
 */
export async function evaluateLaunch(
  deps: EvaluationDependencies,
  input: { organizationId: string; accountIds: readonly string[]; excludeEnrichedWithinDays: number | null; now: Date },
): Promise<LaunchEvaluation> {
  const cutoff = recencyCutoff(input.excludeEnrichedWithinDays, input.now);
  const [statuses, facts, pending] = await Promise.all([
    deps.warehouse.getAccountStatuses(input.accountIds),
    // Without a recency window (null or 0 days) the enrichment times are not read at all.
    deps.accountHistory.getFacts(input.organizationId, input.accountIds, { recency: cutoff !== undefined }),
    cutoff === undefined ? new Map<string, string>() : pendingEnrichmentTimes(deps, input.organizationId),
  ]);
  for (const [id, completedAt] of pending) {
    const known = facts.get(id);
    if (!known?.lastEnrichedAt || known.lastEnrichedAt < completedAt) facts.set(id, { crmTarget: known?.crmTarget ?? false, lastEnrichedAt: completedAt });
  }
  const excluded: ExcludedCounts = { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 };
  const eligibleIds: string[] = [];
  const buckets: AccountBucket[] = [];
  for (const id of input.accountIds) {
    const bucket = classifyAccount(statuses.get(id), facts.get(id), cutoff);
    buckets.push(bucket);
    if (bucket === 'eligible') eligibleIds.push(id);
    else {
      excluded[bucket]++;
      excluded.total++;
    }
  }
  return { requested: input.accountIds.length, eligibleIds, excluded, buckets };
}
