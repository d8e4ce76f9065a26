/**
 * Enrich (launch) a campaign (docs/launch.md, docs/errors.md).
 *
 * 1. The first read (campaign + organization + the request's API key, one
 *    BatchGetItem) answers a repeat call while `enriching`: the campaign as
 *    it is, no new charge, nothing else touched. Only API-created drafts
 *    launch: a launch lock (60 s) makes concurrent calls answer
 *    `enrichment_pending` while one evaluates.
 * 2. The account list is evaluated (warehouse statuses, one key per account;
 *    recency and CRM from per-organization lists, read after the organization);
 *    every account's outcome is recorded (lib/enrichment/outcomes.ts), refused launches too.
 *    The previous evaluation's objects are deleted once it is replaced
 *    (lib/enrichment/attempt-objects.ts).
 * 3. Refusals, in order: `no_eligible_accounts`, `insufficient_credits`,
 *    `spend_limit_exceeded` (docs/limits.md), `key_spend_limit_exceeded` (the request key's own
 *    limits, docs/authentication.md#per-key-credit-limits), `concurrency_limit_exceeded` (lib/enrichment/decision.ts, shared with
 *    quote); a refused launch keeps its counts, stays
 *    `draft` and charges nothing.
 * 4. The eligible list and one account object per workflow batch are
 *    written (each FindContactsBatch reads only its own).
 * 5. One transaction charges credits, reserves capacity, moves the campaign
 *    to `enriching`, writes the ledger entry, adds the charge to the month's
 *    spend (refused past the monthly spend limit), adds it to the launching key's month
 *    (refused past the key's `monthlyCredits`) and, when the charge
 *    crosses the low-balance threshold, the `organization.credits_low`
 *    event; then the workflow starts.
 *
 * Deadlines (docs/reliability.md "Deadlines"): every read is awaited through
 * the request's deadline signal, which is checked again right before the
 * transaction; the transaction also requires the lock to be held and
 * unexpired, and starts only while {@link LAUNCH_COMMIT_RESERVE_MS} are left
 * before the function's timeout, room for it and for StartExecution, so it is
 * awaited to its end and a launch answered with an error never charges
 * afterwards. StartExecution is awaited until just before the answer must
 * leave; one still running then is left to finish (the reconciler starts a
 * lost one) and the launch answers the charged campaign.
 *
 * Under an `Idempotency-Key` (docs/idempotency.md) the launch transaction also
 * writes the key's work marker, and a retry looks for it first: a launch
 * that charged answers 200 with that campaign as it is now, whatever
 * happened to the first answer, never a refusal caused by the launch itself.
 */
import { randomUUID } from 'node:crypto';
import { EnrichmentPendingError, NotFoundError } from '../errors';
import { newAttemptId } from '../ids';
import { emitMetrics, logger } from '../observability';
import { statusAt, toCampaign, type AttemptRecord, type CampaignRecord } from '../campaigns/model';
import type { Campaign } from '../campaigns/docs';
import type { CampaignStore } from '../campaigns/store';
import type { AccountListStore } from '../account-lists/account-list';
import type { OrganizationStore } from '../organizations/store';
import type { AccountHistoryStore } from '../history/store';
import type { Warehouse } from '../warehouse/warehouse';
import { evaluateLaunch } from './evaluate';
import { decideLaunch, notEnrichable, refusalOf } from './decision';
import { keySpendOf, monthlySpendOf } from './quote';
import type { LimitStore } from '../organizations/limits';
import type { OutcomeStore } from './outcomes';
import { compensateAttempt } from './steps';
import type { EnrichmentStore, LaunchWrite } from './store';
import { ENRICHMENT_BATCH_SIZE, executionInputOf, type WorkflowPort } from './workflow';
import { objectKeys } from '../objects';
import { beforeDeadline, DeadlineExceededError, throwIfPastDeadline } from '../http/deadline';
import type { KeyCheck } from '../http/auth';
import type { RequestContext } from '../http/pipeline';
import type { IdempotentWork } from '../idempotency/store';
import type { PrefixStore } from '../storage/prefixes';
import { deleteReplacedEvaluation, writeAttemptLists } from './attempt-objects';

/** What a launch needs. */
export interface LaunchDependencies {
  /** The campaign read with its organization (the key check in the first read), and alone (a compensation's re-read). */
  campaigns: Pick<CampaignStore, 'get' | 'getWithOrganization'>;
  organizations: OrganizationStore;
  accountLists: AccountListStore;
  warehouse: Warehouse;
  /** The evaluation's recency and CRM-target reads (lib/enrichment/evaluate.ts); a launch records nothing in the history. */
  accountHistory: Pick<AccountHistoryStore, 'getFacts'>;
  enrichment: EnrichmentStore;
  workflow: WorkflowPort;
  /** Per-account outcomes of each evaluation (docs/launch.md#per-account-outcomes); the previous one's manifest is read to delete its objects once replaced. */
  outcomes: Pick<OutcomeStore, 'recordEvaluation' | 'manifest'>;
  /** Deletion of a replaced evaluation's objects and of a compensated attempt's (lib/enrichment/attempt-objects.ts). */
  objects: PrefixStore;
  /** Credits per eligible account. */
  creditsPerAccount: number;
  /** Seconds after which an abandoned launch lock expires. */
  launchLockSeconds: number;
  /** This month's spend (docs/limits.md), read when the organization has a monthly spend limit. */
  limits: Pick<LimitStore, 'spent'>;
}

/**
 * The longest `Retry-After` of a 409 `enrichment_pending` (seconds; docs/launch.md): a launch holding the lock
 * answers within seconds, so the other call is told to retry after this long, or sooner when the lock expires sooner.
 * The lock's own lifetime (`launchLockSeconds`, 60 s) only bounds a lock whose holder died.
 */
export const ENRICHMENT_PENDING_RETRY_SECONDS = 2;

/** `Retry-After` of a 409 `enrichment_pending`: the lock's remaining time, at most {@link ENRICHMENT_PENDING_RETRY_SECONDS}. */
const pendingRetryAfter = (lockExpiresAt: string | undefined, now: Date): number =>
  Math.min(ENRICHMENT_PENDING_RETRY_SECONDS, lockExpiresAt ? (Date.parse(lockExpiresAt) - now.getTime()) / 1000 : 1);

/** Object key of an attempt's eligible account list (lib/objects.ts). */
export const eligibleListKey = objectKeys.eligibleList;

/**
 * A launch bound to an accepted charge (`expectedCharge`) found that its
 * evaluation would charge another amount: nothing was charged. Not an API
 * error: only the MCP server binds a launch (docs/agents.md), and it asks
 * the user again with {@link LaunchChargeChangedError.charge}.
 */
export class LaunchChargeChangedError extends Error {
  /**
   * @param expected - the credits the caller accepted.
   * @param charge - the credits this evaluation would charge.
   */
  constructor(
    readonly expected: number,
    readonly charge: number,
  ) {
    super(`The launch would charge ${charge} credits, not the ${expected} accepted; nothing was charged.`);
    this.name = 'LaunchChargeChangedError';
  }
}

/** Attempts at the launch transaction when the organization changed under it. */
const MAX_LAUNCH_ROUNDS = 10;

/**
 * Time the launch transaction needs left before the function's timeout to be
 * started, in ms: the transaction with the SDK's retries (DynamoDB answers it
 * in well under 100 ms; a throttled or slow one takes seconds), StartExecution
 * ({@link START_EXECUTION_ANSWER_MARGIN_MS} before the end at most), and the answer.
 */
export const LAUNCH_COMMIT_RESERVE_MS = 8_000;

/** Time kept for the answer (and the idempotency record's save) after StartExecution is given up waiting for, in ms. */
export const START_EXECUTION_ANSWER_MARGIN_MS = 2_000;

/**
 * Launches enrichment of a campaign.
 * @param options.requestId - the enrich call's request ID (X-Request-Id), recorded on the attempt and passed to its workflow execution (docs/idempotency.md#request-ids).
 * @param options.signal - the request's deadline (lib/http/deadline.ts): once it fires, the launch stops before its transaction.
 * @param options.keyCheck - the request's API-key check (lib/http/auth.ts): verified by the first read (the organization's list of active keys), or by a key read before any write.
 * @param options.remainingMs - ms left before the function's timeout: the transaction starts only with {@link LAUNCH_COMMIT_RESERVE_MS} left.
 * @param options.idempotentWork - the request's `Idempotency-Key` work (docs/idempotency.md): a launch it charged is answered again, and a new one records it.
 * @param options.expectedCharge - credits the caller accepted (the MCP server's confirmed quote, docs/agents.md): the launch
 *   refuses, charging and writing nothing but the evaluation's outcomes, when this evaluation would charge another amount.
 *   Internal: no HTTP request sets it.
 * @returns the campaign (`enriching`, with resolved counts and `credits.charged`).
 * @throws InvalidApiKeyError, RevokedApiKeyError (the key check), NotFoundError, CampaignNotEnrichableError, EnrichmentPendingError,
 *   NoEligibleAccountsError, InsufficientCreditsError (credits), SpendLimitExceededError, KeySpendLimitExceededError (credits), ConcurrencyLimitExceededError (accounts),
 *   DeadlineExceededError (nothing charged, lock released), {@link LaunchChargeChangedError} (with `expectedCharge` only; lock released).
 */
export async function enrichCampaign(
  deps: LaunchDependencies,
  organizationId: string,
  campaignId: string,
  now = new Date(),
  {
    requestId,
    signal,
    keyCheck,
    remainingMs,
    idempotentWork,
    expectedCharge,
    auditItem,
  }: {
    requestId?: string;
    signal?: AbortSignal;
    keyCheck?: KeyCheck;
    remainingMs?: () => number;
    idempotentWork?: IdempotentWork;
    expectedCharge?: number;
    /** The request's audit entry (docs/audit.md), written in the launch transaction. */
    auditItem?: RequestContext['auditItem'];
  } = {},
): Promise<Campaign> {
  throwIfPastDeadline(signal);
  // The first read answers a repeat call on its own: the campaign and the organization (credits.remaining,
  // and the list of active API keys that verifies the request's key), in one BatchGetItem.
  // Under a key, its work marker is read beside it (a retry of a launch that charged).
  const [read, launchedByKey] = await beforeDeadline(
    signal,
    Promise.all([deps.campaigns.getWithOrganization(organizationId, campaignId, keyCheck), idempotentWork?.find()]),
  );
  if (!read.campaign) throw new NotFoundError('campaign', campaignId);
  // This key's launch charged: the campaign as it is now, whatever it became since (docs/idempotency.md).
  if (launchedByKey === campaignId) return toCampaign(read.campaign, read.organization?.smbCredits ?? 0, now);
  const readStatus = statusAt(read.campaign, now);
  // A repeat call on a running API launch answers the campaign as it is (no new charge), touching
  // neither Step Functions, the launch lock nor the organization item again. A launch whose
  // StartExecution was lost is started by the reconciler (lib/enrichment/reconcile.ts).
  if (isRunningApiLaunch(read.campaign, readStatus)) return toCampaign(read.campaign, read.organization?.smbCredits ?? 0, now);
  if (readStatus !== 'draft' || read.campaign.createdVia !== 'api') throw notEnrichable(read.campaign, readStatus);

  // Nothing is written on a key not verified yet (an organization created before its list of active keys: one key read).
  await keyCheck?.ensure();
  // An API draft: the launch lock (60 s) makes concurrent calls answer `enrichment_pending` while one evaluates.
  const lockToken = randomUUID();
  const lock = await deps.enrichment.acquireLaunchLock(organizationId, campaignId, lockToken, now, deps.launchLockSeconds);
  if (!lock.ok) {
    if (lock.reason === 'missing') throw new NotFoundError('campaign', campaignId);
    if (lock.reason === 'held') throw new EnrichmentPendingError(pendingRetryAfter(lock.lockExpiresAt, now));
    // It changed since the read: another call launched it (a repeat call now) or it is no longer a draft.
    const status = statusAt(lock.current, now);
    if (isRunningApiLaunch(lock.current, status)) {
      const organization = await beforeDeadline(signal, deps.organizations.get(organizationId));
      return toCampaign(lock.current, organization?.smbCredits ?? 0, now);
    }
    throw notEnrichable(lock.current, status);
  }
  const campaign = lock.campaign;

  let evaluationCounts: { eligible: number; excluded: NonNullable<CampaignRecord['accountsExcluded']> } | undefined;
  let launched = false;
  try {
    // The previous evaluation (if any) is replaced below; its objects are deleted once it is.
    const previousManifest = deps.outcomes.manifest(campaignId);
    previousManifest.catch(() => undefined); // awaited (and its failure ignored) where it is used
    // The organization was read (strongly consistent) by the first read, BEFORE the evaluation reads
    // the history buckets: its pending completions and the buckets together cover every completion
    // (lib/enrichment/evaluate.ts). The first round's decision reuses it; the launch transaction re-checks balance and capacity.
    const firstOrg = read.organization;
    if (!firstOrg) throw new NotFoundError('organization', organizationId);
    const accountIds = await beforeDeadline(signal, deps.accountLists.get(campaign.accountsObjectKey));
    const evaluation = await beforeDeadline(
      signal,
      evaluateLaunch(deps, {
        organizationId,
        accountIds,
        excludeEnrichedWithinDays: campaign.excludeEnrichedWithinDays,
        now,
        pendingRecency: firstOrg.pendingRecency,
        historyBuckets: firstOrg.historyBuckets ?? 1,
      }),
    );
    const eligible = evaluation.eligibleIds.length;
    evaluationCounts = { eligible, excluded: evaluation.excluded };
    // The evaluation's ID is the attempt's ID if it launches; its per-account outcomes are kept either way (docs/launch.md#per-account-outcomes).
    const attemptId = newAttemptId();
    // Written while the organization is read and the attempt's lists are written (first round below), and awaited before any refusal or charge.
    const recorded = deps.outcomes
      .recordEvaluation({
        organizationId,
        campaignId,
        evaluationId: attemptId,
        evaluatedAt: now.toISOString(),
        accountIds,
        buckets: evaluation.buckets,
        batchSize: ENRICHMENT_BATCH_SIZE,
      })
      .then(async () =>
        deleteReplacedEvaluation(deps, campaign, (await previousManifest.catch(() => undefined))?.evaluationId, attemptId, now),
      );
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
      // The launching key: the charge and its refunds count against its limits (docs/authentication.md#per-key-credit-limits).
      ...(keyCheck?.keyId !== undefined ? { keyId: keyCheck.keyId } : {}),
    };
    let listsWritten = false;
    // Bound to an accepted quote: another charge is refused before anything is charged (the caller asks again).
    if (expectedCharge !== undefined && attempt.charged !== expectedCharge) {
      await beforeDeadline(signal, recorded);
      throw new LaunchChargeChangedError(expectedCharge, attempt.charged);
    }

    // The transaction's conditions re-check the organization; after a lost race it is read again.
    for (let round = 0; ; round++) {
      const org = round === 0 ? firstOrg : await beforeDeadline(signal, deps.organizations.get(organizationId));
      const [spend, keySpend] = org
        ? await beforeDeadline(signal, Promise.all([monthlySpendOf(deps.limits, org, now), keySpendOf(deps.limits, keyCheck, now)]))
        : [];
      // The one decision quote shows too (lib/enrichment/decision.ts): same figures, same refusal order.
      const refusal = org
        ? refusalOf(
            decideLaunch(
              { requested: evaluation.requested, eligible, excluded: evaluation.excluded },
              org,
              deps.creditsPerAccount,
              spend,
              keySpend,
            ),
            spend,
            keySpend,
          )
        : undefined;
      // The evaluation's record is complete before any refusal or charge. Unless refused, the attempt's
      // lists are written alongside it: the whole eligible list, and one object per workflow batch (each batch reads only its own).
      const writeLists: boolean = org !== undefined && !refusal && !listsWritten;
      await beforeDeadline(
        signal,
        Promise.all([
          recorded,
          writeLists
            ? writeAttemptLists(
                deps,
                { organizationId, campaignId, attemptId, eligibleObjectKey: attempt.eligibleObjectKey },
                evaluation.eligibleAccounts,
              )
            : undefined,
        ]),
      );
      listsWritten ||= writeLists;
      if (!org) throw new NotFoundError('organization', organizationId);
      if (refusal) throw refusal;
      // The point of no return: started only before the deadline and with room left for it and StartExecution,
      // then awaited to its end so the answer tells what happened (the transaction also re-checks the lock at commit).
      throwIfPastDeadline(signal);
      if (remainingMs && remainingMs() < LAUNCH_COMMIT_RESERVE_MS)
        throw new DeadlineExceededError('Too little time left to commit the launch; nothing was charged.');
      const outcome = await launchSettled(deps, signal, evaluationCounts, {
        organizationId,
        campaignId,
        before: campaign,
        lockToken,
        attempt,
        excluded: evaluation.excluded,
        maxEnrichingAccounts: org.maxEnrichingAccounts,
        alsoPut: [...(idempotentWork ? [idempotentWork.workItem(campaignId)] : []), ...(auditItem ? [auditItem(campaignId)] : [])],
        smbCredits: org.smbCredits,
        limits: { monthlySpendLimit: org.limits?.monthlySpendLimit ?? null, lowBalanceThreshold: org.limits?.lowBalanceThreshold ?? null },
        keyMonthlyCredits: keySpend?.monthly?.limit ?? null,
        ...(org.liveOrganizationId !== undefined ? { liveOrganizationId: org.liveOrganizationId } : {}),
      });
      if (outcome.ok) {
        launched = true;
        await startWorkflow(deps, outcome.campaign, attempt, remainingMs);
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
 * Sends the launch transaction and learns its outcome before the answer,
 * whatever the transaction's latency or the event loop's delay
 * (docs/reliability.md, "Deadlines"): an error answer is never followed by
 * a charge. When the deadline (`signal`) comes first, the launch is fenced:
 * the lock the transaction is conditioned on is released in one conditional
 * write. Released: the transaction can never commit (nothing charged; the
 * answer is the deadline's error). Not released because the attempt
 * launched: the launch's outcome, answered 200 as any other.
 * @throws DeadlineExceededError when fenced (nothing was or will be charged).
 */
async function launchSettled(
  deps: LaunchDependencies,
  signal: AbortSignal | undefined,
  evaluation: { eligible: number; excluded: NonNullable<CampaignRecord['accountsExcluded']> } | undefined,
  write: LaunchWrite,
): Promise<Awaited<ReturnType<LaunchDependencies['enrichment']['launch']>>> {
  const sending = deps.enrichment.launch(write);
  if (!signal) return sending;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    onAbort = () => resolve('deadline');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const first = await Promise.race([sending, deadline]).finally(() => signal.removeEventListener('abort', onAbort!));
  if (first !== 'deadline') return first;
  sending.catch((error: unknown) =>
    logger.warn('The fenced launch transaction failed (nothing was charged)', {
      error,
      campaignId: write.campaignId,
      attemptId: write.attempt.id,
    }),
  );
  const fence = await deps.enrichment.fenceLaunch(write.organizationId, write.campaignId, write.lockToken, write.attempt.id, evaluation);
  if (fence.released === false && fence.launched) {
    logger.warn('The launch transaction answered after the deadline; it had committed: answering the charged campaign', {
      campaignId: write.campaignId,
      attemptId: write.attempt.id,
    });
    return { ok: true, campaign: fence.launched };
  }
  throw new DeadlineExceededError(
    'The launch transaction did not answer before the deadline; its lock was released so it cannot commit: nothing was charged.',
  );
}

/**
 * A repeat call's case: an API launch whose attempt runs (or is being
 * canceled by an operator, which the cancel or the reconciler finishes).
 */
function isRunningApiLaunch(campaign: CampaignRecord, status: CampaignRecord['status']): boolean {
  return status === 'enriching' && campaign.createdVia === 'api' && Boolean(campaign.attempt);
}

/**
 * Starts the attempt's execution; if that fails the charge is compensated at
 * once. With `remainingMs`, waits for StartExecution only until
 * {@link START_EXECUTION_ANSWER_MARGIN_MS} before the function's timeout: the
 * launch is charged, so it answers the campaign; the call goes on (it is
 * idempotent by its name, the attempt ID) and the reconciler starts the
 * execution if it is lost.
 */
async function startWorkflow(
  deps: LaunchDependencies,
  campaign: CampaignRecord,
  attempt: AttemptRecord,
  remainingMs?: () => number,
): Promise<void> {
  const starting = deps.workflow.start(executionInputOf(campaign, attempt));
  try {
    if (!remainingMs) {
      await starting;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, remainingMs() - START_EXECUTION_ANSWER_MARGIN_MS))),
    );
    const first = await Promise.race([starting, late]).finally(() => clearTimeout(timer));
    if (first === 'late') {
      logger.warn('StartExecution still running at the deadline; answering the charged launch (the reconciler starts a lost execution)', {
        campaignId: campaign.id,
        attemptId: attempt.id,
      });
      starting.catch((error: unknown) =>
        logger.error('Late StartExecution failed; the reconciler starts the execution', {
          error,
          campaignId: campaign.id,
          attemptId: attempt.id,
        }),
      );
    }
  } catch (error) {
    logger.error('Starting the enrichment workflow failed; refunding the attempt', {
      error,
      campaignId: campaign.id,
      attemptId: attempt.id,
    });
    await compensateAttempt(deps, {
      organizationId: campaign.organizationId,
      campaignId: campaign.id,
      attemptId: attempt.id,
      reason: 'failed',
    });
    throw error;
  }
}
