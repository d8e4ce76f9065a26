/**
 * The enrichment reconciler: nothing stuck, nothing lost, without a client's
 * help (docs/launch.md; docs/reliability.md "Crash windows"). One piece of code,
 * run in AWS every 5 minutes (EventBridge Scheduler) and on every execution
 * that ends ABORTED, FAILED or TIMED_OUT (an EventBridge rule), and in the
 * local stack at start and on an interval.
 *
 * For each campaign stored `enriching`, by its current attempt:
 * - an operator asked to cancel it (`cancelRequestedAt`) → stop the
 *   execution if it still runs and compensate the attempt as `canceled`:
 *   a canceled attempt is never resumed;
 * - its execution does not exist once the grace period after the launch has
 *   passed (the launching Lambda died between the charge and StartExecution;
 *   locally, a restart lost it) → start it (same name: the attempt ID);
 * - its execution ended and the campaign did not settle (stopped outside the
 *   product, timed out, failed outside the Catch) → compensate the attempt
 *   (`canceled` when it was stopped, `failed` otherwise): full refund,
 *   capacity released.
 * A campaign stored `enriched` is never run again when its execution is gone
 * (locally, after a restart): it needs only its expiry, done by the check
 * below, and, when its completion still waits for its recording (pending
 * recency on the organization, lib/history/recency-pending.ts) and no
 * execution is running to finish it, that recording, done here with the
 * FinishRecording step itself (idempotent; no credit moves, no result part
 * is rewritten). One whose results expired more
 * than the grace period ago but that is still stored `enriched` (its
 * execution died, or its ExpireResults task failed past its retries) is
 * expired here, and its attempts' and evaluations' objects deleted (with
 * `deps.objects`): the backstop of storage expiry (docs/data-model.md "Lifetime of stored data").
 *
 * Every repair is guarded by the attempt (the writes' conditions), so a
 * reconciler racing the workflow, the cancel command or another reconciler
 * changes nothing twice. It also checks capacity: an organization's
 * `enrichingAccounts` must equal its external figure plus the eligible
 * accounts of its `enriching` campaigns.
 */
import pMap from 'p-map';
import { logger } from '../observability';
import { statusAt, type AttemptRecord, type CampaignRecord } from '../campaigns/model';
import type { CampaignStore } from '../campaigns/store';
import type { OrganizationStore } from '../organizations/store';
import type { EnrichmentStore } from './store';
import type { AccountHistoryStore } from '../history/store';
import { compensateAttempt, expireResults, finishRecording } from './steps';
import { executionInputOf, type ExecutionStatus, type WorkflowPort } from './workflow';
import type { PrefixStore } from '../storage/prefixes';

/** What the reconciler needs. */
export interface ReconcileDependencies {
  campaigns: Pick<CampaignStore, 'get' | 'getMany' | 'idsInStatus' | 'lapsedIds'>;
  organizations: Pick<OrganizationStore, 'get'>;
  enrichment: Pick<EnrichmentStore, 'compensate' | 'expire' | 'finishRecording'>;
  /** The account history an organization's completions are recorded in (a test twin's is built in: docs/test-mode.md). */
  accountHistoryFor(organizationId: string): Pick<AccountHistoryStore, 'recordCompletion'>;
  workflow: Pick<WorkflowPort, 'start' | 'stop' | 'status' | 'executionArnOf'>;
  /** Every organization ID (the registry). */
  organizationIds(): Promise<string[]>;
  /** Seconds after a launch before a missing execution counts as lost (the launch may still be starting it). */
  graceSeconds: number;
  /** Deletes a compensated attempt's result parts and batch objects, and a lapsed campaign's objects (lib/enrichment/attempt-objects.ts); without it nothing is deleted and lapsed campaigns are left to the workflow. */
  objects?: PrefixStore;
}

/** One repair the reconciler made. */
export interface Repair {
  organizationId: string;
  campaignId: string;
  attemptId: string;
  action: 'started' | 'recorded' | 'compensated_failed' | 'compensated_canceled' | 'expired';
  /** The execution's status that called for it. */
  execution: ExecutionStatus;
}

/** An organization whose `enrichingAccounts` disagrees with its campaigns. */
export interface CapacityDrift {
  organizationId: string;
  /** On the organization item (accounts). */
  enrichingAccounts: number;
  /** External figure + eligible accounts of its `enriching` campaigns (accounts). */
  expected: number;
}

/** What one pass found and did. */
export interface ReconcileReport {
  organizations: number;
  /** Campaigns stored `enriching` that were looked at. */
  enriching: number;
  repairs: Repair[];
  capacityDrift: CapacityDrift[];
}

/** The attempt's execution status; every error but "does not exist" propagates. */
const executionOf = (deps: ReconcileDependencies, attempt: AttemptRecord) =>
  deps.workflow.status(attempt.executionArn ?? deps.workflow.executionArnOf(attempt.id));

/**
 * Repairs one `enriching` campaign (see the module comment).
 * @returns the repair made, or undefined when its attempt is healthy.
 */
export async function reconcileEnriching(
  deps: ReconcileDependencies,
  campaign: CampaignRecord,
  now = new Date(),
): Promise<Repair | undefined> {
  const attempt = campaign.attempt;
  if (campaign.status !== 'enriching' || !attempt) return undefined;
  const base = { organizationId: campaign.organizationId, campaignId: campaign.id, attemptId: attempt.id };
  const execution = await executionOf(deps, attempt);
  const compensate = async (reason: 'failed' | 'canceled'): Promise<Repair | undefined> => {
    const { compensated } = await compensateAttempt(deps, { ...base, reason }, now);
    return compensated ? { ...base, action: reason === 'failed' ? 'compensated_failed' : 'compensated_canceled', execution } : undefined;
  };

  if (campaign.cancelRequestedAt) {
    if (execution === 'RUNNING') await deps.workflow.stop(attempt.executionArn, 'Canceled by an operator');
    return compensate('canceled');
  }
  if (execution === 'MISSING') {
    const launchedSecondsAgo = (now.getTime() - Date.parse(attempt.startedAt)) / 1000;
    if (launchedSecondsAgo < deps.graceSeconds) return undefined;
    await deps.workflow.start(executionInputOf(campaign, attempt));
    return { ...base, action: 'started', execution };
  }
  if (execution === 'RUNNING' || execution === 'PENDING_REDRIVE') return undefined;
  // The execution ended but the campaign did not settle: read it again, in case the workflow settled it meanwhile.
  const current = await deps.campaigns.get(campaign.organizationId, campaign.id);
  if (current?.status !== 'enriching' || current.attempt?.id !== attempt.id) return undefined;
  return compensate(execution === 'ABORTED' ? 'canceled' : 'failed');
}

/** Organizations a pass reconciles at once (each one's steps stay in order). */
const ORGANIZATIONS_AT_ONCE = 8;

/**
 * One pass over one organization, or every organization of the registry
 * ({@link ORGANIZATIONS_AT_ONCE} at a time). Its reads grow with the
 * organizations and the campaigns that need something (enriching, lapsed,
 * or waiting for their recording), never with the live enriched ones: those
 * are found through the sparse expiry index only once their results lapsed.
 * @returns what it found and repaired; capacity drift is reported, never "fixed".
 */
export async function reconcileEnrichments(
  deps: ReconcileDependencies,
  options: { organizationId?: string; now?: Date } = {},
): Promise<ReconcileReport> {
  const now = options.now ?? new Date();
  const ids = options.organizationId !== undefined ? [options.organizationId] : await deps.organizationIds();
  const report: ReconcileReport = { organizations: 0, enriching: 0, repairs: [], capacityDrift: [] };
  const reports = await pMap(ids, (organizationId) => reconcileOrganization(deps, organizationId, now), {
    concurrency: ORGANIZATIONS_AT_ONCE,
  });
  for (const one of reports) {
    if (!one) continue;
    report.organizations++;
    report.enriching += one.enriching;
    report.repairs.push(...one.repairs);
    report.capacityDrift.push(...one.capacityDrift);
  }
  return report;
}

/** One organization's pass (see {@link reconcileEnrichments}); undefined when the organization is unknown. */
async function reconcileOrganization(
  deps: ReconcileDependencies,
  organizationId: string,
  now: Date,
): Promise<Omit<ReconcileReport, 'organizations'> | undefined> {
  const report: Omit<ReconcileReport, 'organizations'> = { enriching: 0, repairs: [], capacityDrift: [] };
  const lapsedBefore = new Date(now.getTime() - deps.graceSeconds * 1000);
  // One wave of reads: the organization, its enriching campaigns, its lapsed ones (the capacity check reads again below).
  const [before, enriching, lapsedIds] = await Promise.all([
    deps.organizations.get(organizationId),
    campaignsIn(deps, organizationId, 'enriching'),
    deps.objects ? deps.campaigns.lapsedIds(organizationId, lapsedBefore) : Promise.resolve([]),
  ]);
  if (!before) return undefined;
  report.enriching += enriching.length;
  let repaired = false;
  for (const campaign of enriching) {
    try {
      const repair = await reconcileEnriching(deps, campaign, now);
      if (repair) {
        report.repairs.push(repair);
        repaired ||= repair.action.startsWith('compensated');
        logger.warn('Reconciler repaired an enrichment', { ...repair });
      }
    } catch (error) {
      // One campaign's failure must not stop the others; the next pass tries it again.
      logger.error('Reconciling a campaign failed', { error, organizationId, campaignId: campaign.id });
    }
  }
  // An enriched campaign is never run again (below); what it still needs of its workflow is its expiry. Results past
  // their expiry by more than the grace period that the workflow did not expire (its execution died, or, locally, a
  // restart lost it) are expired here: only those are read, through the sparse expiry index.
  if (deps.objects) {
    for (const campaign of await deps.campaigns.getMany(organizationId, lapsedIds)) {
      if (campaign.status !== 'enriched' || !campaign.attempt || statusAt(campaign, lapsedBefore) !== 'expired') continue;
      try {
        const ref = { organizationId, campaignId: campaign.id, attemptId: campaign.attempt.id };
        const { expired, objectsDeleted } = await expireResults(
          { enrichment: deps.enrichment, campaigns: deps.campaigns, objects: deps.objects },
          ref,
          now,
        );
        if (expired || objectsDeleted > 0)
          report.repairs.push({ ...ref, action: 'expired', execution: await executionOf(deps, campaign.attempt) });
      } catch (error) {
        logger.error('Expiring a lapsed campaign failed', { error, organizationId, campaignId: campaign.id });
      }
    }
  }
  // Locally a restart loses executions. An enriched campaign needs nothing of its workflow but its expiry (above) and,
  // when its completion still waits for its recording, that recording: done here by the FinishRecording step itself,
  // never by running the workflow again, which would find contacts again and rewrite every result part (third
  // audit, R3; docs/reliability.md "Crash windows"). A running execution finishes it itself.
  const pendingCampaigns = await deps.campaigns.getMany(
    organizationId,
    (before.pendingRecency ?? []).map((pending) => pending.campaignId),
  );
  for (const campaign of pendingCampaigns) {
    try {
      if (!campaign.attempt) continue;
      const execution = await executionOf(deps, campaign.attempt);
      if (execution === 'RUNNING' || execution === 'PENDING_REDRIVE') continue;
      const ref = { organizationId, campaignId: campaign.id, attemptId: campaign.attempt.id };
      const { recorded } = await finishRecording(
        { enrichment: deps.enrichment, accountHistory: deps.accountHistoryFor(organizationId), organizations: deps.organizations },
        ref,
      );
      if (recorded) report.repairs.push({ ...ref, action: 'recorded', execution });
    } catch (error) {
      logger.error('Recording a completion failed', { error, organizationId, campaignId: campaign.id });
    }
  }
  // Capacity, when nothing moved under the check (a launch or a completion in between would make it meaningless).
  // Nothing enriching and nothing held beyond the external figure: nothing to check (no read more).
  if (!repaired && enriching.length === 0 && before.enrichingAccounts === before.externalEnrichingAccounts) return report;
  const after = await deps.organizations.get(organizationId);
  if (!after || repaired || after.enrichingAccounts !== before.enrichingAccounts) return report;
  const stillEnriching = await campaignsIn(deps, organizationId, 'enriching');
  const again = await deps.organizations.get(organizationId);
  if (!again || again.enrichingAccounts !== after.enrichingAccounts) return report;
  const expected = again.externalEnrichingAccounts + stillEnriching.reduce((sum, c) => sum + (c.attempt?.eligible ?? 0), 0);
  if (expected !== again.enrichingAccounts)
    report.capacityDrift.push({ organizationId, enrichingAccounts: again.enrichingAccounts, expected });
  return report;
}

/** The organization's campaigns stored in `status`, read consistently (batched). */
async function campaignsIn(deps: ReconcileDependencies, organizationId: string, status: 'enriching'): Promise<CampaignRecord[]> {
  const campaigns = await deps.campaigns.getMany(organizationId, await deps.campaigns.idsInStatus(organizationId, status));
  return campaigns.filter((campaign) => campaign.status === status);
}
