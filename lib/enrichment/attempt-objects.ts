/**
 * The S3 objects of an attempt and of a launch evaluation, from their writing
 * at launch to their deletion (docs/data-model.md "Lifetime of stored data" gives each
 * prefix's lifetime):
 *
 * - At launch: the eligible list (one object, kept whole) and one object per
 *   workflow batch with that batch's accounts, so a FindContactsBatch
 *   reads 1/Nth of the list instead of all of it (issue #13). A batch object
 *   holds each account's fields as the launch read them from the warehouse
 *   (one JSON array a line), so FindContacts reads only the contacts (issue
 *   #29: the account item is read once per enriched account, at launch).
 * - A failed or canceled attempt (compensation): its result parts and batch
 *   objects are deleted; its eligible list and its evaluation's outcomes stay
 *   (the accounts operation shows a draft's most recent evaluation).
 * - A new evaluation of a draft replaces the previous one: the previous
 *   evaluation's objects and its attempt's (if it launched) are deleted.
 * - Expiry (`expired`, terminal): every attempt and every evaluation of the
 *   campaign is deleted; only the campaign's account list stays.
 *
 * The invariant every deletion relies on: an attempt's results are readable
 * only while it is the campaign's `attempt` and the campaign reads `enriched`
 * (compensation removes `attempt`; a campaign never leaves `expired`).
 */
import pMap from 'p-map';
import { statusAt, type CampaignRecord } from '../campaigns/model';
import type { AccountListStore } from '../account-lists/account-list';
import { logger } from '../observability';
import { objectKeys } from '../objects';
import type { PrefixStore } from '../storage/prefixes';
import type { WarehouseAccountFields } from '../warehouse/warehouse';
import { batchesOf, ENRICHMENT_BATCH_SIZE, type BatchRef } from './workflow';

/** Batch objects written at once at launch: 100 objects for a 100,000-account attempt take ⌈100/16⌉ = 7 rounds of PutObject. */
export const BATCH_PUT_CONCURRENCY = 16;

/** An attempt (or the evaluation of the same ID) of a campaign. */
export interface AttemptRef {
  organizationId: string;
  campaignId: string;
  attemptId: string;
}

/**
 * Writes the attempt's eligible list and its per-batch account objects
 * (batches of {@link ENRICHMENT_BATCH_SIZE}, as {@link batchesOf} cuts them),
 * in parallel, at most {@link BATCH_PUT_CONCURRENCY} PutObject calls at once.
 * Rewriting is idempotent (same keys, same bodies).
 * @param eligibleAccounts - the eligible accounts' fields, in eligible-list order (lib/enrichment/evaluate.ts).
 */
export async function writeAttemptLists(
  deps: { accountLists: Pick<AccountListStore, 'put'> },
  ref: AttemptRef & { eligibleObjectKey: string },
  eligibleAccounts: readonly WarehouseAccountFields[],
): Promise<void> {
  const writes: (() => Promise<void>)[] = [
    () =>
      deps.accountLists.put(
        ref.eligibleObjectKey,
        eligibleAccounts.map((account) => account.accountId),
      ),
    ...batchesOf(eligibleAccounts.length).map(
      (batch) => () =>
        deps.accountLists.put(
          objectKeys.batchAccounts(ref.organizationId, ref.campaignId, ref.attemptId, batch.index),
          eligibleAccounts.slice(batch.offset, batch.offset + batch.count).map(encodeBatchAccount),
        ),
    ),
  ];
  await pMap(writes, (write) => write(), { concurrency: BATCH_PUT_CONCURRENCY });
}

/**
 * One line of a batch object: the account's fields as a JSON array in a fixed
 * order (`accountId`, `name`, `domain`, `status`, `industry`,
 * `employeeCount`, `country`): half the bytes of an object with its keys.
 * JSON.stringify escapes every newline, so the one-item-a-line list store
 * (lib/account-lists/account-list.ts) carries it.
 */
const encodeBatchAccount = (a: WarehouseAccountFields): string =>
  JSON.stringify([a.accountId, a.name, a.domain, a.status, a.industry, a.employeeCount, a.country]);

/** The account of one batch-object line ({@link encodeBatchAccount}). */
function decodeBatchAccount(line: string): WarehouseAccountFields {
  const [accountId, name, domain, status, industry, employeeCount, country] = JSON.parse(line) as [
    string,
    string | null,
    string | null,
    WarehouseAccountFields['status'],
    string | null,
    number | null,
    string | null,
  ];
  return { accountId, name, domain, status, industry, employeeCount, country };
}

/** The accounts of one workflow batch: IDs in order, and the fields the launch read where the batch object carries them. */
export interface BatchAccounts {
  accountIds: string[];
  /** Fields by account ID (empty for an attempt launched before batch objects carried them). */
  known: Map<string, WarehouseAccountFields>;
}

/**
 * The accounts of one workflow batch: its own object. An attempt launched
 * before batch objects carried the accounts' fields has none under this
 * key; its batch is then sliced from the eligible list (IDs only).
 */
export async function readBatchAccounts(
  deps: { accountLists: Pick<AccountListStore, 'get'> },
  ref: AttemptRef & { eligibleObjectKey: string; batch: BatchRef },
): Promise<BatchAccounts> {
  try {
    const lines = await deps.accountLists.get(objectKeys.batchAccounts(ref.organizationId, ref.campaignId, ref.attemptId, ref.batch.index));
    const known = new Map<string, WarehouseAccountFields>();
    for (const line of lines) {
      const account = decodeBatchAccount(line);
      known.set(account.accountId, account);
    }
    return { accountIds: [...known.keys()], known };
  } catch (error) {
    if ((error as { name?: string }).name !== 'NoSuchKey') throw error;
    return {
      accountIds: (await deps.accountLists.get(ref.eligibleObjectKey)).slice(ref.batch.offset, ref.batch.offset + ref.batch.count),
      known: new Map(),
    };
  }
}

/** Deletes every object under each prefix, the prefixes in parallel. @returns objects deleted in all. */
async function deletePrefixes(objects: PrefixStore, prefixes: readonly string[]): Promise<number> {
  const counts = await Promise.all(prefixes.map((prefix) => objects.deletePrefix(prefix)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Deletes what a failed or canceled attempt wrote for its results: result
 * parts and batch objects (its eligible list and evaluation outcomes stay).
 * @returns objects deleted.
 */
export async function deleteAttemptWork(deps: { objects: PrefixStore }, ref: AttemptRef): Promise<number> {
  return deletePrefixes(deps.objects, [
    objectKeys.resultsPrefix(ref.organizationId, ref.campaignId, ref.attemptId),
    objectKeys.batchesPrefix(ref.organizationId, ref.campaignId, ref.attemptId),
  ]);
}

/**
 * Deletes one evaluation's objects and, if it launched, everything its
 * attempt wrote (evaluation ID = attempt ID). Only for an evaluation whose
 * attempt's results are not readable (see the module's invariant).
 * @returns objects deleted.
 */
export async function deleteEvaluation(deps: { objects: PrefixStore }, ref: AttemptRef): Promise<number> {
  return deletePrefixes(deps.objects, [
    objectKeys.evaluationPrefix(ref.organizationId, ref.campaignId, ref.attemptId),
    objectKeys.attemptPrefix(ref.organizationId, ref.campaignId, ref.attemptId),
  ]);
}

/**
 * Deletes every attempt's and every evaluation's objects of an expired
 * campaign (leftovers of earlier attempts too). The account list stays.
 * @returns objects deleted.
 */
export async function deleteCampaignResults(
  deps: { objects: PrefixStore },
  ref: Pick<AttemptRef, 'organizationId' | 'campaignId'>,
): Promise<number> {
  return deletePrefixes(deps.objects, [
    objectKeys.attemptsPrefix(ref.organizationId, ref.campaignId),
    objectKeys.evaluationsPrefix(ref.organizationId, ref.campaignId),
  ]);
}

/**
 * Whether an attempt's results may be readable now or later: it is the
 * campaign's attempt and the campaign is not `expired` (running or
 * `enriched`). Anything else may be deleted.
 */
export function attemptResultsLive(campaign: CampaignRecord | undefined, attemptId: string, now = new Date()): boolean {
  return campaign?.attempt?.id === attemptId && statusAt(campaign, now) !== 'expired';
}

/**
 * After a new evaluation replaced the manifest: deletes the previous
 * evaluation's objects unless its attempt's results are live. Never fails
 * the caller: a failure is logged, and the objects go with the campaign's
 * expiry (or the next replacement).
 */
export async function deleteReplacedEvaluation(
  deps: { objects: PrefixStore },
  campaign: CampaignRecord,
  previousEvaluationId: string | undefined,
  currentEvaluationId: string,
  now = new Date(),
): Promise<void> {
  if (!previousEvaluationId || previousEvaluationId === currentEvaluationId || attemptResultsLive(campaign, previousEvaluationId, now))
    return;
  try {
    await deleteEvaluation(deps, { organizationId: campaign.organizationId, campaignId: campaign.id, attemptId: previousEvaluationId });
  } catch (error) {
    logger.warn("Deleting a replaced evaluation's objects failed; they go with the campaign's expiry", {
      error,
      campaignId: campaign.id,
      evaluationId: previousEvaluationId,
    });
  }
}
