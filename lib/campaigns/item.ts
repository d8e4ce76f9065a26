/**
 * The one owner of the campaign item (docs/data-model.md): how a
 * {@link CampaignRecord} maps to and from DynamoDB, the index keys each status
 * derives, the named conditions campaign writes rely on, and every state
 * change as a {@link Change} (docs/README.md#a-campaigns-life-in-one-paragraph; docs/launch.md, docs/csv.md).
 *
 * Stores compose these into UpdateItem calls or transaction items; no other
 * module spells a campaign attribute in an expression.
 */
import * as keys from '../db/keys';
import { merge, type Change, type Clause } from '../db/expression';
import type { CampaignStatus } from '../errors';
import type { AttemptRecord, CampaignRecord, ExcludedCounts, LastEnrichment, ResultMetrics } from './model';

/** Key and bookkeeping attributes of the item that are not part of the record. */
const ITEM_ONLY_ATTRIBUTES = [
  'pk',
  'sk',
  'type',
  'gsi1pk',
  'gsi2pk',
  'gsi3pk',
  'gsi4pk',
  'listSk',
  'gsi5pk',
  'expirySk',
  'gsi6pk',
  'launchLock',
] as const;

/** Maps a stored campaign item to its {@link CampaignRecord}. */
export function toCampaignRecord(item: Record<string, unknown>): CampaignRecord {
  const record = { ...item };
  for (const attribute of ITEM_ONLY_ATTRIBUTES) delete record[attribute];
  return record as unknown as CampaignRecord;
}

/** The item of a new campaign: the record plus its table and index keys. */
export function campaignItem(record: CampaignRecord): Record<string, unknown> {
  return {
    ...keys.campaign(record.organizationId, record.id),
    ...keys.campaignIndexes(record.organizationId, record),
    type: 'campaign',
    ...record,
  };
}

/** The campaign identity every change needs: its key and the parts its index keys derive from. */
export type CampaignRef = Pick<CampaignRecord, 'organizationId' | 'id' | 'createdVia'>;

/**
 * Moving to `status`, with the index keys that follow from it: the status
 * list partitions always; the sparse expiry index only while `enriched`.
 */
export function statusChange(campaign: CampaignRef & { createdAt?: string }, status: CampaignStatus, resultsExpireAt?: string): Change {
  const indexKeys = keys.campaignIndexes(campaign.organizationId, {
    id: campaign.id,
    createdAt: campaign.createdAt ?? '',
    status,
    createdVia: campaign.createdVia,
    resultsExpireAt,
  });
  const expiry = status === 'enriched' && resultsExpireAt ? { gsi5pk: indexKeys.gsi5pk, expirySk: indexKeys.expirySk } : undefined;
  return {
    set: { status, gsi2pk: indexKeys.gsi2pk, gsi4pk: indexKeys.gsi4pk, ...expiry },
    remove: expiry ? [] : ['gsi5pk', 'expirySk'],
  };
}

/** Named conditions on a campaign item (value placeholders start with `:c_`). */
export const campaignIs = {
  /** The item exists. */
  present: (): Clause => ({ expression: 'attribute_exists(pk)' }),
  /** An API-created draft: the only campaigns enrich and update may change (docs/launch.md; docs/campaigns.md). */
  apiDraft: (): Clause => ({
    expression: 'createdVia = :c_api AND #status = :c_draft',
    names: { '#status': 'status' },
    values: { ':c_api': 'api', ':c_draft': 'draft' },
  }),
  /** No launch evaluates it now (no lock, or the holder's lock expired; docs/errors.md). */
  unlocked: (now: Date): Clause => ({
    expression: 'attribute_not_exists(launchLock) OR launchLock.expiresAt < :c_now',
    values: { ':c_now': now.toISOString() },
  }),
  /** The launch lock is held by `token` and has not expired at `now`: a late launch never commits (docs/errors.md). */
  lockedBy: (token: string, now: Date): Clause => ({
    expression: 'launchLock.#token = :c_token AND launchLock.expiresAt >= :c_now',
    names: { '#token': 'token' },
    values: { ':c_token': token, ':c_now': now.toISOString() },
  }),
  /** `enriching` with `attemptId` as its current attempt. */
  runningAttempt: (attemptId: string): Clause => ({
    expression: '#status = :c_enriching AND attempt.id = :c_attempt',
    names: { '#status': 'status' },
    values: { ':c_enriching': 'enriching', ':c_attempt': attemptId },
  }),
  /** `attemptId` is its current (or completed) attempt. */
  ofAttempt: (attemptId: string): Clause => ({ expression: 'attempt.id = :c_attempt', values: { ':c_attempt': attemptId } }),
  /** Stored `enriched` and `resultsExpireAt` reached at `now` (docs/lifetimes.md). */
  due: (now: Date): Clause => ({
    expression: '#status = :c_enriched AND resultsExpireAt <= :c_now',
    names: { '#status': 'status' },
    values: { ':c_enriched': 'enriched', ':c_now': now.toISOString() },
  }),
};

/** Launch evaluation counts kept on the campaign (accounts). */
export interface EvaluationCounts {
  eligible: number;
  excluded: ExcludedCounts;
}

/**
 * Every state change of a campaign item. Money (`creditsCharged`) is not
 * here: its change comes from `lib/credits` with the ledger entry it belongs to.
 */
export const campaignChanges = {
  /** Takes the launch lock until `expiresAt`. */
  lock: (token: string, expiresAt: Date): Change => ({ set: { launchLock: { token, expiresAt: expiresAt.toISOString() } } }),
  /** Releases the launch lock, keeping a refused launch's evaluation counts. */
  unlock: (evaluation?: EvaluationCounts): Change => ({
    set: evaluation ? { accountsEligible: evaluation.eligible, accountsExcluded: evaluation.excluded } : {},
    remove: ['launchLock'],
  }),
  /** `draft` → `enriching` with the attempt and its evaluation. */
  launch: (campaign: CampaignRef, attempt: AttemptRecord, excluded: ExcludedCounts): Change =>
    merge(statusChange(campaign, 'enriching'), {
      set: { attempt, accountsEligible: attempt.eligible, accountsExcluded: excluded },
      remove: ['launchLock'],
    }),
  /** `enriching` → `enriched`: results and times (the recency-pending mark is on the organization item, lib/history/recency-pending.ts). */
  complete: (campaign: CampaignRef, completion: { completedAt: string; resultsExpireAt: string; results: ResultMetrics }): Change =>
    merge(statusChange(campaign, 'enriched', completion.resultsExpireAt), {
      remove: ['cancelRequestedAt'],
      set: {
        completedAt: completion.completedAt,
        resultsExpireAt: completion.resultsExpireAt,
        results: completion.results,
      },
    }),
  /** `enriching` → `draft` after a failed or canceled attempt (docs/launch.md#canceling). */
  compensate: (campaign: CampaignRef, lastEnrichment: LastEnrichment): Change =>
    merge(statusChange(campaign, 'draft'), { set: { lastEnrichment }, remove: ['attempt', 'cancelRequestedAt'] }),
  /**
   * An operator asked to cancel the running attempt: recorded before its
   * execution is stopped, so whoever finishes the cancel (the command, or the
   * reconciler after the command died) compensates it as `canceled` and
   * never resumes it.
   */
  requestCancel: (at: Date): Change => ({ set: { cancelRequestedAt: at.toISOString() } }),
  /** Legacy (before recency markers): the campaign leaves the recency-pending index (lib/migrations/account-history.ts). */
  finishRecording: (): Change => ({ remove: ['gsi6pk'] }),
  /** `enriched` → `expired` at `resultsExpireAt`. */
  expire: (campaign: CampaignRef): Change => merge(statusChange(campaign, 'expired'), { remove: ['gsi6pk'] }),
  /** New settings of a draft (docs/campaigns.md). */
  edit: (changes: { name?: string; excludeEnrichedWithinDays?: number | null }): Change => ({ set: { ...changes } }),
};
