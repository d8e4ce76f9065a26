/**
 * Quote a launch (`POST /v1/campaigns/quote`, docs/launch.md#quote): the launch
 * evaluation of enrich for an API-created `draft`, charging, reserving and
 * writing nothing. It reads what enrich reads (the campaign, its account
 * list, the warehouse, the organization's enrichment history and CRM
 * targets, the organization) and decides with the very function enrich acts
 * on ({@link decideLaunch}), so its figures and outcome are the ones enrich
 * would give at that moment.
 */
import { NotFoundError } from '../errors';
import { statusAt } from '../campaigns/model';
import type { AccountListStore } from '../account-lists/account-list';
import type { CampaignStore } from '../campaigns/store';
import type { OrganizationStore } from '../organizations/store';
import { decideLaunch, notEnrichable, type KeySpend, type MonthlySpend } from './decision';
import type { KeyCheck } from '../http/auth';
import { monthOf, type LimitStore } from '../organizations/limits';
import { evaluateLaunch, type EvaluationDependencies } from './evaluate';
import type { LaunchQuote } from './docs';

/** What a quote reads. */
export interface QuoteDependencies extends EvaluationDependencies {
  campaigns: Pick<CampaignStore, 'get'>;
  organizations: Pick<OrganizationStore, 'get'>;
  /** The campaign's account list. */
  accountLists: Pick<AccountListStore, 'get'>;
  /** Credits per eligible account (deployment setting). */
  creditsPerAccount: number;
  /** This month's spend, read when the organization has a monthly spend limit (docs/limits.md). */
  limits: Pick<LimitStore, 'spent'>;
}

/**
 * The organization's monthly spend limit and this UTC month's spend (one GetItem), when it has a limit (docs/limits.md).
 */
export async function monthlySpendOf(
  limits: Pick<LimitStore, 'spent'>,
  organization: { id: string; limits?: { monthlySpendLimit?: number } },
  now: Date,
): Promise<MonthlySpend | undefined> {
  const limit = organization.limits?.monthlySpendLimit;
  return limit === undefined ? undefined : { limit, spent: await limits.spent(organization.id, monthOf(now)) };
}

/**
 * The request's API key's credit limits, with its net charges this UTC month when it has a monthly limit (one GetItem then);
 * `undefined` for a key without limits (docs/authentication.md#per-key-credit-limits). A key without an ID has no limits.
 */
export async function keySpendOf(
  limits: Pick<LimitStore, 'spent'>,
  key: Pick<KeyCheck, 'organizationId' | 'keyId' | 'limits'> | undefined,
  now: Date,
): Promise<KeySpend | undefined> {
  if (!key?.limits || key.keyId === undefined) return undefined;
  const { maxCreditsPerLaunch, monthlyCredits } = key.limits;
  if (maxCreditsPerLaunch === null && monthlyCredits === null) return undefined;
  return {
    maxCreditsPerLaunch,
    ...(monthlyCredits !== null
      ? { monthly: { limit: monthlyCredits, spent: await limits.spent(key.organizationId, monthOf(now), key.keyId) } }
      : {}),
  };
}

/**
 * Quotes the launch of a campaign; writes nothing.
 * @param key - the request's API key: its credit limits are decided on as enrich does (`key_spend_limit_exceeded`).
 * @returns the evaluation's account buckets, the credits the launch would
 *   charge (credits), the capacity it would take (accounts) and `outcome`.
 * @throws NotFoundError for an unknown campaign or one of another organization.
 * @throws CampaignNotEnrichableError when the campaign is not an API-created `draft` (`details.status`).
 */
export async function quoteCampaign(
  deps: QuoteDependencies,
  organizationId: string,
  campaignId: string,
  now = new Date(),
  key?: Pick<KeyCheck, 'organizationId' | 'keyId' | 'limits'>,
): Promise<LaunchQuote> {
  const campaign = await deps.campaigns.get(organizationId, campaignId);
  if (!campaign) throw new NotFoundError('campaign', campaignId);
  const status = statusAt(campaign, now);
  if (campaign.createdVia !== 'api' || status !== 'draft') throw notEnrichable(campaign, status);

  // The organization first: its pending completions must be read before the history shards (lib/enrichment/evaluate.ts).
  const [accountIds, organization] = await Promise.all([
    deps.accountLists.get(campaign.accountsObjectKey),
    deps.organizations.get(organizationId),
  ]);
  if (!organization) throw new NotFoundError('organization', organizationId);
  const evaluation = await evaluateLaunch(deps, {
    organizationId,
    accountIds,
    excludeEnrichedWithinDays: campaign.excludeEnrichedWithinDays,
    now,
    pendingRecency: organization.pendingRecency,
    historyBuckets: organization.historyBuckets ?? 1,
  });
  const [spend, keySpend] = await Promise.all([monthlySpendOf(deps.limits, organization, now), keySpendOf(deps.limits, key, now)]);
  const decision = decideLaunch(
    { requested: evaluation.requested, eligible: evaluation.eligibleIds.length, excluded: evaluation.excluded },
    organization,
    deps.creditsPerAccount,
    spend,
    keySpend,
  );
  return { campaignId: campaign.id, ...decision };
}
