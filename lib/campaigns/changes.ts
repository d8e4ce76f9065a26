/**
 * Every state change of a campaign item, one export each: import the module as a namespace
 * (`import * as campaignChanges from './changes'`), so a bundle carries the changes its function writes
 * (docs/deploy.md "Prerequisites"). Money (`creditsCharged`) is not here: its change comes from `lib/credits`
 * with the ledger entry it belongs to. The item itself is `item.ts`.
 */
import { merge, type Change } from '../db/expression';
import { statusChange, type CampaignRef } from './item';
import type { AttemptRecord, ExcludedCounts, LastEnrichment, ResultMetrics } from './model';

/** Launch evaluation counts kept on the campaign (accounts). */
export interface EvaluationCounts {
  eligible: number;
  excluded: ExcludedCounts;
}

/** Takes the launch lock until `expiresAt`. */
export const lock = (token: string, expiresAt: Date): Change => ({ set: { launchLock: { token, expiresAt: expiresAt.toISOString() } } });

/** Releases the launch lock, keeping a refused launch's evaluation counts. */
export const unlock = (evaluation?: EvaluationCounts): Change => ({
  set: evaluation ? { accountsEligible: evaluation.eligible, accountsExcluded: evaluation.excluded } : {},
  remove: ['launchLock'],
});

/** `draft` → `enriching` with the attempt and its evaluation. */
export const launch = (campaign: CampaignRef, attempt: AttemptRecord, excluded: ExcludedCounts): Change =>
  merge(statusChange(campaign, 'enriching'), {
    set: { attempt, accountsEligible: attempt.eligible, accountsExcluded: excluded },
    remove: ['launchLock'],
  });

/** `enriching` → `enriched`: results and times (the recency-pending mark is on the organization item, lib/history/recency-pending.ts). */
export const complete = (
  campaign: CampaignRef,
  completion: { completedAt: string; resultsExpireAt: string; results: ResultMetrics },
): Change =>
  merge(statusChange(campaign, 'enriched', completion.resultsExpireAt), {
    remove: ['cancelRequestedAt'],
    set: {
      completedAt: completion.completedAt,
      resultsExpireAt: completion.resultsExpireAt,
      results: completion.results,
    },
  });

/** `enriching` → `draft` after a failed or canceled attempt (docs/launch.md#canceling). */
export const compensate = (campaign: CampaignRef, lastEnrichment: LastEnrichment): Change =>
  merge(statusChange(campaign, 'draft'), { set: { lastEnrichment }, remove: ['attempt', 'cancelRequestedAt'] });

/**
 * An operator asked to cancel the running attempt: recorded before its
 * execution is stopped, so whoever finishes the cancel (the command, or the
 * reconciler after the command died) compensates it as `canceled` and
 * never resumes it.
 */
export const requestCancel = (at: Date): Change => ({ set: { cancelRequestedAt: at.toISOString() } });

/** Legacy (before recency markers): the campaign leaves the recency-pending index (lib/migrations/account-history.ts). */
export const finishRecording = (): Change => ({ remove: ['gsi6pk'] });

/** `enriched` → `expired` at `resultsExpireAt`. */
export const expire = (campaign: CampaignRef): Change => merge(statusChange(campaign, 'expired'), { remove: ['gsi6pk'] });

/** New settings of a draft (docs/campaigns.md). */
export const edit = (changes: { name?: string; excludeEnrichedWithinDays?: number | null }): Change => ({ set: { ...changes } });
