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
import { ACCOUNT_FIELDS } from '../warehouse/fields';
import { blankAccount } from '../warehouse/schema';
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
          encodeBatchObject(eligibleAccounts.slice(batch.offset, batch.offset + batch.count)),
        ),
    ),
  ];
  await pMap(writes, (write) => write(), { concurrency: BATCH_PUT_CONCURRENCY });
}

/**
 * The first line of a batch object: the keys of the fields each following
 * line holds, in order (lib/warehouse/fields.ts `ACCOUNT_FIELDS`), so a batch
 * written before a field was added or moved still reads right.
 */
const batchHeader = (): string => JSON.stringify({ fields: ACCOUNT_FIELDS.map((field) => field.key) });

/**
 * The field keys of a batch object written before batch objects carried
 * their header: the account fields of that time, in their order. Batch
 * objects live as long as their attempt's results (docs/data-model.md);
 * remove this once no attempt launched before the header can remain.
 */
const HEADERLESS_BATCH_FIELDS = ['accountId', 'name', 'domain', 'status', 'industry', 'employeeCount', 'country'];

/**
 * One line of a batch object: the account's fields as a JSON array in the
 * header's order: half the bytes of an object with its keys. JSON.stringify
 * escapes every newline, so the one-item-a-line list store
 * (lib/account-lists/account-list.ts) carries it.
 */
const encodeBatchAccount = (a: WarehouseAccountFields): string => JSON.stringify(ACCOUNT_FIELDS.map((field) => a[field.key]));

/** The lines of a batch object: its header, then one line per account ({@link encodeBatchAccount}). */
const encodeBatchObject = (accounts: readonly WarehouseAccountFields[]): string[] => [batchHeader(), ...accounts.map(encodeBatchAccount)];

/** The accounts of a batch object's lines ({@link encodeBatchObject}; a headerless one by {@link HEADERLESS_BATCH_FIELDS}). */
function decodeBatchObject(lines: readonly string[]): WarehouseAccountFields[] {
  const headed = lines[0]?.startsWith('{') === true;
  const keys = headed ? (JSON.parse(lines[0]!) as { fields: string[] }).fields : HEADERLESS_BATCH_FIELDS;
  return lines.slice(headed ? 1 : 0).map((line) => {
    const values = JSON.parse(line) as unknown[];
    const account = blankAccount('') as Record<string, unknown>;
    keys.forEach((key, i) => {
      if (key in account) account[key] = values[i] ?? null;
    });
    return account as WarehouseAccountFields;
  });
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
    for (const account of decodeBatchObject(lines)) known.set(account.accountId, account);
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
