/**
 * Enrich (launch) a campaign (spec "Enrich a campaign"; decisions §2, §4).
 *
 * 1. A launch lock (60 s), taken by the first read, makes concurrent calls
 *    answer `enrichment_pending` while one evaluates. Only API-created drafts
 *    launch; a repeat call while `enriching` returns the campaign as it is
 *    (no new charge).
 * 2. The organization is read, then the account list is evaluated (warehouse
 *    statuses, one key per account; recency and CRM from per-organization lists);
 *    every account's outcome is recorded (lib/enrichment/outcomes.ts), refused launches too.
 * 3. Refusals, in order: `no_eligible_accounts`, `insufficient_credits`,
 *    `concurrency_limit_exceeded` (lib/enrichment/decision.ts, shared with
 *    quote); a refused launch keeps its counts, stays
 *    `draft` and charges nothing.
 * 4. One transaction charges credits, reserves capacity, moves the campaign
 *    to `enriching` and writes the ledger entry; then the workflow starts.
 *
 * Deadlines (docs/reliability.md "Deadlines"): every read is awaited through
 * the request's deadline signal, which is checked again right before the
 * transaction; the transaction also requires the lock to be held and
 * unexpired, so a launch answered with an error never charges afterwards.
 */
import { randomUUID } from 'node:crypto';
import { EnrichmentPendingError, NotFoundError } from '../errors';
import { newAttemptId } from '../ids';
import { emitMetrics, logger } from '../observability';
import { statusAt, toCampaign, type AttemptRecord, type CampaignRecord } from '../campaigns/model';
import type { Campaign } from '../campaigns/schema';
import type { CampaignStore } from '../campaigns/store';
import type { AccountListStore } from '../campaigns/account-list';
import type { OrganizationStore } from '../organizations/store';
import type { AccountHistoryStore } from '../organizations/account-history';
import type { Warehouse } from '../warehouse/warehouse';
import { evaluateLaunch } from './evaluate';
import { decideLaunch, notEnrichable, refusalOf } from './decision';
import type { OutcomeStore } from './outcomes';
import { compensateAttempt } from './steps';
import type { EnrichmentStore } from './store';
import { ENRICHMENT_BATCH_SIZE, executionInputOf, type WorkflowPort } from './workflow';
import { objectKeys } from '../objects';
import { beforeDeadline, throwIfPastDeadline } from '../http/deadline';

/** What a launch needs. */
export interface LaunchDependencies {
  campaigns: CampaignStore;
  organizations: OrganizationStore;
  accountLists: AccountListStore;
  warehouse: Warehouse;
  accountHistory: AccountHistoryStore;
  enrichment: EnrichmentStore;
  workflow: WorkflowPort;
  /** Per-account outcomes of each evaluation (decisions §11). */
  outcomes: Pick<OutcomeStore, 'recordEvaluation'>;
  /** Credits per eligible account. */
  creditsPerAccount: number;
  /** Seconds after which an abandoned launch lock expires. */
  launchLockSeconds: number;
}

/** Object key of an attempt's eligible account list (lib/objects.ts). */
export const eligibleListKey = objectKeys.eligibleList;

/** Attempts at the launch transaction when the organization changed under it. */
const MAX_LAUNCH_ROUNDS = 10;

/**
 * Launches enrichment of a campaign.
 * @param options.requestId - the enrich call's request ID (X-Request-Id), recorded on the attempt and passed to its workflow execution (decisions §10).
 * @param options.signal - the request's deadline (lib/http/deadline.ts): once it fires, the launch stops before its transaction.
 * @returns the campaign (`enriching`, with resolved counts and `credits.charged`).
 * @throws NotFoundError, CampaignNotEnrichableError, EnrichmentPendingError,
 *   NoEligibleAccountsError, InsufficientCreditsError (credits), ConcurrencyLimitExceededError (accounts),
 *   DeadlineExceededError (nothing charged, lock released).
 */
export async function enrichCampaign(
  deps: LaunchDependencies,
  organizationId: string,
  campaignId: string,
  now = new Date(),
  { requestId, signal }: { requestId?: string; signal?: AbortSignal } = {},
): Promise<Campaign> {
  throwIfPastDeadline(signal);
  // Taking the lock is the first read: it returns the campaign, or what it is instead.
  const lockToken = randomUUID();
  const lock = await deps.enrichment.acquireLaunchLock(organizationId, campaignId, lockToken, now, deps.launchLockSeconds);
  if (!lock.ok) {
    if (lock.reason === 'missing') throw new NotFoundError('campaign', campaignId);
    if (lock.reason === 'held') throw new EnrichmentPendingError(lock.lockExpiresAt ? (Date.parse(lock.lockExpiresAt) - now.getTime()) / 1000 : 1);
    const status = statusAt(lock.current, now);
    // A repeat call on a running API launch answers the campaign as it is (no new charge).
    // It also (re)starts the attempt's execution: starting the same execution is a no-op,
    // and it finishes an attempt whose first call died between the charge and the start.
    // An attempt an operator is canceling is never resumed (the cancel, or the reconciler, compensates it).
    if (status === 'enriching' && lock.current.createdVia === 'api' && lock.current.attempt) {
      const [organization] = await Promise.all([
        beforeDeadline(signal, deps.organizations.get(organizationId)),
        lock.current.cancelRequestedAt ? undefined : restartExecution(deps, lock.current, lock.current.attempt),
      ]);
      return toCampaign(lock.current, organization?.smbCredits ?? 0, now);
    }
    throw notEnrichable(lock.current, status);
  }
  const campaign = lock.campaign;

  let evaluationCounts: { eligible: number; excluded: NonNullable<CampaignRecord['accountsExcluded']> } | undefined;
  let launched = false;
  try {
    // The organization is read BEFORE the evaluation lists recency markers: its pending
    // completions and the markers together cover every completion (lib/enrichment/evaluate.ts).
    // The first round's decision reuses it; the launch transaction re-checks balance and capacity.
    const [accountIds, firstOrg] = await beforeDeadline(signal, Promise.all([deps.accountLists.get(campaign.accountsObjectKey), deps.organizations.get(organizationId)]));
    if (!firstOrg) throw new NotFoundError('organization', organizationId);
    const evaluation = await beforeDeadline(
      signal,
      evaluateLaunch(deps, { organizationId, accountIds, excludeEnrichedWithinDays: campaign.excludeEnrichedWithinDays, now, pendingRecency: firstOrg.pendingRecency }),
    );
    const eligible = evaluation.eligibleIds.length;
    evaluationCounts = { eligible, excluded: evaluation.excluded };
    // The evaluation's ID is the attempt's ID if it launches; its per-account outcomes are kept either way (decisions §11).
    const attemptId = newAttemptId();
    // Written while the organization is read (first round below), and awaited before any refusal or charge.
    const recorded = deps.outcomes.recordEvaluation({ organizationId, campaignId, evaluationId: attemptId, evaluatedAt: now.toISOString(), accountIds, buckets: evaluation.buckets, batchSize: ENRICHMENT_BATCH_SIZE });
    recorded.catch(() => undefined); // a failure is rethrown where it is awaited

    const attempt: AttemptRecord = {
      id: attemptId,
      startedAt: now.toISOString(),
      eligible,
      charged: eligible * deps.creditsPerAccount,
      creditsPerAccount: deps.creditsPerAccount,
      eligibleObjectKey: eligibleListKey(organizationId, campaignId, attemptId),
      executionArn: deps.workflow.executionArnOf(attemptId),
      ...(requestId ? { requestId } : {}),
    };
    let eligibleListWritten = false;

    // The transaction's conditions re-check the organization; after a lost race it is read again.
    for (let round = 0; ; round++) {
      const [org] = await beforeDeadline(signal, Promise.all([round === 0 ? firstOrg : deps.organizations.get(organizationId), round === 0 ? recorded : undefined]));
      if (!org) throw new NotFoundError('organization', organizationId);
      // The one decision quote shows too (lib/enrichment/decision.ts): same figures, same refusal order.
      const refusal = refusalOf(decideLaunch({ requested: evaluation.requested, eligible, excluded: evaluation.excluded }, org, deps.creditsPerAccount));
      if (refusal) throw refusal;
      if (!eligibleListWritten) {
        await beforeDeadline(signal, deps.accountLists.put(attempt.eligibleObjectKey, evaluation.eligibleIds));
        eligibleListWritten = true;
      }
      // The point of no return: started only before the deadline, then awaited to its end so
      // the answer tells what happened (the transaction also re-checks the lock at commit).
      throwIfPastDeadline(signal);
      const outcome = await deps.enrichment.launch({ organizationId, campaignId, before: campaign, lockToken, attempt, excluded: evaluation.excluded, maxEnrichingAccounts: org.maxEnrichingAccounts });
      if (outcome.ok) {
        launched = true;
        await startWorkflow(deps, outcome.campaign, attempt);
        emitMetrics({ CampaignsLaunched: 1, CreditsCharged: attempt.charged });
        return toCampaign(outcome.campaign, org.smbCredits - attempt.charged, now);
      }
      if (outcome.reason === 'lock_lost' || round + 1 >= MAX_LAUNCH_ROUNDS) throw new EnrichmentPendingError();
    }
  } finally {
    if (!launched) await deps.enrichment.releaseLaunchLock(organizationId, campaignId, lockToken, evaluationCounts);
  }
}

/**
 * A repeat call's (re)start of the running attempt's execution. It only
 * helps: the reconciler starts a lost execution anyway, so a failure here
 * (a cancel or a completion racing this call) never turns the answer, the
 * campaign as it is, into an error.
 */
async function restartExecution(deps: LaunchDependencies, campaign: CampaignRecord, attempt: AttemptRecord): Promise<void> {
  try {
    await deps.workflow.start(executionInputOf(campaign, attempt));
  } catch (error) {
    logger.warn('A repeat enrich could not (re)start the running attempt; the reconciler will', { error, campaignId: campaign.id, attemptId: attempt.id });
  }
}

/** Starts the attempt's execution; if that fails the charge is compensated at once. */
async function startWorkflow(deps: LaunchDependencies, campaign: CampaignRecord, attempt: AttemptRecord): Promise<void> {
  try {
    await deps.workflow.start(executionInputOf(campaign, attempt));
  } catch (error) {
    logger.error('Starting the enrichment workflow failed; refunding the attempt', { error, campaignId: campaign.id, attemptId: attempt.id });
    await compensateAttempt(deps, { organizationId: campaign.organizationId, campaignId: campaign.id, attemptId: attempt.id, reason: 'failed' });
    throw error;
  }
}
