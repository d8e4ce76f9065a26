/**
 * Enrichment state changes of a campaign, each one conditional write or one
 * transaction (docs/data-model.md, access patterns 13-20; decisions §4).
 *
 * Money moves only inside transactions that also write an immutable ledger
 * entry whose key is derived from (campaign, attempt, kind) and guarded by
 * `attribute_not_exists`: a retried or repeated step cannot move credits twice.
 */
import { ConditionalCheckFailedException, TransactionCanceledException, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, paginateQuery, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { CAMPAIGN_INDEXES, keys } from '../db/table';
import { toCampaignRecord } from '../campaigns/store';
import type { AttemptRecord, CampaignRecord, ExcludedCounts, LastEnrichment, ResultMetrics } from '../campaigns/model';

/** Why credits moved. */
export type LedgerReason = 'launch' | 'no_contacts_found' | 'failed' | 'canceled';

/** An immutable ledger entry; `amount` in credits, positive for a charge, negative for a refund. */
export interface LedgerEntry {
  organizationId: string;
  campaignId: string;
  attemptId: string;
  kind: 'charge' | 'refund';
  reason: LedgerReason;
  amount: number;
  createdAt: string;
}

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
  ): Promise<{ ok: true; campaign: CampaignRecord } | { ok: false; reason: 'held'; lockExpiresAt?: string } | { ok: false; reason: 'missing' } | { ok: false; reason: 'not_launchable'; current: CampaignRecord }>;
  /** Releases the lock, keeping the evaluation counts of a refused launch. */
  releaseLaunchLock(organizationId: string, campaignId: string, token: string, evaluation?: { eligible: number; excluded: ExcludedCounts }): Promise<void>;
  /**
   * Charges credits, reserves capacity and moves the campaign to `enriching`, atomically.
   * @returns the campaign after the launch, or why it was refused (nothing written then).
   */
  launch(write: LaunchWrite): Promise<{ ok: true; campaign: CampaignRecord } | { ok: false; reason: LaunchRefusal }>;

  /** Completes an attempt: net refund, capacity released, `enriched`. Returns false when the attempt is no longer current. */
  complete(write: CompletionWrite): Promise<boolean>;
  /** Compensates an attempt: full refund, capacity released, back to `draft`. @returns the credits refunded, or false when the attempt is no longer current. */
  compensate(organizationId: string, campaignId: string, attemptId: string, reason: 'failed' | 'canceled', endedAt: string): Promise<number | false>;
  /** Clears the recency-pending mark once every account's enrichment time is recorded. */
  finishRecording(organizationId: string, campaignId: string, attemptId: string): Promise<void>;
  /** Enriched campaigns whose enrichment times are still being recorded: completion time and eligible list. */
  pendingRecency(organizationId: string): Promise<{ completedAt: string; eligibleObjectKey: string }[]>;
  /** Marks an enriched campaign `expired` once `resultsExpireAt` is reached. Returns false otherwise. */
  expire(organizationId: string, campaignId: string, attemptId: string, now: Date): Promise<boolean>;
  /** Every ledger entry of a campaign, oldest first. */
  ledger(organizationId: string, campaignId: string): Promise<LedgerEntry[]>;
}

const isConditionFailure = (error: unknown) =>
  error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed');

/** Builds the DynamoDB implementation of {@link EnrichmentStore}. */
export function createEnrichmentStore({ client, tableName }: { client: DynamoDBDocumentClient; tableName: string }): EnrichmentStore {
  const statusKeys = (organizationId: string, status: string, createdVia: string) => {
    const index = keys.campaignIndexes(organizationId, { id: '', createdAt: '', status, createdVia });
    return { ':gsi2pk': index.gsi2pk, ':gsi4pk': index.gsi4pk };
  };

  const expiryKeys = (organizationId: string, campaignId: string, resultsExpireAt: string) => {
    const index = keys.enrichedExpiry(organizationId, { id: campaignId, resultsExpireAt });
    return { ':gsi5pk': index.gsi5pk, ':expirySk': index.expirySk };
  };

  const ledgerPut = (entry: LedgerEntry) => ({
    Put: {
      TableName: tableName,
      Item: { ...keys.ledgerEntry(entry.organizationId, entry.campaignId, entry.attemptId, `${entry.kind}-${entry.reason}`), type: 'ledgerEntry', ...entry },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  });

  /** Runs a transaction, retrying conflicts with other transactions (real DynamoDB raises them under contention). */
  const transact = async (input: ConstructorParameters<typeof TransactWriteCommand>[0]) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await client.send(new TransactWriteCommand(input));
      } catch (error) {
        const conflict = error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((reason) => reason.Code === 'TransactionConflict');
        if (!conflict || attempt >= 8) throw error;
        await new Promise((r) => setTimeout(r, Math.min(1_000, 20 * 2 ** attempt) * Math.random()));
      }
    }
  };

  const readCampaign = async (organizationId: string, campaignId: string) => {
    const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: keys.campaign(organizationId, campaignId), ConsistentRead: true }));
    return Item ? toCampaignRecord(Item) : undefined;
  };

  /**
   * Ends the current attempt of an `enriching` campaign in one transaction:
   * `refund` credits back to the organization with the attempt's capacity
   * released, the campaign changed by `update`, and the refund's ledger entry.
   * No ClientRequestToken: the attempt condition and the ledger key already
   * make a rerun a no-op, and a token would turn a racing duplicate into
   * IdempotentParameterMismatch.
   * @returns the credits refunded, or false when the attempt is no longer current.
   */
  const endAttempt = async (
    organizationId: string,
    campaignId: string,
    attemptId: string,
    plan: (attempt: AttemptRecord, campaign: CampaignRecord) => { refund: number; update: string; values: Record<string, unknown>; ledger: LedgerEntry },
  ): Promise<number | false> => {
    const campaign = await readCampaign(organizationId, campaignId);
    if (!campaign?.attempt || campaign.status !== 'enriching' || campaign.attempt.id !== attemptId) return false;
    const { refund, update, values, ledger } = plan(campaign.attempt, campaign);
    try {
      await transact({
        TransactItems: [
          {
            Update: {
              TableName: tableName,
              Key: keys.organization(organizationId),
              UpdateExpression: 'SET smbCredits = smbCredits + :refund, enrichingAccounts = enrichingAccounts - :eligible',
              ExpressionAttributeValues: { ':refund': refund, ':eligible': campaign.attempt.eligible },
            },
          },
          {
            Update: {
              TableName: tableName,
              Key: keys.campaign(organizationId, campaignId),
              UpdateExpression: update,
              ConditionExpression: '#status = :enriching AND attempt.id = :attempt',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':enriching': 'enriching', ':attempt': attemptId, ':refund': refund, ...values },
            },
          },
          ...(refund > 0 ? [ledgerPut(ledger)] : []),
        ],
      });
      return refund;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  };

  /** Reads the campaign item from a failed conditional write, if returned. */
  const oldItem = (item: Record<string, AttributeValue> | undefined) => (item ? unmarshall(item) : undefined);

  return {
    async acquireLaunchLock(organizationId, campaignId, token, now, lockSeconds) {
      try {
        const { Attributes } = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.campaign(organizationId, campaignId),
            UpdateExpression: 'SET launchLock = :lock',
            ConditionExpression: 'attribute_exists(pk) AND createdVia = :api AND #status = :draft AND (attribute_not_exists(launchLock) OR launchLock.expiresAt < :now)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':lock': { token, expiresAt: new Date(now.getTime() + lockSeconds * 1000).toISOString() },
              ':api': 'api',
              ':draft': 'draft',
              ':now': now.toISOString(),
            },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { ok: true, campaign: toCampaignRecord(Attributes!) };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        const current = oldItem(error.Item as Record<string, AttributeValue> | undefined);
        if (!current) return { ok: false, reason: 'missing' };
        if (current.status === 'draft' && current.createdVia === 'api') {
          // The holder's lock expiry (ISO timestamp) tells a caller when to retry (Retry-After, decisions §10).
          const lockExpiresAt = (current.launchLock as { expiresAt?: unknown } | undefined)?.expiresAt;
          return { ok: false, reason: 'held', ...(typeof lockExpiresAt === 'string' ? { lockExpiresAt } : {}) };
        }
        return { ok: false, reason: 'not_launchable', current: toCampaignRecord(current) };
      }
    },

    async releaseLaunchLock(organizationId, campaignId, token, evaluation) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.campaign(organizationId, campaignId),
            UpdateExpression: evaluation ? 'SET accountsEligible = :eligible, accountsExcluded = :excluded REMOVE launchLock' : 'REMOVE launchLock',
            ConditionExpression: 'launchLock.#token = :token',
            ExpressionAttributeNames: { '#token': 'token' },
            ExpressionAttributeValues: { ':token': token, ...(evaluation ? { ':eligible': evaluation.eligible, ':excluded': evaluation.excluded } : {}) },
          }),
        );
      } catch (error) {
        // The lock expired and another launch took it: nothing of ours to release.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },

    async launch(write) {
      const { organizationId, campaignId, attempt } = write;
      try {
        await transact({
          ClientRequestToken: attempt.id,
          TransactItems: [
            {
              Update: {
                TableName: tableName,
                Key: keys.organization(organizationId),
                UpdateExpression: 'SET smbCredits = smbCredits - :charge, enrichingAccounts = enrichingAccounts + :eligible',
                ConditionExpression: 'smbCredits >= :charge AND maxEnrichingAccounts = :max AND enrichingAccounts <= :allowed',
                ExpressionAttributeValues: {
                  ':charge': attempt.charged,
                  ':eligible': attempt.eligible,
                  ':max': write.maxEnrichingAccounts,
                  ':allowed': write.maxEnrichingAccounts - attempt.eligible,
                },
              },
            },
            {
              Update: {
                TableName: tableName,
                Key: keys.campaign(organizationId, campaignId),
                UpdateExpression:
                  'SET #status = :enriching, gsi2pk = :gsi2pk, gsi4pk = :gsi4pk, attempt = :attempt, accountsEligible = :eligible, accountsExcluded = :excluded, creditsCharged = creditsCharged + :charge REMOVE launchLock',
                ConditionExpression: '#status = :draft AND launchLock.#token = :token',
                ExpressionAttributeNames: { '#status': 'status', '#token': 'token' },
                ExpressionAttributeValues: {
                  ':enriching': 'enriching',
                  ':draft': 'draft',
                  ':token': write.lockToken,
                  ':attempt': attempt,
                  ':eligible': attempt.eligible,
                  ':excluded': write.excluded,
                  ':charge': attempt.charged,
                  ...statusKeys(organizationId, 'enriching', 'api'),
                },
              },
            },
            ledgerPut({ organizationId, campaignId, attemptId: attempt.id, kind: 'charge', reason: 'launch', amount: attempt.charged, createdAt: attempt.startedAt }),
          ],
        });
      } catch (error) {
        if (error instanceof TransactionCanceledException) {
          const [organizationReason, campaignReason] = error.CancellationReasons ?? [];
          if (campaignReason?.Code === 'ConditionalCheckFailed') return { ok: false, reason: 'lock_lost' };
          if (organizationReason?.Code === 'ConditionalCheckFailed') return { ok: false, reason: 'organization_changed' };
        }
        throw error;
      }
      // The conditions held, so the campaign is exactly `before` with the launch applied.
      const { launchLock: _lock, ...before } = write.before as CampaignRecord & { launchLock?: unknown };
      return {
        ok: true,
        campaign: { ...before, status: 'enriching', attempt, accountsEligible: attempt.eligible, accountsExcluded: write.excluded, creditsCharged: before.creditsCharged + attempt.charged },
      };
    },

    async complete(write) {
      const { organizationId, campaignId, attemptId } = write;
      const refunded = await endAttempt(organizationId, campaignId, attemptId, (_attempt, campaign) => ({
        refund: write.refund,
        update:
          'SET #status = :enriched, gsi2pk = :gsi2pk, gsi4pk = :gsi4pk, gsi5pk = :gsi5pk, expirySk = :expirySk, gsi6pk = :gsi6pk, completedAt = :completedAt, resultsExpireAt = :expireAt, results = :results, creditsCharged = creditsCharged - :refund',
        values: {
          ':enriched': 'enriched',
          ':completedAt': write.completedAt,
          ':expireAt': write.resultsExpireAt,
          ':results': write.results,
          ...statusKeys(organizationId, 'enriched', campaign.createdVia),
          ...expiryKeys(organizationId, campaignId, write.resultsExpireAt),
          ':gsi6pk': keys.recencyPending(organizationId).gsi6pk,
        },
        ledger: { organizationId, campaignId, attemptId, kind: 'refund', reason: 'no_contacts_found', amount: -write.refund, createdAt: write.completedAt },
      }));
      return refunded !== false;
    },

    async compensate(organizationId, campaignId, attemptId, reason, endedAt) {
      return endAttempt(organizationId, campaignId, attemptId, (attempt, campaign) => ({
        refund: attempt.charged,
        update: 'SET #status = :draft, gsi2pk = :gsi2pk, gsi4pk = :gsi4pk, lastEnrichment = :last, creditsCharged = creditsCharged - :refund REMOVE attempt',
        values: {
          ':draft': 'draft',
          ':last': { status: reason, startedAt: attempt.startedAt, endedAt, refunded: true } satisfies LastEnrichment,
          ...statusKeys(organizationId, 'draft', campaign.createdVia),
        },
        ledger: { organizationId, campaignId, attemptId, kind: 'refund', reason, amount: -attempt.charged, createdAt: endedAt },
      }));
    },

    async finishRecording(organizationId, campaignId, attemptId) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.campaign(organizationId, campaignId),
            UpdateExpression: 'REMOVE gsi6pk',
            ConditionExpression: 'attempt.id = :attempt',
            ExpressionAttributeValues: { ':attempt': attemptId },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },

    async pendingRecency(organizationId) {
      const index = CAMPAIGN_INDEXES.recencyPending;
      const pending: { completedAt: string; eligibleObjectKey: string }[] = [];
      const pages = paginateQuery(
        { client },
        {
          TableName: tableName,
          IndexName: index.indexName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': index.partitionKey },
          ExpressionAttributeValues: { ':pk': keys.recencyPending(organizationId).gsi6pk },
        },
      );
      for await (const page of pages) {
        for (const item of page.Items ?? []) {
          const attempt = item.attempt as AttemptRecord | undefined;
          if (attempt && typeof item.completedAt === 'string') pending.push({ completedAt: item.completedAt, eligibleObjectKey: attempt.eligibleObjectKey });
        }
      }
      return pending;
    },

    async expire(organizationId, campaignId, attemptId, now) {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.campaign(organizationId, campaignId),
            UpdateExpression: 'SET #status = :expired, gsi2pk = :gsi2pk, gsi4pk = :gsi4pk REMOVE gsi5pk, expirySk, gsi6pk',
            ConditionExpression: '#status = :enriched AND attempt.id = :attempt AND resultsExpireAt <= :now',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':expired': 'expired', ':enriched': 'enriched', ':attempt': attemptId, ':now': now.toISOString(), ...statusKeys(organizationId, 'expired', 'api') },
          }),
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw error;
      }
    },

    async ledger(organizationId, campaignId) {
      const entries: LedgerEntry[] = [];
      const pages = paginateQuery(
        { client },
        {
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': keys.organization(organizationId).pk, ':prefix': keys.ledgerPrefix(campaignId) },
          ConsistentRead: true,
        },
      );
      for await (const page of pages) {
        for (const item of page.Items ?? []) {
          const { pk: _pk, sk: _sk, type: _type, ...entry } = item;
          entries.push(entry as LedgerEntry);
        }
      }
      return entries.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
  };
}
