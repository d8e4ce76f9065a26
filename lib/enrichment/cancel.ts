/**
 * Cancel a running enrichment (docs/launch.md#canceling: `POST /v1/campaigns/cancel`;
 * README.md#operator-cli: the operator's `campaign:cancel`, the same code).
 *
 * The cancel request is recorded on the campaign first, the execution is
 * stopped, then the attempt is compensated as `canceled`: the whole charge
 * refunded on the ledger, capacity released, back to `draft` with
 * `lastEnrichment: {status: "canceled", …, refunded: true}`, and
 * `campaign.enrichment_canceled` written in the same transaction
 * (lib/enrichment/store.ts `compensate`; with `deps.objects`, its result parts
 * and batch objects deleted). A stopped execution runs no Catch, so the
 * compensation is done here; if this call dies after recording the request,
 * the reconciler (reconcile.ts) finishes it and never resumes the attempt.
 *
 * Races: completion, a failure's compensation, the reconciler and another
 * cancel all end the attempt with a write conditioned on it still being the
 * campaign's running attempt, so exactly one of them moves money. The loser
 * reads the campaign again: if it is back in `draft` with this attempt
 * canceled (another cancel, or the reconciler finishing ours), the answer is
 * that campaign; otherwise (it completed or failed first) 409
 * `campaign_not_cancelable`.
 */
import { ExecutionDoesNotExist } from '@aws-sdk/client-sfn';
import { CampaignNotCancelableError, NotFoundError } from '../errors';
import { statusAt, toCampaign, type CampaignRecord } from '../campaigns/model';
import type { Campaign } from '../campaigns/docs';
import type { CampaignStore } from '../campaigns/store';
import type { TransactItem } from '../db/conditional';
import type { KeyCheck } from '../http/auth';
import type { EnrichmentStore } from './store';
import { compensateAttempt } from './steps';
import type { WorkflowPort } from './workflow';
import type { PrefixStore } from '../storage/prefixes';

/** What a cancel needs. */
export interface CancelDependencies {
  campaigns: Pick<CampaignStore, 'get' | 'getWithOrganization' | 'ownerOf'>;
  enrichment: Pick<EnrichmentStore, 'requestCancel' | 'compensate'>;
  workflow: Pick<WorkflowPort, 'stop'>;
  /** Deletes the canceled attempt's result parts and batch objects; without it nothing is deleted. */
  objects?: PrefixStore;
}

/** Who asked: the customer through the API, or an operator through the CLI (the execution's stop cause). */
export type CancelRequester = 'customer' | 'operator';

/** An API draft whose most recent attempt was canceled (the one started at `startedAt`, when given): what a repeated cancel answers. */
function isCanceledDraft(campaign: CampaignRecord, now: Date, startedAt?: string): boolean {
  return (
    campaign.createdVia === 'api' &&
    statusAt(campaign, now) === 'draft' &&
    campaign.lastEnrichment?.status === 'canceled' &&
    (startedAt === undefined || campaign.lastEnrichment.startedAt === startedAt)
  );
}

/**
 * Cancels the running enrichment of an API-created campaign (docs/launch.md#canceling).
 *
 * @param options.keyCheck - the request's API-key check, verified by the first read (campaign + organization, one BatchGetItem).
 * @param options.requester - recorded as the stopped execution's cause.
 * @returns the campaign after the cancel: `draft`, `lastEnrichment.status` `canceled`, `refunded: true`, `credits.charged` net of
 *   the refund, `credits.remaining` the balance after it. A repeated cancel (an API draft whose last attempt was canceled)
 *   answers the campaign again and changes nothing.
 * @throws NotFoundError for an unknown campaign (or another organization's);
 *   CampaignNotCancelableError (`details.status`) when it is not `enriching` otherwise (completed or failed first, never
 *   launched, another surface's).
 */
export async function cancelCampaign(
  deps: CancelDependencies,
  organizationId: string,
  campaignId: string,
  {
    now = new Date(),
    keyCheck,
    requester = 'customer',
    auditItem,
  }: {
    now?: Date;
    keyCheck?: KeyCheck;
    requester?: CancelRequester;
    /** The cancel's audit entry (docs/audit.md), written with the recorded cancel request. */
    auditItem?: (campaignId: string) => TransactItem;
  } = {},
): Promise<Campaign> {
  const read = await deps.campaigns.getWithOrganization(organizationId, campaignId, keyCheck);
  const campaign = read.campaign;
  if (!campaign) throw new NotFoundError('campaign', campaignId);
  if (isCanceledDraft(campaign, now)) return toCampaign(campaign, read.organization?.smbCredits ?? 0, now);
  const status = statusAt(campaign, now);
  const attempt = campaign.attempt;
  if (status !== 'enriching' || campaign.createdVia !== 'api' || !attempt) throw new CampaignNotCancelableError(status);

  // Nothing is written on a key not verified yet (an organization created before its list of active keys: one key read).
  await keyCheck?.ensure();
  // Recorded first: if this call dies past this point, the reconciler finishes the cancel (never resumes the attempt).
  // A refusal means the attempt already ended: the read below tells how.
  if (await deps.enrichment.requestCancel(organizationId, campaignId, attempt.id, now, auditItem ? [auditItem(campaignId)] : [])) {
    try {
      await deps.workflow.stop(attempt.executionArn, requester === 'customer' ? 'Canceled by the customer' : 'Canceled by an operator');
    } catch (error) {
      if (!(error instanceof ExecutionDoesNotExist)) throw error;
    }
    await compensateAttempt(deps, { organizationId, campaignId, attemptId: attempt.id, reason: 'canceled' }, now);
  }
  const after = await deps.campaigns.getWithOrganization(organizationId, campaignId);
  if (!after.campaign) throw new NotFoundError('campaign', campaignId);
  // This attempt canceled, by this call or by a racing one (another cancel, the reconciler finishing it).
  if (isCanceledDraft(after.campaign, now, attempt.startedAt)) return toCampaign(after.campaign, after.organization?.smbCredits ?? 0, now);
  // Completion or a failure came first.
  throw new CampaignNotCancelableError(statusAt(after.campaign, new Date()));
}

/**
 * The operator's cancel (`campaign:cancel --campaign ID`, README.md#operator-cli): the
 * organization is found from the campaign ID, then {@link cancelCampaign}.
 * @param auditItem - the operator's audit entry of the cancel (docs/audit.md), written with the recorded cancel request.
 * @returns `{campaignId, status: 'canceled'}` (also when it was canceled already).
 * @throws NotFoundError for an unknown campaign; CampaignNotCancelableError when it is not enriching (its message names the status).
 */
export async function cancelEnrichment(
  deps: CancelDependencies,
  campaignId: string,
  now = new Date(),
  auditItem?: (organizationId: string, campaignId: string) => TransactItem,
): Promise<{ campaignId: string; status: 'canceled' }> {
  const organizationId = await deps.campaigns.ownerOf(campaignId);
  if (!organizationId) throw new NotFoundError('campaign', campaignId);
  await cancelCampaign(deps, organizationId, campaignId, {
    now,
    requester: 'operator',
    ...(auditItem ? { auditItem: (id: string) => auditItem(organizationId, id) } : {}),
  });
  return { campaignId, status: 'canceled' };
}
