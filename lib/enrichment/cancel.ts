/**
 * Cancel a running enrichment (operator CLI `campaign:cancel`, decisions §8):
 * the cancel request is recorded on the campaign, the execution is stopped
 * and the attempt compensated as `canceled` (full refund, capacity released,
 * back to `draft`; with `deps.objects`, its result parts and batch objects deleted). A stopped execution runs no Catch, so the compensation is
 * done here, guarded like every compensation by the attempt still being
 * current; if this command dies after the request, the reconciler
 * (reconcile.ts) finishes it.
 */
import { ExecutionDoesNotExist } from '@aws-sdk/client-sfn';
import { NotFoundError } from '../errors';
import { statusAt } from '../campaigns/model';
import type { CampaignStore } from '../campaigns/store';
import type { EnrichmentStore } from './store';
import { compensateAttempt } from './steps';
import type { WorkflowPort } from './workflow';
import type { PrefixStore } from '../storage/prefixes';

/**
 * Cancels the running attempt of a campaign.
 * @returns `status: 'canceled'` when this call canceled it, otherwise the campaign's status (the attempt completed first).
 * @throws NotFoundError for an unknown campaign; Error when the campaign is not enriching.
 */
export async function cancelEnrichment(
  deps: { campaigns: CampaignStore; enrichment: EnrichmentStore; workflow: WorkflowPort; objects?: PrefixStore },
  campaignId: string,
  now = new Date(),
): Promise<{ campaignId: string; status: string }> {
  const organizationId = await deps.campaigns.ownerOf(campaignId);
  const campaign = organizationId ? await deps.campaigns.get(organizationId, campaignId) : undefined;
  if (!organizationId || !campaign) throw new NotFoundError('campaign', campaignId);
  const status = statusAt(campaign, now);
  if (status !== 'enriching' || !campaign.attempt) throw new Error(`Campaign ${campaignId} is "${status}"; only an enriching campaign can be canceled.`);
  // Recorded first: if this command dies past this point, the reconciler finishes the cancel (never resumes the attempt).
  await deps.enrichment.requestCancel(organizationId, campaignId, campaign.attempt.id, now);
  try {
    await deps.workflow.stop(campaign.attempt.executionArn, 'Canceled by an operator');
  } catch (error) {
    if (!(error instanceof ExecutionDoesNotExist)) throw error;
  }
  const { compensated } = await compensateAttempt(deps, { organizationId, campaignId, attemptId: campaign.attempt.id, reason: 'canceled' }, now);
  if (compensated) return { campaignId, status: 'canceled' };
  const after = await deps.campaigns.get(organizationId, campaignId);
  return { campaignId, status: after ? statusAt(after, new Date()) : 'unknown' };
}
