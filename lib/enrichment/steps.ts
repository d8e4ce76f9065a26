/**
 * The workflow's task steps (infra/workflow.ts). Each is idempotent: running
 * it again with the same input changes nothing the second time (results are
 * rewritten identically; money and state moves are conditional on the
 * attempt still being current and guarded by ledger keys).
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { emitMetrics, logger } from '../observability';
import type { AccountListStore } from '../account-lists/account-list';
import type { CampaignStore } from '../campaigns/store';
import type { ResultMetrics } from '../campaigns/model';
import type { AccountHistoryStore } from '../history/store';
import type { OrganizationStore } from '../organizations/store';
import type { Warehouse } from '../warehouse/warehouse';
import { missingAccount } from '../warehouse/schema';
import type { EnrichmentStore } from './store';
import { resultPartKey, resultsPrefix, type ResultStore } from '../results/parts';
import { copyIndexTtl, type CopyIndex } from '../privacy/copies';
import type { ContactIdentifierFields, EnrichedAccount } from '../results/csv';
import type { OutcomeStore } from './outcomes';
import type { BatchRef, BatchSummary, EnrichmentExecutionInput } from './workflow';
import type { PrefixStore } from '../storage/prefixes';
import type { SequenceStore } from '../results/sequence';
import { deliverableContacts, deliverAll, type DeliveryPolicyOf } from '../results/deliverable';
import * as keys from '../db/keys';
import * as campaignIs from '../campaigns/conditions';
import { accountsProcessedEvent, eventItems } from '../webhooks/events';
import { attemptResultsLive, deleteAttemptWork, deleteCampaignResults, readBatchAccounts } from './attempt-objects';

/** Thrown when a step runs for an attempt that is no longer the campaign's current one (canceled or compensated). */
export class AttemptSupersededError extends Error {
  override name = 'AttemptSuperseded';
}

/** What the steps need. */
export interface StepDependencies {
  campaigns: CampaignStore;
  accountLists: AccountListStore;
  warehouse: Warehouse;
  accountHistory: AccountHistoryStore;
  enrichment: EnrichmentStore;
  results: ResultStore;
  /** Per-account outcomes: each batch records what it found (docs/launch.md#per-account-outcomes progress). */
  outcomes: Pick<OutcomeStore, 'recordBatch'>;
  /** Result access period (seconds). */
  resultsAccessPeriodSeconds: number;
  /** Deletion of stored objects by prefix (expiry, compensation). */
  objects: PrefixStore;
  /** What may be delivered to an organization (lib/results/deliverable.ts): FindContacts keeps no withheld (suppressed) contact. */
  deliveryPolicy: DeliveryPolicyOf;
  /** The results' sequence: a written batch becomes readable by taking its seqs (docs/results.md). */
  sequence: SequenceStore;
  /** How batches holding paced accounts are processed (the test twin's `test_slow_` accounts); none: no account is paced. */
  pacing?: BatchPacing;
  /**
   * The copy index (lib/privacy/copies.ts): each written part's identifier digests are recorded, so the vendor's
   * erasure reads only the parts holding the person (docs/privacy.md). None: not recorded (a test twin's campaigns).
   */
  copies?: Pick<CopyIndex, 'record'>;
}

/**
 * Pacing of a batch (docs/test-mode.md "Slow accounts"): the accounts
 * `paced` accepts are processed at most `perSecond` a second per attempt,
 * across every batch of the attempt, and each processed part of a batch is
 * made readable at once, so a reader sees partial results.
 */
export interface BatchPacing {
  paced(accountId: string): boolean;
  /** Paced accounts processed per second per attempt, at most (≥ 1). */
  perSecond: number;
}

/** Time between two paced parts of an attempt (ms): each holds at most `perSecond` paced accounts. */
const PACED_INTERVAL_MS = 1_000;

/**
 * The parts a batch is processed in when it holds paced accounts: in list
 * order, each with at most `perSecond` paced accounts (the others ride
 * along). Undefined when no account of the batch is paced: one part.
 */
export function pacedParts(accountIds: readonly string[], pacing: BatchPacing | undefined): string[][] | undefined {
  if (!pacing || !accountIds.some((id) => pacing.paced(id))) return undefined;
  const parts: string[][] = [[]];
  let paced = 0;
  for (const id of accountIds) {
    if (pacing.paced(id)) {
      if (paced === pacing.perSecond) {
        parts.push([]);
        paced = 0;
      }
      paced++;
    }
    parts.at(-1)!.push(id);
  }
  return parts;
}

type AttemptRef = Pick<EnrichmentExecutionInput, 'organizationId' | 'campaignId' | 'attemptId'>;

const sliceOf = async (deps: Pick<StepDependencies, 'accountLists'>, eligibleObjectKey: string, batch: BatchRef) =>
  (await deps.accountLists.get(eligibleObjectKey)).slice(batch.offset, batch.offset + batch.count);

/**
 * Finds contacts for one batch of eligible accounts (read from the batch's
 * own object, written at launch with the fields the launch read, so only the
 * contacts are read from the warehouse), leaves out the contacts the
 * organization may not be delivered (its suppressions and the global list,
 * read once per batch: an account left with none is `not_found` and refunded
 * at completion), writes the batch's result part and, while it is sent,
 * its copy index (from the part's bytes) and its per-account outcomes
 * (progress moves once per batch), and then makes
 * the batch readable (its seqs, {@link makeBatchReadable}).
 *
 * A batch holding paced accounts (`pacing`: the test twin's `test_slow_`
 * accounts, docs/test-mode.md "Slow accounts") is processed in parts
 * ({@link pacedParts}), one per slot of the attempt's pace (the sequence
 * head's, shared by every batch of the attempt): each part is read, written
 * as its own result part and made readable before the next slot; its
 * outcomes are recorded once the whole batch is done.
 *
 * With `campaigns` and `objects`, the batch then checks (consistent read)
 * that its attempt is still the campaign's live one: a batch still running
 * when its attempt was compensated (a sibling failed, or an operator
 * canceled) deletes the attempt's result parts and batch objects itself,
 * since its part may have landed after the compensation's deletion
 * listed the prefix. Either the compensation's list sees the part, or this
 * check sees the compensation.
 * @returns the batch's counts (accounts, contacts).
 * @throws AttemptSupersededError when the attempt is no longer live (after that cleanup).
 */
export async function findContactsBatch(
  deps: Pick<StepDependencies, 'accountLists' | 'warehouse' | 'results' | 'outcomes'> &
    Partial<
      Pick<StepDependencies, 'campaigns' | 'objects' | 'sequence' | 'resultsAccessPeriodSeconds' | 'deliveryPolicy' | 'pacing' | 'copies'>
    >,
  input: AttemptRef & { eligibleObjectKey: string; batch: BatchRef },
  now = new Date(),
): Promise<BatchSummary> {
  // The launch's fields of each account ride in the batch object: only the contacts are read here.
  const { accountIds, known } = await readBatchAccounts(deps, input);
  // Read once per batch, beside the first warehouse read.
  const policyRead = (deps.deliveryPolicy ?? deliverAll)(input.organizationId);
  policyRead.catch(() => undefined);
  // The digests the suppression check computed, by contact: the part stores them without hashing again.
  const digestsOf = new Map<ContactIdentifierFields, Buffer>();
  const enrich = async (ids: readonly string[]): Promise<EnrichedAccount[]> => {
    const [accounts, policy] = await Promise.all([deps.warehouse.getAccounts([...ids], known), policyRead]);
    const found = new Map(accounts.map((account) => [account.accountId, account]));
    return ids.map((accountId) => {
      const account = found.get(accountId);
      if (!account) return missingAccount(accountId);
      const { status: _status, ...rest } = account;
      return { ...rest, contacts: deliverableContacts(rest.contacts, policy, digestsOf) };
    });
  };
  const prefix = resultsPrefix(input.organizationId, input.campaignId, input.attemptId);
  // Each part is recorded in the copy index from its bytes while they are sent (awaited before the part is made
  // readable; the batch's outcomes are recorded meanwhile): `indexed` settles when the index is written. An index item
  // naming a part whose PUT then fails is harmless: the erasure reads it and finds no object (lib/privacy/erasure.ts),
  // and the batch's retry writes the same part and the same items.
  const putPart = async (part: EnrichedAccount[], chunk?: number): Promise<{ indexed: Promise<void> }> => {
    let indexed: Promise<void> = Promise.resolve();
    await deps.results.putPart(prefix, input.batch.index, part, chunk, digestsOf, (bytes) => {
      indexed = Promise.resolve(
        deps.copies?.record(
          resultPartKey(prefix, input.batch.index, chunk),
          bytes,
          copyIndexTtl(now, deps.resultsAccessPeriodSeconds ?? 0),
        ),
      );
      indexed.catch(() => undefined); // observed by the caller's await
    });
    return { indexed };
  };
  const readable = deps.sequence && { sequence: deps.sequence, resultsAccessPeriodSeconds: deps.resultsAccessPeriodSeconds ?? 0 };
  const parts = readable ? pacedParts(accountIds, deps.pacing) : undefined;
  // The attempt's evaluation carries the attempt's ID (lib/enrichment/launch.ts).
  const recordOutcomes = (accounts: readonly EnrichedAccount[]) =>
    deps.outcomes.recordBatch({
      organizationId: input.organizationId,
      campaignId: input.campaignId,
      evaluationId: input.attemptId,
      batch: input.batch,
      contactsFound: accounts.map((a) => a.contacts.length),
    });
  let enriched: EnrichedAccount[];
  let indexed: Promise<void> | undefined;
  let outcomes: Promise<unknown> | undefined;
  if (parts && readable) {
    // Paced: each part waits for the attempt's next slot, then is processed, written and made readable on its own.
    enriched = [];
    let running = true;
    const expiresAt = expiresAtOf(readable, now);
    for (const [chunk, ids] of parts.entries()) {
      const slot = await readable.sequence.reserveSlot({ ...input, expiresAt }, PACED_INTERVAL_MS);
      if (slot > Date.now()) await sleepFor(slot - Date.now());
      const part = await enrich(ids);
      await (
        await putPart(part, chunk)
      ).indexed;
      enriched.push(...part);
      if (!(await makeBatchReadable(readable, { ...input, chunk }, part, new Date()))) {
        running = false;
        break;
      }
    }
    // Recorded once the whole batch is done.
    if (running) outcomes = recordOutcomes(enriched);
  } else {
    enriched = await enrich(accountIds);
    // The outcomes (contact counts, read by campaigns/accounts, never the part) are recorded while the part is sent:
    // a retry after a failed PUT finds them counted and changes nothing (recordBatch is idempotent per batch).
    outcomes = recordOutcomes(enriched);
    outcomes.catch(() => undefined); // observed below
    ({ indexed } = await putPart(enriched));
  }
  await Promise.all([indexed, outcomes]);
  if (readable && !parts) await makeBatchReadable(readable, input, enriched, now);
  if (
    deps.campaigns &&
    deps.objects &&
    !attemptResultsLive(await deps.campaigns.get(input.organizationId, input.campaignId), input.attemptId)
  ) {
    await deleteAttemptWork({ objects: deps.objects }, input);
    throw new AttemptSupersededError(`Attempt ${input.attemptId} is no longer current; its result parts are deleted`);
  }
  return {
    index: input.batch.index,
    accounts: enriched.length,
    accountsWithContact: enriched.filter((a) => a.contacts.length > 0).length,
    accountsWithMobile: enriched.filter((a) => a.contacts.some((c) => c.mobilePhone)).length,
    contacts: enriched.reduce((sum, a) => sum + a.contacts.length, 0),
  };
}

/** How long sequence items outlive their batch beyond the result access period: an attempt enriches for far less (seconds). */
const SEQUENCE_SLACK_SECONDS = 7 * 86_400;

/** When an attempt's sequence items may go (epoch seconds, the table's TTL). */
const expiresAtOf = (deps: Pick<StepDependencies, 'resultsAccessPeriodSeconds'>, now: Date) =>
  Math.floor(now.getTime() / 1000) + deps.resultsAccessPeriodSeconds + SEQUENCE_SLACK_SECONDS;

/**
 * Makes a written batch readable (docs/results.md): its accounts
 * take the next seqs of the attempt, in part order, in one transaction that
 * also checks that the attempt is still the campaign's running one. A retry
 * of the batch finds its seqs already given and changes nothing.
 * @returns the batch's seqs, or undefined when the attempt no longer runs (nothing written).
 */
export async function makeBatchReadable(
  deps: Pick<StepDependencies, 'sequence' | 'resultsAccessPeriodSeconds'>,
  input: AttemptRef & { batch: BatchRef; chunk?: number },
  enriched: readonly EnrichedAccount[],
  now = new Date(),
) {
  const found = enriched.filter((a) => a.contacts.length > 0).length;
  const outcome = await deps.sequence.assign(
    {
      organizationId: input.organizationId,
      campaignId: input.campaignId,
      attemptId: input.attemptId,
      batchIndex: input.batch.index,
      ...(input.chunk === undefined ? {} : { chunk: input.chunk }),
      accounts: enriched.length,
      found,
      expiresAt: expiresAtOf(deps, now),
    },
    [{ key: keys.campaign(input.organizationId, input.campaignId), condition: campaignIs.runningAttempt(input.attemptId) }],
    // The event is written in the same transaction: a readable batch always has its event, a refused one none.
    (range, tableName) =>
      eventItems(
        tableName,
        accountsProcessedEvent(input.organizationId, now.toISOString(), {
          campaignId: input.campaignId,
          status: 'enriching',
          attemptId: input.attemptId,
          fromSeq: range.fromSeq,
          toSeq: range.toSeq,
          found: range.found,
          notFound: range.notFound,
        }),
      ),
  );
  return outcome.ok ? outcome.range : undefined;
}

/** Result metrics from the batches' counts (fractions 0..1). */
export function resultMetrics(batches: readonly BatchSummary[]): ResultMetrics & { accountsWithContact: number } {
  const totalAccounts = batches.reduce((sum, b) => sum + b.accounts, 0);
  const accountsWithContact = batches.reduce((sum, b) => sum + b.accountsWithContact, 0);
  const accountsWithMobile = batches.reduce((sum, b) => sum + b.accountsWithMobile, 0);
  return {
    totalAccounts,
    totalContactsFound: batches.reduce((sum, b) => sum + b.contacts, 0),
    pctAccountsWithContact: totalAccounts === 0 ? 0 : accountsWithContact / totalAccounts,
    pctAccountsWithMobile: totalAccounts === 0 ? 0 : accountsWithMobile / totalAccounts,
    accountsWithContact,
  };
}

/**
 * Completes an attempt: result metrics, refund of accounts without contacts
 * (credits), capacity released, `enriched` with `completedAt` and
 * `resultsExpireAt`. A rerun after success returns the stored times.
 * @throws AttemptSupersededError when the attempt was canceled or compensated meanwhile.
 */
export async function completeEnrichment(
  deps: Pick<StepDependencies, 'enrichment' | 'resultsAccessPeriodSeconds'> & { campaigns: Pick<CampaignStore, 'get'> },
  input: AttemptRef & { batchResults: BatchSummary[] },
  now = new Date(),
): Promise<{ completedAt: string; resultsExpireAt: string }> {
  const campaign = await deps.campaigns.get(input.organizationId, input.campaignId);
  if (campaign?.attempt?.id === input.attemptId && campaign.status !== 'enriching' && campaign.completedAt && campaign.resultsExpireAt) {
    return { completedAt: campaign.completedAt, resultsExpireAt: campaign.resultsExpireAt };
  }
  if (!campaign?.attempt || campaign.attempt.id !== input.attemptId)
    throw new AttemptSupersededError(`Attempt ${input.attemptId} is no longer current`);
  const { accountsWithContact, ...results } = resultMetrics(input.batchResults);
  const refund = (campaign.attempt.eligible - accountsWithContact) * campaign.attempt.creditsPerAccount;
  const completedAt = now.toISOString();
  const resultsExpireAt = new Date(now.getTime() + deps.resultsAccessPeriodSeconds * 1000).toISOString();
  const completed = await deps.enrichment.complete({
    organizationId: input.organizationId,
    campaignId: input.campaignId,
    attemptId: input.attemptId,
    completedAt,
    resultsExpireAt,
    results,
    refund,
  });
  if (!completed) {
    // Lost a race with a rerun of this very step, or with a cancel.
    return completeEnrichment(deps, input, now).catch((error: unknown) => {
      throw error instanceof AttemptSupersededError ? error : new AttemptSupersededError(String(error));
    });
  }
  emitMetrics({ AccountsEnriched: results.totalAccounts, CreditsRefunded: refund });
  return { completedAt, resultsExpireAt };
}

/**
 * Writes a completed attempt's accounts into the organization's history
 * (lib/history/store.ts: one entry per account, in the shards its eligible
 * accounts fall in), then removes its pending completion from the
 * organization item (lib/history/recency-pending.ts; docs/launch.md).
 * Idempotent: a rerun finds the entry gone (the history was written before
 * it left) or writes the same times again (times only move forward).
 */
export async function finishRecording(
  deps: {
    enrichment: Pick<EnrichmentStore, 'finishRecording'>;
    accountHistory: Pick<AccountHistoryStore, 'recordCompletion'>;
    organizations: Pick<OrganizationStore, 'get'>;
  },
  input: AttemptRef,
): Promise<{ recorded: boolean }> {
  const organization = await deps.organizations.get(input.organizationId);
  const pending = organization?.pendingRecency?.find((entry) => entry.campaignId === input.campaignId);
  if (!pending) return { recorded: false };
  await deps.accountHistory.recordCompletion(input.organizationId, input.campaignId, pending.completedAt, pending.eligibleObjectKey);
  await deps.enrichment.finishRecording(input.organizationId, input.campaignId);
  return { recorded: true };
}

/**
 * Marks the campaign `expired` once `resultsExpireAt` is reached (the workflow
 * waits until then), then deletes every object of its attempts and
 * evaluations (lib/enrichment/attempt-objects.ts). A rerun deletes again
 * (nothing left: one list call per prefix); nothing is deleted while the
 * attempt's results are still readable.
 * @returns whether this call expired the campaign, and how many objects it deleted.
 */
export async function expireResults(
  deps: { enrichment: Pick<EnrichmentStore, 'expire'>; campaigns: Pick<CampaignStore, 'get'>; objects: PrefixStore },
  input: AttemptRef,
  now = new Date(),
): Promise<{ expired: boolean; objectsDeleted: number }> {
  const expired = await deps.enrichment.expire(input.organizationId, input.campaignId, input.attemptId, now);
  const campaign = await deps.campaigns.get(input.organizationId, input.campaignId);
  // Deleted only once the campaign is expired (terminal); a rerun, or a campaign expired by an earlier run, deletes what is left.
  if (!campaign || campaign.status !== 'expired') return { expired, objectsDeleted: 0 };
  const objectsDeleted = await deleteCampaignResults(deps, input);
  logger.info('Expired campaign objects deleted', { objectsDeleted });
  return { expired, objectsDeleted };
}

/**
 * Compensation after a failure or a cancel: full refund (credits), capacity
 * released, back to `draft` with `lastEnrichment`; then the attempt's result
 * parts and batch objects are deleted (its eligible list and evaluation
 * outcomes stay). A no-op when the attempt is no longer current, except that
 * a rerun still deletes the objects of an attempt that is not the campaign's
 * live one (a first run that died between the refund and the deletion);
 * a completed attempt's results are never deleted here. Without
 * `deps.objects` nothing is deleted (tests of the money path alone). A
 * failed deletion is logged, never thrown: the compensation stands.
 */
export async function compensateAttempt(
  deps: { enrichment: Pick<EnrichmentStore, 'compensate'>; campaigns?: Pick<CampaignStore, 'get'>; objects?: PrefixStore },
  input: AttemptRef & { reason: 'failed' | 'canceled' },
  now = new Date(),
): Promise<{ compensated: boolean }> {
  const refunded = await deps.enrichment.compensate(
    input.organizationId,
    input.campaignId,
    input.attemptId,
    input.reason,
    now.toISOString(),
  );
  if (refunded !== false)
    emitMetrics({ [input.reason === 'failed' ? 'EnrichmentsFailed' : 'EnrichmentsCanceled']: 1, CreditsRefunded: refunded });
  if (deps.objects) {
    // Without `campaigns` only a compensation done now deletes (the safe side).
    const ended =
      refunded !== false ||
      (deps.campaigns !== undefined &&
        !attemptResultsLive(await deps.campaigns.get(input.organizationId, input.campaignId), input.attemptId, now));
    // Best effort: the refund stands whatever S3 answers; leftovers go with the next evaluation or the campaign's expiry.
    if (ended)
      await deleteAttemptWork({ objects: deps.objects }, input).catch((error: unknown) =>
        logger.error("Deleting a compensated attempt's objects failed", { error }),
      );
  }
  return { compensated: refunded !== false };
}
