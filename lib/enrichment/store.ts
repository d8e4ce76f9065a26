/**
 * Enrichment state changes of a campaign, each one conditional write or one
 * transaction (docs/data-model.md, access patterns 13-20; docs/launch.md).
 *
 * The campaign side of every change comes from `campaigns/item.ts`, the money
 * side (balance, ledger entry, `creditsCharged`) from `credits/ledger.ts`;
 * this store composes them into one write and turns a failed condition into
 * a value. The changes that customers hear about (enriched, failed, canceled,
 * expired) also put their webhook event (`webhooks/events.ts`) in the same
 * transaction (docs/webhooks.md).
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as keys from '../db/keys';
import { transactWrite, updateIf } from '../db/conditional';
import { and, applyChange, merge, updateParts, type Change, type Clause } from '../db/expression';
import { toCampaignRecord } from '../campaigns/item';
import * as campaignIs from '../campaigns/conditions';
import * as campaignChanges from '../campaigns/changes';
import type { AttemptRecord, CampaignRecord, ExcludedCounts, ResultMetrics } from '../campaigns/model';
import {
  balanceCovers,
  campaignCreditsChange,
  ledgerEntries,
  movementItems,
  transactMovement,
  type LedgerEntry,
  type TransactItem,
} from '../credits/ledger';
import { campaignEvent, eventItems, type CampaignEventType } from '../webhooks/events';
import { pendingRecencyAttribute, pendingRecencyValue } from '../history/recency-pending';
import { chargeGuard, monthOf, spendItem } from '../organizations/limits';
import { creditsLowEvent } from '../webhooks/events';

/** The launch of an attempt: figures in accounts and credits. */
export interface LaunchWrite {
  organizationId: string;
  campaignId: string;
  /** The campaign as read before the launch (the result is derived from it, saving a read). */
  before: CampaignRecord;
  lockToken: string;
  attempt: AttemptRecord;
  excluded: ExcludedCounts;
  /** Organization figures the launch decision was made on. */
  maxEnrichingAccounts: number;
  /** The smb balance the decision read (credits): whether the charge crosses the low-balance threshold. */
  smbCredits: number;
  /** The organization's spend limit and low-balance threshold the decision read (credits; null: none; docs/limits.md). */
  limits: { monthlySpendLimit: number | null; lowBalanceThreshold: number | null };
  /** The launching key's monthly credit limit the decision read (credits; null or absent: none; docs/authentication.md#per-key-credit-limits). The key is `attempt.keyId`. */
  keyMonthlyCredits?: number | null;
  /** For a test twin: the live organization's ID, which its events name (docs/test-mode.md). */
  liveOrganizationId?: string;
  /** When the transaction is sent: the lock must still be valid then. */
  now?: Date;
  /** Written in the same transaction: the request's `Idempotency-Key` work marker (lib/idempotency/store.ts), its audit entry (docs/audit.md). */
  alsoPut?: readonly TransactItem[];
}

/** Why a launch transaction was refused. */
export type LaunchRefusal = 'organization_changed' | 'lock_lost';

/** Completion of an attempt. */
export interface CompletionWrite {
  organizationId: string;
  campaignId: string;
  attemptId: string;
  completedAt: string;
  resultsExpireAt: string;
  results: ResultMetrics;
  /** Credits returned for eligible accounts with no contact found. */
  refund: number;
}

/** Data access for the enrichment lifecycle. */
export interface EnrichmentStore {
  /**
   * Takes the launch lock of an API draft and returns the campaign.
   * Refused: `held` (another launch evaluates it), `not_launchable` (not an API draft; `current` tells what it is), `missing`.
   */
  acquireLaunchLock(
    organizationId: string,
    campaignId: string,
    token: string,
    now: Date,
    lockSeconds: number,
  ): Promise<
    | { ok: true; campaign: CampaignRecord }
    | { ok: false; reason: 'held'; lockExpiresAt?: string }
    | { ok: false; reason: 'missing' }
    | { ok: false; reason: 'not_launchable'; current: CampaignRecord }
  >;
  /** Releases the lock, keeping the evaluation counts of a refused launch. */
  releaseLaunchLock(
    organizationId: string,
    campaignId: string,
    token: string,
    evaluation?: { eligible: number; excluded: ExcludedCounts },
  ): Promise<void>;
  /**
   * Settles a launch transaction whose outcome did not come back in time
   * (docs/reliability.md, "Deadlines"): releases the launch lock only while
   * `token` still holds it, in one conditional write. Released: the
   * transaction, conditioned on that lock, can never commit afterwards
   * (nothing was charged). Not released: the campaign as it is, which shows
   * whether the attempt `attemptId` was launched (`launched`) or not.
   */
  fenceLaunch(
    organizationId: string,
    campaignId: string,
    token: string,
    attemptId: string,
    evaluation?: { eligible: number; excluded: ExcludedCounts },
  ): Promise<{ released: true } | { released: false; launched?: CampaignRecord }>;
  /**
   * Charges credits, reserves capacity and moves the campaign to `enriching`, atomically.
   * @returns the campaign after the launch, or why it was refused (nothing written then).
   */
  launch(write: LaunchWrite): Promise<{ ok: true; campaign: CampaignRecord } | { ok: false; reason: LaunchRefusal }>;

  /** Completes an attempt: net refund, capacity released, `enriched`, the `campaign.enriched` event. Returns false when the attempt is no longer current. */
  complete(write: CompletionWrite): Promise<boolean>;
  /** Compensates an attempt: full refund, capacity released, back to `draft`, the `campaign.enrichment_failed`/`_canceled` event. @returns the credits refunded, or false when the attempt is no longer current. */
  compensate(
    organizationId: string,
    campaignId: string,
    attemptId: string,
    reason: 'failed' | 'canceled',
    endedAt: string,
  ): Promise<number | false>;
  /** Records that an operator asked to cancel the running attempt. @returns false when `attemptId` is not the campaign's running attempt. */
  requestCancel(
    organizationId: string,
    campaignId: string,
    attemptId: string,
    at: Date,
    alsoPut?: readonly TransactItem[],
  ): Promise<boolean>;
  /**
   * Removes a campaign's pending completion from the organization item, once
   * its history entries are written (lib/history/recency-pending.ts). A
   * no-op when it is already gone.
   */
  finishRecording(organizationId: string, campaignId: string): Promise<void>;
  /** Marks an enriched campaign `expired` once `resultsExpireAt` is reached, with its `campaign.expired` event. Returns false otherwise. */
  expire(organizationId: string, campaignId: string, attemptId: string, now: Date): Promise<boolean>;
}

/** The organization has room for `accounts` more under an unchanged ceiling `max` (docs/launch.md). */
const capacityAllows = (accounts: number, max: number): Clause => ({
  expression: 'maxEnrichingAccounts = :c_max AND enrichingAccounts <= :c_allowed',
  values: { ':c_max': max, ':c_allowed': max - accounts },
});

/** Builds the DynamoDB implementation of {@link EnrichmentStore}. */
export function createEnrichmentStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): EnrichmentStore {
  const campaignUpdate = (organizationId: string, campaignId: string, change: Change, condition: Clause): TransactItem => ({
    Update: { TableName: tableName, Key: keys.campaign(organizationId, campaignId), ...updateParts(change, condition) },
  });

  const readCampaign = async (organizationId: string, campaignId: string) => {
    const { Item } = await client.send(
      new GetCommand({ TableName: tableName, Key: keys.campaign(organizationId, campaignId), ConsistentRead: true }),
    );
    return Item ? toCampaignRecord(Item) : undefined;
  };

  /**
   * Ends the current attempt of an `enriching` campaign in one transaction:
   * the refund `entry` (its credits back, the attempt's capacity released),
   * the campaign changed by `change`, and the webhook event of `eventType`
   * carrying the campaign as the change leaves it. No ClientRequestToken: the
   * attempt condition and the entry's and event's keys already make a rerun a
   * no-op, and a token would turn a racing duplicate into IdempotentParameterMismatch.
   * @returns the credits refunded, or false when the attempt is no longer current.
   */
  const endAttempt = async (
    organizationId: string,
    campaignId: string,
    attemptId: string,
    plan: (campaign: CampaignRecord & { attempt: AttemptRecord }) => {
      entry: LedgerEntry;
      change: Change;
      eventType: CampaignEventType;
      occurredAt: string;
      organizationChange?: Change;
    },
  ): Promise<number | false> => {
    const campaign = await readCampaign(organizationId, campaignId);
    if (!campaign?.attempt || campaign.status !== 'enriching' || campaign.attempt.id !== attemptId) return false;
    const { entry, change, eventType, occurredAt, organizationChange } = plan(campaign as CampaignRecord & { attempt: AttemptRecord });
    // A refund is taken off the spend of the month the attempt was charged in (docs/limits.md: net of refunds).
    // And off the launching key's spend of that month, when it has an ID (docs/authentication.md#per-key-credit-limits).
    const month = monthOf(campaign.attempt.startedAt);
    const keyId = campaign.attempt.keyId;
    const refund =
      entry.amount > 0
        ? [
            spendItem(tableName, { organizationId, month }, -entry.amount),
            ...(keyId !== undefined ? [spendItem(tableName, { organizationId, month, keyId }, -entry.amount)] : []),
          ]
        : [];
    const campaignChange = merge(change, campaignCreditsChange(entry));
    // The condition below holds only if the item is still `campaign`, so this is the record the transaction leaves.
    const after = toCampaignRecord(applyChange(campaign, campaignChange) as unknown as Record<string, unknown>);
    const released = campaign.attempt.eligible;
    // The entry is stamped when written (credits/ledger.ts transactMovement): entries only grow at the top.
    const { outcome } = await transactMovement(
      client,
      (createdAt) => ({
        TransactItems: [
          campaignUpdate(organizationId, campaignId, campaignChange, campaignIs.runningAttempt(attemptId)),
          ...movementItems(
            tableName,
            { ...entry, createdAt },
            { alsoChange: merge(organizationChange ?? {}, { increment: { enrichingAccounts: -released } }) },
          ),
          ...eventItems(tableName, campaignEvent(eventType, after, attemptId, occurredAt)),
          ...refund,
        ],
      }),
      1,
    );
    return outcome.ok ? entry.amount : false;
  };

  return {
    async acquireLaunchLock(organizationId, campaignId, token, now, lockSeconds) {
      const outcome = await updateIf(client, {
        TableName: tableName,
        Key: keys.campaign(organizationId, campaignId),
        ...updateParts(
          campaignChanges.lock(token, new Date(now.getTime() + lockSeconds * 1000)),
          and(campaignIs.present(), campaignIs.apiDraft(), campaignIs.unlocked(now)),
        ),
      });
      if (outcome.ok) return { ok: true, campaign: toCampaignRecord(outcome.item) };
      const current = outcome.old;
      if (!current) return { ok: false, reason: 'missing' };
      if (current.status === 'draft' && current.createdVia === 'api') {
        // The holder's lock expiry (ISO timestamp) tells a caller when to retry (Retry-After, docs/idempotency.md).
        const lockExpiresAt = (current.launchLock as { expiresAt?: unknown } | undefined)?.expiresAt;
        return { ok: false, reason: 'held', ...(typeof lockExpiresAt === 'string' ? { lockExpiresAt } : {}) };
      }
      return { ok: false, reason: 'not_launchable', current: toCampaignRecord(current) };
    },

    async releaseLaunchLock(organizationId, campaignId, token, evaluation) {
      // A failed condition means the lock expired and another launch took it: nothing of ours to release.
      // (Released even past its expiry, as long as nobody else took it.)
      await updateIf(client, {
        TableName: tableName,
        Key: keys.campaign(organizationId, campaignId),
        ...updateParts(campaignChanges.unlock(evaluation), {
          expression: 'launchLock.#token = :c_token',
          names: { '#token': 'token' },
          values: { ':c_token': token },
        }),
        ReturnValues: 'NONE',
      });
    },

    async fenceLaunch(organizationId, campaignId, token, attemptId, evaluation) {
      const outcome = await updateIf(client, {
        TableName: tableName,
        Key: keys.campaign(organizationId, campaignId),
        ...updateParts(campaignChanges.unlock(evaluation), {
          expression: 'launchLock.#token = :c_token',
          names: { '#token': 'token' },
          values: { ':c_token': token },
        }),
        ReturnValues: 'NONE',
      });
      if (outcome.ok) return { released: true };
      const current = outcome.old ? toCampaignRecord(outcome.old) : undefined;
      return current?.attempt?.id === attemptId ? { released: false, launched: current } : { released: false };
    },

    async launch(write) {
      const { organizationId, campaignId, attempt } = write;
      // Stamped when written (credits/ledger.ts transactMovement), not when the launch started: entries only grow at the top.
      const entry = ledgerEntries.charge({
        organizationId,
        campaignId,
        attemptId: attempt.id,
        credits: attempt.charged,
        createdAt: attempt.startedAt,
        keyId: attempt.keyId,
      });
      const month = monthOf(attempt.startedAt);
      // The limits of docs/limits.md: the month's spend within its limit, and the low-balance event of a crossing, in the same transaction.
      const guard = chargeGuard(write.limits, write.smbCredits, attempt.charged);
      const threshold = write.limits.lowBalanceThreshold;
      const lowBalance =
        guard.crossesLowBalance && threshold !== null
          ? eventItems(
              tableName,
              creditsLowEvent(
                organizationId,
                attempt.id,
                attempt.startedAt,
                { smb: write.smbCredits - attempt.charged, threshold },
                write.liveOrganizationId,
              ),
            )
          : [];
      const { outcome } = await transactMovement(
        client,
        (createdAt) => ({
          ClientRequestToken: attempt.id,
          TransactItems: [
            campaignUpdate(
              organizationId,
              campaignId,
              merge(campaignChanges.launch(write.before, attempt, write.excluded), campaignCreditsChange(entry)),
              and(campaignIs.apiDraft(), campaignIs.lockedBy(write.lockToken, write.now ?? new Date())),
            ),
            ...movementItems(
              tableName,
              { ...entry, createdAt },
              {
                alsoChange: { increment: { enrichingAccounts: attempt.eligible } },
                condition: and(
                  balanceCovers(attempt.charged),
                  capacityAllows(attempt.eligible, write.maxEnrichingAccounts),
                  guard.condition,
                  // A crossing names the balance it leaves: the balance is the one read.
                  ...(guard.crossesLowBalance
                    ? [{ expression: 'smbCredits = :c_balance', values: { ':c_balance': write.smbCredits } }]
                    : []),
                ),
              },
            ),
            spendItem(tableName, { organizationId, month }, attempt.charged, write.limits.monthlySpendLimit),
            // The launching key's month, under its own monthly limit (docs/authentication.md#per-key-credit-limits): racing launches with one key never pass it.
            ...(attempt.keyId !== undefined
              ? [spendItem(tableName, { organizationId, month, keyId: attempt.keyId }, attempt.charged, write.keyMonthlyCredits ?? null)]
              : []),
            ...lowBalance,
            ...(write.alsoPut ?? []),
          ],
        }),
        1,
      );
      if (!outcome.ok) return { ok: false, reason: outcome.failed.includes(0) ? 'lock_lost' : 'organization_changed' };
      // The conditions held, so the campaign is exactly `before` with the launch applied.
      const { launchLock: _lock, ...before } = write.before as CampaignRecord & { launchLock?: unknown };
      return {
        ok: true,
        campaign: {
          ...before,
          status: 'enriching',
          attempt,
          accountsEligible: attempt.eligible,
          accountsExcluded: write.excluded,
          creditsCharged: before.creditsCharged - entry.amount,
        },
      };
    },

    async complete(write) {
      const { organizationId, campaignId, attemptId } = write;
      const refunded = await endAttempt(organizationId, campaignId, attemptId, (campaign) => ({
        entry: ledgerEntries.refund({
          organizationId,
          campaignId,
          attemptId,
          credits: write.refund,
          reason: 'no_contacts_found',
          createdAt: write.completedAt,
          keyId: campaign.attempt.keyId,
        }),
        change: campaignChanges.complete(campaign, write),
        eventType: 'campaign.enriched',
        occurredAt: write.completedAt,
        // Recency holds from this transaction on: the completion waits on the organization item until FinishRecording writes its history entries.
        organizationChange: {
          set: {
            [pendingRecencyAttribute(campaignId)]: pendingRecencyValue({
              completedAt: write.completedAt,
              eligibleObjectKey: campaign.attempt.eligibleObjectKey,
            }),
          },
        },
      }));
      return refunded !== false;
    },

    async compensate(organizationId, campaignId, attemptId, reason, endedAt) {
      return endAttempt(organizationId, campaignId, attemptId, (campaign) => ({
        entry: ledgerEntries.refund({
          organizationId,
          campaignId,
          attemptId,
          credits: campaign.attempt.charged,
          reason,
          createdAt: endedAt,
          keyId: campaign.attempt.keyId,
        }),
        change: campaignChanges.compensate(campaign, { status: reason, startedAt: campaign.attempt.startedAt, endedAt, refunded: true }),
        eventType: reason === 'failed' ? 'campaign.enrichment_failed' : 'campaign.enrichment_canceled',
        occurredAt: endedAt,
      }));
    },

    async requestCancel(organizationId, campaignId, attemptId, at, alsoPut = []) {
      const outcome = await updateIf(
        client,
        {
          TableName: tableName,
          Key: keys.campaign(organizationId, campaignId),
          ...updateParts(campaignChanges.requestCancel(at), campaignIs.runningAttempt(attemptId)),
          ReturnValues: 'NONE',
        },
        alsoPut,
      );
      return outcome.ok;
    },

    async finishRecording(organizationId, campaignId) {
      await updateIf(client, {
        TableName: tableName,
        Key: keys.organization(organizationId),
        ...updateParts({ remove: [pendingRecencyAttribute(campaignId)] }, { expression: 'attribute_exists(pk)' }),
        ReturnValues: 'NONE',
      });
    },

    async expire(organizationId, campaignId, attemptId, now) {
      const campaign = await readCampaign(organizationId, campaignId);
      if (!campaign || campaign.status !== 'enriched' || campaign.attempt?.id !== attemptId) return false;
      const change = campaignChanges.expire(campaign);
      const after = toCampaignRecord(applyChange(campaign, change) as unknown as Record<string, unknown>);
      const outcome = await transactWrite(client, {
        TransactItems: [
          campaignUpdate(organizationId, campaignId, change, and(campaignIs.due(now), campaignIs.ofAttempt(attemptId))),
          ...eventItems(tableName, campaignEvent('campaign.expired', after, attemptId, now.toISOString())),
        ],
      });
      return outcome.ok;
    },
  };
}
