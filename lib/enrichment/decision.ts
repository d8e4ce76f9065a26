/**
 * The launch decision (docs/launch.md): from a launch evaluation's counts
 * and the organization's figures, what the launch costs, what capacity it
 * takes, and whether it would be refused and why, in the order enrich
 * refuses: `no_eligible_accounts`, `insufficient_credits`,
 * `spend_limit_exceeded` (docs/limits.md), `key_spend_limit_exceeded`
 * (docs/authentication.md#per-key-credit-limits), `concurrency_limit_exceeded`.
 *
 * Enrich acts on it and quote shows it, so the two cannot drift: the quote's
 * figures and outcome are exactly what enrich would decide at that moment.
 */
import {
  CampaignNotEnrichableError,
  ConcurrencyLimitExceededError,
  InsufficientCreditsError,
  KeySpendLimitExceededError,
  NoEligibleAccountsError,
  SpendLimitExceededError,
  type ApiError,
} from '../errors';
import type { CampaignRecord, ExcludedCounts } from '../campaigns/model';
import type { OrganizationRecord } from '../organizations/store';

/** `launchable`, or the code enrich would answer. */
export type LaunchOutcome =
  | 'launchable'
  | 'no_eligible_accounts'
  | 'insufficient_credits'
  | 'spend_limit_exceeded'
  | 'key_spend_limit_exceeded'
  | 'concurrency_limit_exceeded';

/** Launch outcomes, in refusal order after `launchable`. */
export const LAUNCH_OUTCOMES = [
  'launchable',
  'no_eligible_accounts',
  'insufficient_credits',
  'spend_limit_exceeded',
  'key_spend_limit_exceeded',
  'concurrency_limit_exceeded',
] as const satisfies readonly LaunchOutcome[];

/** The organization's monthly spend limit and this UTC month's spend, net of refunds (credits; docs/limits.md). */
export interface MonthlySpend {
  limit: number;
  spent: number;
}

/**
 * The request's API key's credit limits (credits; docs/authentication.md#per-key-credit-limits):
 * `maxCreditsPerLaunch` (null: none), and `monthly`, the key's monthly limit with its net charges this UTC month (absent: none).
 */
export interface KeySpend {
  maxCreditsPerLaunch: number | null;
  monthly?: MonthlySpend;
}

/** Which of a key's limits a charge of `required` credits would pass (the launch's own cap first), with its figures; `undefined`: none. */
function keyLimitPassed(
  key: KeySpend | undefined,
  required: number,
): { limit: number; spent: number | null; period: 'launch' | 'month' } | undefined {
  if (key?.maxCreditsPerLaunch != null && required > key.maxCreditsPerLaunch)
    return { limit: key.maxCreditsPerLaunch, spent: null, period: 'launch' };
  if (key?.monthly && key.monthly.spent + required > key.monthly.limit)
    return { limit: key.monthly.limit, spent: key.monthly.spent, period: 'month' };
  return undefined;
}

/** The counts of a launch evaluation (accounts). */
export interface EvaluationCounts {
  requested: number;
  eligible: number;
  excluded: ExcludedCounts;
}

/** A launch decision: the `data` of quote without `campaignId`. */
export interface LaunchDecision {
  /** Accounts. */
  accounts: { requested: number; eligible: number; excluded: ExcludedCounts };
  /** Credits: `required` = eligible × credits per account; `shortfall` = max(0, required − available). */
  credits: { required: number; available: number; shortfall: number };
  /** Accounts: `available` = max(0, maxEnrichingAccounts − enrichingAccounts). */
  enrichment: { maxEnrichingAccounts: number; enrichingAccounts: number; available: number };
  outcome: LaunchOutcome;
}

/**
 * Decides a launch (pure).
 * @param counts - the evaluation's counts (accounts).
 * @param organization - balance (credits) and capacity figures (accounts) as read now.
 * @param creditsPerAccount - credits per eligible account (deployment setting).
 * @param spend - the monthly spend limit and this month's spend (credits), when the organization has a limit.
 * @param key - the request's key's credit limits (and its spend this month, when it has a monthly limit).
 */
export function decideLaunch(
  counts: EvaluationCounts,
  organization: Pick<OrganizationRecord, 'smbCredits' | 'maxEnrichingAccounts' | 'enrichingAccounts'>,
  creditsPerAccount: number,
  spend?: MonthlySpend,
  key?: KeySpend,
): LaunchDecision {
  const required = counts.eligible * creditsPerAccount;
  const { smbCredits: available, maxEnrichingAccounts, enrichingAccounts } = organization;
  const outcome: LaunchOutcome =
    counts.eligible === 0
      ? 'no_eligible_accounts'
      : available < required
        ? 'insufficient_credits'
        : spend && spend.spent + required > spend.limit
          ? 'spend_limit_exceeded'
          : keyLimitPassed(key, required)
            ? 'key_spend_limit_exceeded'
            : enrichingAccounts + counts.eligible > maxEnrichingAccounts
              ? 'concurrency_limit_exceeded'
              : 'launchable';
  return {
    accounts: { requested: counts.requested, eligible: counts.eligible, excluded: { ...counts.excluded } },
    credits: { required, available, shortfall: Math.max(0, required - available) },
    enrichment: { maxEnrichingAccounts, enrichingAccounts, available: Math.max(0, maxEnrichingAccounts - enrichingAccounts) },
    outcome,
  };
}

/**
 * The error enrich answers for a refused decision, with the decision's
 * figures as its details; `undefined` when the launch may proceed.
 */
export function refusalOf(decision: LaunchDecision, spend?: MonthlySpend, key?: KeySpend): ApiError | undefined {
  switch (decision.outcome) {
    case 'launchable':
      return undefined;
    case 'no_eligible_accounts':
      return new NoEligibleAccountsError(decision.accounts.requested);
    case 'insufficient_credits':
      return new InsufficientCreditsError({ available: decision.credits.available, required: decision.credits.required });
    case 'spend_limit_exceeded':
      return new SpendLimitExceededError({ limit: spend?.limit ?? 0, spent: spend?.spent ?? 0, required: decision.credits.required });
    case 'key_spend_limit_exceeded': {
      const passed = keyLimitPassed(key, decision.credits.required) ?? { limit: 0, spent: null, period: 'launch' };
      return new KeySpendLimitExceededError({ ...passed, required: decision.credits.required });
    }
    case 'concurrency_limit_exceeded':
      return new ConcurrencyLimitExceededError({
        limit: decision.enrichment.maxEnrichingAccounts,
        inFlight: decision.enrichment.enrichingAccounts,
        requested: decision.accounts.eligible,
      });
  }
}

/** The refusal of a campaign that is not an API-created draft (enrich and quote: `campaign_not_enrichable` with `details.status`). */
export function notEnrichable(campaign: Pick<CampaignRecord, 'createdVia'>, status: CampaignRecord['status']): CampaignNotEnrichableError {
  return campaign.createdVia !== 'api'
    ? new CampaignNotEnrichableError(
        status,
        `Only API-created campaigns can be enriched through the API; this one was created via "${campaign.createdVia}".`,
      )
    : new CampaignNotEnrichableError(status);
}
