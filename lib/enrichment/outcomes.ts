/**
 * Per-account outcomes of a campaign's most recent launch evaluation
 * (docs/launch.md#per-account-outcomes; docs/data-model.md
 * "Per-account outcomes").
 *
 * Built for lists of 100,000 accounts read a page at a time:
 *
 * - At evaluation (every enrich call that evaluates, refused ones too) the
 *   requested list, in submission order, is cut into chunks of
 *   {@link OUTCOME_CHUNK_SIZE} accounts. Each chunk is one S3 object holding
 *   its IDs and one letter per account for its evaluation bucket. A small
 *   manifest item in the table holds the counts, per chunk the index of its
 *   first eligible account (`eligibleStarts`) and which exclusion buckets it
 *   contains (`excludedMask`, one hex digit per chunk): ~1.5 KB for 100 chunks.
 * - Each workflow batch (eligible accounts `[k·1000, k·1000 + 1000)`) writes
 *   the contacts it found per account as one small S3 object, then adds its
 *   figures to the manifest in one conditional UpdateItem (`doneBatches`
 *   guards against counting a retried batch twice): progress moves once per
 *   batch.
 * - A page reads the manifest, the chunk objects under the page and the batch
 *   objects of those chunks: a fixed number of objects for an unfiltered
 *   page, whatever the list's length.
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pMap from 'p-map';
import { updateIf } from '../db/conditional';
import * as keys from '../db/keys';
import type { ExcludedCounts } from '../campaigns/model';
import type { AccountBucket } from './evaluate';
import type { BatchRef } from './workflow';
import type { AccountOutcome } from './account-outcome';
import { objectKeys } from '../objects';

/** Accounts per outcome chunk object (requested list, submission order). */
export const OUTCOME_CHUNK_SIZE = 1_000;

/** S3 objects written at once when recording an evaluation. */
const PUT_CONCURRENCY = 16;

/** Letter of each evaluation bucket in a chunk's `outcomes` string. */
const BUCKET_CODE: Record<AccountBucket, string> = { invalid: 'i', recentlyEnriched: 'r', crmExcluded: 'c', eligible: 'e' };
/** Outcome of each exclusion letter. */
export const EXCLUDED_OUTCOME_OF_CODE: Record<string, AccountOutcome> = { i: 'invalid', r: 'recently_enriched', c: 'crm_excluded' };
/** Bit of each exclusion letter in a chunk's digit of `excludedMask`. */
export const EXCLUDED_BIT: Record<string, number> = { i: 1, r: 2, c: 4 };
/** Letter of an eligible account. */
export const ELIGIBLE_CODE = 'e';

/** Prefix of every object of one evaluation (lib/objects.ts; deleted by lib/enrichment/attempt-objects.ts). */
export const evaluationPrefix = objectKeys.evaluationPrefix;
/** Object key of one outcome chunk. */
export const outcomeChunkKey = (organizationId: string, campaignId: string, evaluationId: string, chunk: number) =>
  `${evaluationPrefix(organizationId, campaignId, evaluationId)}outcomes/${String(chunk).padStart(6, '0')}.json`;
/** Object key of one workflow batch's contact counts. */
export const batchContactsKey = (organizationId: string, campaignId: string, evaluationId: string, batch: number) =>
  `${evaluationPrefix(organizationId, campaignId, evaluationId)}contacts/${String(batch).padStart(6, '0')}.json`;

/** One chunk object: the IDs of up to {@link OUTCOME_CHUNK_SIZE} requested accounts and one bucket letter each (`i`, `r`, `c`, `e`). */
export interface OutcomeChunk {
  ids: string[];
  outcomes: string;
}

/**
 * The manifest of an evaluation and the progress of its workflow. Counts in
 * accounts (contacts for `contactsFound`).
 */
export interface OutcomeManifest {
  organizationId: string;
  campaignId: string;
  /** ID of the evaluation; also the attempt ID when the evaluation launched. */
  evaluationId: string;
  evaluatedAt: string;
  requested: number;
  chunkSize: number;
  /** Eligible accounts per workflow batch. */
  batchSize: number;
  counts: ExcludedCounts & { eligible: number };
  /** Per chunk: index, in the eligible list, of the chunk's first eligible account. */
  eligibleStarts: number[];
  /** Per chunk, one hex digit: which exclusion buckets it holds ({@link EXCLUDED_BIT}). */
  excludedMask: string;
  /** Eligible accounts processed with at least one contact / with none, and contacts found. */
  found: number;
  notFound: number;
  contactsFound: number;
  /** Workflow batches whose figures are counted. */
  doneBatches: Set<number>;
  /** Chunks holding at least one `found` / `not_found` account. */
  foundChunks: Set<number>;
  notFoundChunks: Set<number>;
}

/** An evaluation to record: the requested IDs (distinct, in submission order) and their buckets, aligned. */
export interface EvaluationRecord {
  organizationId: string;
  campaignId: string;
  evaluationId: string;
  evaluatedAt: string;
  accountIds: readonly string[];
  buckets: readonly AccountBucket[];
  /** Eligible accounts per workflow batch if the evaluation launches (`ENRICHMENT_BATCH_SIZE`). */
  batchSize: number;
}

/** What one workflow batch found: contacts per eligible account of the batch, in eligible-list order. */
export interface BatchOutcome {
  organizationId: string;
  campaignId: string;
  evaluationId: string;
  batch: BatchRef;
  contactsFound: readonly number[];
}

/** Storage of per-account outcomes. */
export interface OutcomeStore {
  /**
   * Writes an evaluation's chunk objects, then its manifest (replacing the
   * previous evaluation's: the most recent one is the one shown). Callers hold
   * the campaign's launch lock, so evaluations of one campaign never interleave.
   */
  recordEvaluation(evaluation: EvaluationRecord): Promise<void>;
  /** The manifest of a campaign's most recent evaluation (strongly consistent); `undefined` when never evaluated. */
  manifest(campaignId: string): Promise<OutcomeManifest | undefined>;
  /**
   * Records one workflow batch: its contact counts object, then its figures
   * on the manifest. A no-op when the evaluation is no longer the campaign's
   * most recent one or the batch is already counted; an evaluation replaced
   * between the two loses the object again (the replacing launch may have
   * listed the old evaluation's objects before it landed).
   * @returns whether the figures were added now.
   */
  recordBatch(outcome: BatchOutcome): Promise<boolean>;
  /** Reads one chunk object. */
  readChunk(manifest: OutcomeManifest, chunk: number): Promise<OutcomeChunk>;
  /** Reads one batch's contact counts (the batch must be in `doneBatches`). */
  readBatchContacts(manifest: OutcomeManifest, batch: number): Promise<number[]>;
}

/** Number of chunks of a manifest. */
export const chunkCount = (manifest: Pick<OutcomeManifest, 'requested' | 'chunkSize'>) =>
  Math.ceil(manifest.requested / manifest.chunkSize);

/** Eligible accounts of chunk `chunk`: their indexes in the eligible list are `[start, end)`. */
export function eligibleRange(manifest: Pick<OutcomeManifest, 'eligibleStarts' | 'counts'>, chunk: number): { start: number; end: number } {
  const start = manifest.eligibleStarts[chunk] ?? manifest.counts.eligible;
  const end = manifest.eligibleStarts[chunk + 1] ?? manifest.counts.eligible;
  return { start, end };
}

/** Workflow batches holding eligible accounts of chunk `chunk` (at most two when batches and chunks are both 1,000). */
export function batchesOfChunk(manifest: Pick<OutcomeManifest, 'eligibleStarts' | 'counts' | 'batchSize'>, chunk: number): number[] {
  const { start, end } = eligibleRange(manifest, chunk);
  if (end <= start) return [];
  const batches: number[] = [];
  for (let b = Math.floor(start / manifest.batchSize); b <= Math.floor((end - 1) / manifest.batchSize); b++) batches.push(b);
  return batches;
}

/** The chunk holding eligible account `eligibleIndex` (binary search in `eligibleStarts`). */
export function chunkOfEligible(eligibleStarts: readonly number[], eligibleIndex: number): number {
  let low = 0;
  let high = eligibleStarts.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (eligibleStarts[mid]! <= eligibleIndex) low = mid;
    else high = mid - 1;
  }
  return low;
}

/**
 * The manifest's chunk figures of an evaluation (pure): per chunk the index
 * of its first eligible account and the mask of its exclusion buckets.
 */
export function chunkFigures(
  buckets: readonly AccountBucket[],
  chunkSize = OUTCOME_CHUNK_SIZE,
): { eligibleStarts: number[]; excludedMask: string } {
  const eligibleStarts: number[] = [];
  let excludedMask = '';
  let eligible = 0;
  for (let start = 0; start < buckets.length; start += chunkSize) {
    eligibleStarts.push(eligible);
    let mask = 0;
    for (const bucket of buckets.slice(start, start + chunkSize)) {
      const code = BUCKET_CODE[bucket];
      if (code === ELIGIBLE_CODE) eligible++;
      else mask |= EXCLUDED_BIT[code]!;
    }
    excludedMask += mask.toString(16);
  }
  return { eligibleStarts, excludedMask };
}

/**
 * What one workflow batch adds to the manifest (pure): accounts found (with
 * at least one contact) and not found, contacts, and the chunks holding them.
 * @param offset - eligible-list index of the batch's first account.
 * @param contactsFound - contacts per account of the batch, in eligible-list order.
 */
export function batchFigures(eligibleStarts: readonly number[], offset: number, contactsFound: readonly number[]) {
  let found = 0;
  let contacts = 0;
  const foundChunks = new Set<number>();
  const notFoundChunks = new Set<number>();
  contactsFound.forEach((n, i) => {
    const chunk = chunkOfEligible(eligibleStarts, offset + i);
    contacts += n;
    if (n > 0) {
      found++;
      foundChunks.add(chunk);
    } else notFoundChunks.add(chunk);
  });
  return { found, notFound: contactsFound.length - found, contacts, foundChunks, notFoundChunks };
}

const asSet = (value: unknown): Set<number> => (value instanceof Set ? new Set([...value].map(Number)) : new Set<number>());

/** Maps a stored manifest item to an {@link OutcomeManifest}. */
function toManifest(item: Record<string, unknown>): OutcomeManifest {
  return {
    organizationId: String(item.organizationId),
    campaignId: String(item.campaignId),
    evaluationId: String(item.evaluationId),
    evaluatedAt: String(item.evaluatedAt),
    requested: Number(item.requested),
    chunkSize: Number(item.chunkSize),
    batchSize: Number(item.batchSize),
    counts: item.counts as OutcomeManifest['counts'],
    eligibleStarts: (item.eligibleStarts as number[]).map(Number),
    excludedMask: String(item.excludedMask),
    found: Number(item.found ?? 0),
    notFound: Number(item.notFound ?? 0),
    contactsFound: Number(item.contactsFound ?? 0),
    doneBatches: asSet(item.doneBatches),
    foundChunks: asSet(item.foundChunks),
    notFoundChunks: asSet(item.notFoundChunks),
  };
}

/** Builds the S3 + DynamoDB implementation of {@link OutcomeStore}. */
export function createOutcomeStore({
  ddb,
  s3,
  tableName,
  bucketName,
}: {
  ddb: DynamoDBDocumentClient;
  s3: S3Client;
  tableName: string;
  bucketName: string;
}): OutcomeStore {
  const getJson = async <T>(key: string): Promise<T> => {
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
    return JSON.parse(await Body!.transformToString('utf8')) as T;
  };
  const putJson = (key: string, value: unknown) =>
    s3.send(new PutObjectCommand({ Bucket: bucketName, Key: key, Body: JSON.stringify(value), ContentType: 'application/json' }));
  const deleteObject = (key: string) => s3.send(new DeleteObjectCommand({ Bucket: bucketName, Key: key }));

  const manifest = async (campaignId: string) => {
    const { Item } = await ddb.send(
      new GetCommand({
        TableName: tableName,
        Key: keys.campaignOutcomes(campaignId),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    return Item ? toManifest(Item) : undefined;
  };

  return {
    manifest,

    async recordEvaluation(evaluation) {
      const { organizationId, campaignId, evaluationId, accountIds, buckets } = evaluation;
      if (accountIds.length !== buckets.length)
        throw new Error(`recordEvaluation: ${accountIds.length} accounts but ${buckets.length} buckets`);
      const chunks = Math.ceil(accountIds.length / OUTCOME_CHUNK_SIZE);
      await pMap(
        Array.from({ length: chunks }, (_, chunk) => chunk),
        (chunk) => {
          const from = chunk * OUTCOME_CHUNK_SIZE;
          const body: OutcomeChunk = {
            ids: accountIds.slice(from, from + OUTCOME_CHUNK_SIZE),
            outcomes: buckets
              .slice(from, from + OUTCOME_CHUNK_SIZE)
              .map((bucket) => BUCKET_CODE[bucket])
              .join(''),
          };
          return putJson(outcomeChunkKey(organizationId, campaignId, evaluationId, chunk), body);
        },
        { concurrency: PUT_CONCURRENCY },
      );
      const counts = { total: 0, invalid: 0, recentlyEnriched: 0, crmExcluded: 0, eligible: 0 };
      for (const bucket of buckets) {
        counts[bucket]++;
        if (bucket !== 'eligible') counts.total++;
      }
      const { eligibleStarts, excludedMask } = chunkFigures(buckets);
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...keys.campaignOutcomes(campaignId),
            type: 'campaignOutcomes',
            organizationId,
            campaignId,
            evaluationId,
            evaluatedAt: evaluation.evaluatedAt,
            requested: accountIds.length,
            chunkSize: OUTCOME_CHUNK_SIZE,
            batchSize: evaluation.batchSize,
            counts,
            eligibleStarts,
            excludedMask,
            found: 0,
            notFound: 0,
            contactsFound: 0,
          },
        }),
      );
    },

    async recordBatch(outcome) {
      const { organizationId, campaignId, evaluationId, batch, contactsFound } = outcome;
      const contactsKey = batchContactsKey(organizationId, campaignId, evaluationId, batch.index);
      const current = await manifest(outcome.campaignId);
      if (current?.evaluationId === evaluationId && current.doneBatches.has(batch.index)) return false;
      if (current?.evaluationId !== evaluationId) {
        // Replaced (or never recorded): a try of this batch that died between its object and the check below may have left one.
        await deleteObject(contactsKey);
        return false;
      }
      // The object first: a batch counted on the manifest always has its object.
      await putJson(contactsKey, contactsFound);

      const { found, notFound, contacts, foundChunks, notFoundChunks } = batchFigures(current.eligibleStarts, batch.offset, contactsFound);
      // Names through placeholders: `found` is a DynamoDB reserved word.
      const adds = ['#found :found', '#notFound :notFound', '#contacts :contacts', '#doneBatches :batchSet'];
      const names: Record<string, string> = {
        '#found': 'found',
        '#notFound': 'notFound',
        '#contacts': 'contactsFound',
        '#doneBatches': 'doneBatches',
        '#evaluationId': 'evaluationId',
      };
      const values: Record<string, unknown> = {
        ':found': found,
        ':notFound': notFound,
        ':contacts': contacts,
        ':batchSet': new Set([batch.index]),
        ':batch': batch.index,
        ':evaluation': evaluationId,
      };
      // A number set cannot be empty: add only the sets that have members.
      if (foundChunks.size > 0) {
        adds.push('#foundChunks :foundChunks');
        names['#foundChunks'] = 'foundChunks';
        values[':foundChunks'] = foundChunks;
      }
      if (notFoundChunks.size > 0) {
        adds.push('#notFoundChunks :notFoundChunks');
        names['#notFoundChunks'] = 'notFoundChunks';
        values[':notFoundChunks'] = notFoundChunks;
      }
      // Refused when a newer evaluation replaced this one, or a retry of this batch already counted it.
      const counted = await updateIf(ddb, {
        TableName: tableName,
        Key: keys.campaignOutcomes(campaignId),
        UpdateExpression: `ADD ${adds.join(', ')}`,
        ConditionExpression: '#evaluationId = :evaluation AND NOT contains(#doneBatches, :batch)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'NONE',
      });
      // A newer evaluation replaced this one since the manifest was read: its launch writes its manifest before it
      // lists this evaluation's objects to delete them, so the object above may have landed after that listing.
      // This batch removes it (a retry of a batch already counted keeps it: same evaluation).
      if (!counted.ok && counted.old?.evaluationId !== evaluationId) await deleteObject(contactsKey);
      return counted.ok;
    },

    readChunk: (m, chunk) => getJson<OutcomeChunk>(outcomeChunkKey(m.organizationId, m.campaignId, m.evaluationId, chunk)),

    readBatchContacts: (m, batch) => getJson<number[]>(batchContactsKey(m.organizationId, m.campaignId, m.evaluationId, batch)),
  };
}
