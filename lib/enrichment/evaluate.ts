/**
 * Launch evaluation (spec "Enrich a campaign" 3-6; decisions §4): every
 * requested account falls in exactly one bucket, in this precedence:
 * `invalid`, `recentlyEnriched`, `crmExcluded`; the rest are eligible.
 */
import type { ExcludedCounts } from '../campaigns/model';
import type { AccountFacts, AccountHistoryStore } from '../organizations/account-history';
import type { AccountStatus } from '../warehouse/schema';
import type { Warehouse } from '../warehouse/warehouse';

/** The bucket of one account. */
export type AccountBucket = 'invalid' | 'recentlyEnriched' | 'crmExcluded' | 'eligible';

/** Outcome of evaluating a campaign's account list. */
export interface LaunchEvaluation {
  /** Distinct requested accounts. */
  requested: number;
  /** Eligible account IDs, in list order. */
  eligibleIds: string[];
  excluded: ExcludedCounts;
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

/**
 * Evaluates an account list against the warehouse, the organization's
 * recent enrichments and its CRM targets, with batched parallel reads.
 * @param input.accountIds - distinct account IDs of the campaign.
 */
export async function evaluateLaunch(
  deps: { warehouse: Warehouse; accountHistory: AccountHistoryStore },
  input: { organizationId: string; accountIds: readonly string[]; excludeEnrichedWithinDays: number | null; now: Date },
): Promise<LaunchEvaluation> {
  const [statuses, facts] = await Promise.all([
    deps.warehouse.getAccountStatuses(input.accountIds),
    deps.accountHistory.getFacts(input.organizationId, input.accountIds),
  ]);
  const cutoff = recencyCutoff(input.excludeEnrichedWithinDays, input.now);
  const excluded: ExcludedCounts = { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0 };
  const eligibleIds: string[] = [];
  for (const id of input.accountIds) {
    const bucket = classifyAccount(statuses.get(id), facts.get(id), cutoff);
    if (bucket === 'eligible') eligibleIds.push(id);
    else {
      excluded[bucket]++;
      excluded.total++;
    }
  }
  return { requested: input.accountIds.length, eligibleIds, excluded };
}
