/**
 * Results as they arrive (docs/results.md): the accounts of a campaign's
 * current attempt that have a seq, as JSON, read by page
 * (`POST /v1/campaigns/results`) or as a stream
 * (`POST /v1/campaigns/results/stream`, lib/exports/stream.ts).
 *
 * A page costs two waves of DynamoDB calls before its result parts: the
 * campaign with its organization (one BatchGetItem, which also verifies the
 * request's API key, lib/organizations/api-keys.ts `confirmActiveKey`) beside
 * the suppression sets' versions (the delivery policy, lib/privacy/deliverable.ts);
 * then the attempt's sequence head (lib/results/sequence.ts) beside one Query
 * of the ranges under the page. Then the result parts of those ranges: in
 * proportion to the page. Every contact
 * goes through the one owner of what may be delivered
 * (lib/results/deliverable.ts); the values come from the JSON stored in
 * the parts (lib/results/json.ts), never from the CSV cells, spliced into
 * the answer as stored (lib/http/envelope.ts `JsonText`): nothing is parsed
 * and encoded again.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { NotFoundError, ResultsExpiredError, ResultsNotReadyError } from '../errors';
import { statusAt, type AttemptRecord, type CampaignRecord } from '../campaigns/model';
import type { CampaignStore } from '../campaigns/store';
import { resultPartKey, resultsPrefix, ResultPartReader, type ResultStore } from '../results/parts';
import { deliverable, deliverAll, type Delivery, type DeliveryPolicyOf } from '../results/deliverable';
import { JsonBytes, type ResultItem } from '../results/json';
import { JsonText } from '../http/envelope';
import type { SeqRange, SequenceStore } from '../results/sequence';
import type { KeyCheck } from '../http/auth';
import type { ContactSelection } from '../results/csv';
import { prefetchedParts } from './prefetch';
import { DEFAULT_RESULTS_PAGE_SIZE, type CampaignResultsInput } from './schema';

/** What reading results needs. */
export interface ResultsDependencies {
  /** `getWithOrganization` when the request's key is verified in the first read (a {@link KeyCheck} given), `get` otherwise. */
  campaigns: Pick<CampaignStore, 'get'> & Partial<Pick<CampaignStore, 'getWithOrganization'>>;
  results: Pick<ResultStore, 'readPart'>;
  sequence: Pick<SequenceStore, 'lastSeq' | 'rangesAfter'>;
  /** What may be delivered beyond the request's selection (lib/results/deliverable.ts); none: everything stored. */
  deliveryPolicy?: DeliveryPolicyOf;
  /** Time between two looks at the sequence while waiting (ms): 1,000 (one small read a second). */
  pollMs?: number;
}

export type { ResultItem } from '../results/json';

/** An answer of `POST /v1/campaigns/results`. */
export interface ResultsPage {
  campaignId: string;
  attemptId: string;
  status: 'enriching' | 'enriched';
  /** Eligible accounts of the attempt. */
  eligible: number;
  /** Accounts of the attempt that have a seq now. */
  processed: number;
  /** The attempt is `enriched` and every eligible account has a seq. */
  complete: boolean;
  /** The seq of the last account returned, or `afterSeq` when none: the next page's `afterSeq`. */
  lastSeq: number;
  /** The items as one JSON array, each item's text spliced from the stored bytes (lib/results/json.ts `resultItemText`). */
  accounts: JsonText<ResultItem[]>;
}

/** One result item read from the parts: its seq and its JSON text ({@link ResultItem}, with `type` first when asked). */
export interface ResultItemText {
  seq: number;
  text: string;
}

/** The attempt a reader reads and where it stands. */
export interface OpenedResults {
  campaign: CampaignRecord;
  attempt: AttemptRecord;
  status: 'enriching' | 'enriched';
}

/** A reader's position: the last seq it has (the answer's `attemptId` tells it which attempt that seq belongs to). */
export interface ReaderPosition {
  afterSeq: number;
}

/**
 * The campaign's current attempt, if its results can be read from `position`.
 * With `keyCheck` (the request's, not yet verified) and a store that reads the
 * organization with the campaign, the key is verified in that same read (one
 * BatchGetItem; lib/http/pipeline.ts `in-read`).
 * @throws RevokedApiKeyError (401) when the key is no longer on the organization's list;
 *   NotFoundError (404), ResultsExpiredError (410), ResultsNotReadyError
 *   (409: a draft, never launched or its last attempt failed or was canceled;
 *   or `afterSeq` beyond the current attempt's accounts, a position kept from
 *   an earlier attempt; no details).
 */
export async function openResults(
  deps: Pick<ResultsDependencies, 'campaigns'>,
  organizationId: string,
  campaignId: string,
  position: ReaderPosition,
  now = new Date(),
  keyCheck?: KeyCheck,
): Promise<OpenedResults> {
  const campaign =
    keyCheck && !keyCheck.verified && deps.campaigns.getWithOrganization
      ? (await deps.campaigns.getWithOrganization(organizationId, campaignId, keyCheck)).campaign
      : await deps.campaigns.get(organizationId, campaignId);
  if (!campaign) throw new NotFoundError('campaign', campaignId);
  const status = statusAt(campaign, now);
  if (status === 'expired') throw new ResultsExpiredError();
  if ((status !== 'enriching' && status !== 'enriched') || !campaign.attempt) {
    throw new ResultsNotReadyError(
      'The campaign is not enriching: it was never launched, or its last attempt failed or was canceled (its results went with it). Launch it, then read from afterSeq 0.',
    );
  }
  const attempt = campaign.attempt;
  if (position.afterSeq > attempt.eligible) {
    throw new ResultsNotReadyError(
      `afterSeq ${position.afterSeq} is beyond the ${attempt.eligible} accounts of the current attempt ${attempt.id}: it belongs to an earlier attempt. Read from afterSeq 0.`,
    );
  }
  return { campaign, attempt, status };
}

/** The contact selection of a results request: the export's defaults. */
export const selectionOf = (
  input: Pick<CampaignResultsInput, 'maxContactsPerAccount' | 'hasMobilePhone' | 'hasEmail'>,
): ContactSelection => ({
  maxContactsPerAccount: input.maxContactsPerAccount,
  hasMobilePhone: input.hasMobilePhone ?? false,
  hasEmail: input.hasEmail ?? false,
});

/**
 * The accounts with seq in `(afterSeq, untilSeq]`, in seq order (`untilSeq`
 * at most the attempt's last given seq), their contacts as the delivery owner
 * keeps them, each as its item's JSON text spliced from the stored texts
 * (`type`: a `type` member first, the stream's). Reads the ranges under them
 * (one Query) and their parts, a few ahead.
 */
export async function* resultItems(
  deps: Pick<ResultsDependencies, 'results' | 'sequence'>,
  ref: { organizationId: string; campaignId: string; attemptId: string },
  afterSeq: number,
  untilSeq: number,
  delivery: Delivery,
  type?: string,
): AsyncGenerator<ResultItemText> {
  const out = new JsonBytes();
  for await (const seq of writeResultItems(deps, ref, afterSeq, untilSeq, delivery, out, { type })) yield { seq, text: out.take() };
}

/**
 * {@link resultItems} written into `out` (the stored bytes copied, nothing
 * decoded), `between` before each item but the first; yields each item's seq
 * once it is written.
 */
export async function* writeResultItems(
  deps: Pick<ResultsDependencies, 'results' | 'sequence'>,
  ref: { organizationId: string; campaignId: string; attemptId: string },
  afterSeq: number,
  untilSeq: number,
  delivery: Delivery,
  out: JsonBytes,
  { type, between }: { type?: string; between?: string } = {},
): AsyncGenerator<number> {
  const items = new PageItems(delivery, out, afterSeq, untilSeq, type, between);
  for await (const part of resultParts(deps, ref, afterSeq, untilSeq)) while (items.writeNext(part)) yield items.lastSeq;
}

/**
 * {@link writeResultItems} for a page: every item of `(afterSeq, untilSeq]`
 * written into `out`, part by part, with no step of an async iterator per
 * item (a page of 1,000 accounts took 1,000 of them, each a few promises).
 * @returns the seq of the last item written, or `afterSeq` when none.
 */
export async function writePageItems(
  deps: Pick<ResultsDependencies, 'results' | 'sequence'>,
  ref: { organizationId: string; campaignId: string; attemptId: string },
  afterSeq: number,
  untilSeq: number,
  delivery: Delivery,
  out: JsonBytes,
  between?: string,
  ranges?: readonly SeqRange[],
): Promise<number> {
  const items = new PageItems(delivery, out, afterSeq, untilSeq, undefined, between);
  for await (const part of resultParts(deps, ref, afterSeq, untilSeq, ranges)) while (items.writeNext(part));
  return items.lastSeq;
}

/** One stored part of a read, with the seqs of its accounts. */
interface PartOfRead {
  reader: ResultPartReader;
  /** The seq of the part's next account ({@link PageItems.writeNext} moves it on). */
  seq: number;
  /** The seq of its last account. */
  toSeq: number;
}

/**
 * The parts holding the accounts with seq in `(afterSeq, untilSeq]`, in seq
 * order: the ranges under them (one Query, unless the caller read them:
 * `read`, the ranges after `afterSeq` in seq order, possibly fewer or more),
 * their parts a few ahead, into reused buffers (a part is valid until the
 * next is asked for).
 */
async function* resultParts(
  deps: Pick<ResultsDependencies, 'results' | 'sequence'>,
  ref: { organizationId: string; campaignId: string; attemptId: string },
  afterSeq: number,
  untilSeq: number,
  read?: readonly SeqRange[],
): AsyncGenerator<PartOfRead> {
  if (untilSeq <= afterSeq) return;
  // Only the parts under the seqs asked for: ranges read beside the head may reach past the last seq it gave.
  const ranges = (read ?? (await deps.sequence.rangesAfter(ref.campaignId, ref.attemptId, afterSeq, untilSeq - afterSeq))).filter(
    (range) => range.toSeq > afterSeq && range.fromSeq <= untilSeq,
  );
  if (ranges.length === 0) return;
  const prefix = resultsPrefix(ref.organizationId, ref.campaignId, ref.attemptId);
  let index = 0;
  // Into reused buffers: each item's bytes are copied out of the part before the next part is asked for.
  for await (const bytes of prefetchedParts(
    deps.results,
    ranges.map((range) => resultPartKey(prefix, range.batchIndex, range.chunk)),
    undefined,
    true,
  )) {
    const range = ranges[index++]!;
    yield { reader: new ResultPartReader(bytes), seq: range.fromSeq, toSeq: range.toSeq };
    if (range.toSeq >= untilSeq) return;
  }
}

/** Writes the items of a read into one buffer, account by account, each part's synchronously. */
class PageItems {
  /** The seq of the last item written, or `afterSeq` when none. */
  lastSeq: number;
  private first = true;
  private readonly next: (part: ResultPartReader) => boolean;

  constructor(
    private readonly delivery: Delivery,
    private readonly out: JsonBytes,
    private readonly afterSeq: number,
    private readonly untilSeq: number,
    private readonly type: string | undefined,
    private readonly between: string | undefined,
  ) {
    this.lastSeq = afterSeq;
    this.next = (part) => delivery.nextContact(part);
  }

  /**
   * Writes `part`'s next account in `(afterSeq, untilSeq]`, skipping those
   * before it.
   * @returns false when the part holds no more of them.
   */
  writeNext(part: PartOfRead): boolean {
    for (; part.seq <= part.toSeq && part.seq <= this.untilSeq && part.reader.nextAccount(); part.seq++) {
      if (part.seq <= this.afterSeq) continue;
      if (!this.first && this.between !== undefined) this.out.write(this.between);
      this.first = false;
      this.delivery.beginAccount();
      part.reader.writeItem(this.out, part.seq, this.next, this.type);
      this.lastSeq = part.seq++;
      return true;
    }
    return false;
  }
}

/**
 * Waits, one small read a second, until the attempt has a seq after
 * `afterSeq`, `waitSeconds` pass, or `signal` aborts.
 * @param known - the attempt's last given seq as the caller just read it (no read then before the first second).
 * @returns the attempt's last given seq when the wait ended.
 */
export async function waitForSeq(
  deps: Pick<ResultsDependencies, 'sequence' | 'pollMs'>,
  ref: { campaignId: string; attemptId: string },
  afterSeq: number,
  waitMs: number,
  signal?: AbortSignal,
  known?: number,
): Promise<number> {
  const until = Date.now() + waitMs;
  const pollMs = deps.pollMs ?? 1_000;
  let lastSeq = known ?? (await deps.sequence.lastSeq(ref.campaignId, ref.attemptId));
  // At most one look per poll interval: ⌈wait / interval⌉ looks, the last at the wait's end (a timer firing a
  // millisecond early never adds one).
  for (let look = 0, looks = Math.ceil(waitMs / pollMs); look < looks && lastSeq <= afterSeq && !signal?.aborted; look++) {
    await sleepFor(Math.max(0, Math.min(pollMs, until - Date.now())), undefined, { signal }).catch(() => undefined);
    if (signal?.aborted) break;
    lastSeq = await deps.sequence.lastSeq(ref.campaignId, ref.attemptId);
  }
  return lastSeq;
}

/**
 * {@link openResults}, then the attempt's sequence head: where a reader of
 * the results (page or stream) starts. With `rangesFor` (accounts), the
 * ranges of the first that many seqs after `afterSeq` are queried beside the
 * head, in the same wave (they depend on the attempt only): `ranges`, in seq
 * order, may stop short of or reach past the head as read.
 * @param options.keyCheck - the request's API-key check, verified by the campaign read (see {@link openResults}).
 * @throws as {@link openResults}; ResultsNotReadyError (409) for a campaign
 *   enriched before its results could be read as they arrive (no sequence: export it).
 */
export async function openReadable(
  deps: Pick<ResultsDependencies, 'campaigns' | 'sequence'>,
  organizationId: string,
  campaignId: string,
  position: ReaderPosition,
  options: { keyCheck?: KeyCheck; rangesFor?: number } = {},
): Promise<{
  opened: OpenedResults;
  ref: { organizationId: string; campaignId: string; attemptId: string };
  lastGiven: number;
  ranges?: SeqRange[];
}> {
  const opened = await openResults(deps, organizationId, campaignId, position, new Date(), options.keyCheck);
  const ref = { organizationId, campaignId: opened.campaign.id, attemptId: opened.attempt.id };
  const { rangesFor } = options;
  const [lastGiven, ranges] = await Promise.all([
    deps.sequence.lastSeq(ref.campaignId, ref.attemptId),
    rangesFor === undefined ? undefined : deps.sequence.rangesAfter(ref.campaignId, ref.attemptId, position.afterSeq, rangesFor),
  ]);
  if (opened.status === 'enriched' && lastGiven < opened.attempt.eligible) {
    throw new ResultsNotReadyError(
      'This campaign was enriched before its results could be read as they arrive: export it (POST /v1/campaigns/export).',
    );
  }
  return { opened, ref, lastGiven, ...(ranges ? { ranges } : {}) };
}

/** Page writers a finished page left for the next one in this process, at most {@link SPARE_PAGE_WRITERS_KEPT}. */
const SPARE_PAGE_WRITERS: JsonBytes[] = [];
const SPARE_PAGE_WRITERS_KEPT = 4;

/**
 * `POST /v1/campaigns/results`: the accounts after `afterSeq`, in seq order,
 * at most `limit`; with `waitSeconds`, a long poll while none is readable.
 *
 * Two waves of DynamoDB calls before the result parts (docs/results.md
 * "What a page reads"): the campaign with its organization (verifying
 * `keyCheck`) beside the delivery policy's read (the suppression sets'
 * versions: strongly consistent and started after the request arrived, so a
 * suppression acknowledged before it applies to it; read again after a
 * wait); then the sequence head beside the ranges of the page.
 * @param options.keyCheck - the request's API-key check (lib/http/pipeline.ts `in-read`).
 * @throws as {@link openResults}.
 */
export async function listCampaignResults(
  deps: ResultsDependencies,
  organizationId: string,
  input: CampaignResultsInput,
  options: { signal?: AbortSignal; keyCheck?: KeyCheck } = {},
): Promise<ResultsPage> {
  const afterSeq = input.afterSeq ?? 0;
  const limit = input.limit ?? DEFAULT_RESULTS_PAGE_SIZE;
  const position = { afterSeq };
  const policyOf = deps.deliveryPolicy ?? deliverAll;
  // Beside the campaign's read; its failure counts only if the page delivers something (awaited below).
  let policy = policyOf(organizationId);
  policy.catch(() => undefined);
  let { opened, ref, lastGiven, ranges } = await openReadable(deps, organizationId, input.campaignId, position, {
    ...(options.keyCheck ? { keyCheck: options.keyCheck } : {}),
    rangesFor: limit,
  });
  const wait = (input.waitSeconds ?? 0) * 1000;
  if (lastGiven <= afterSeq && opened.status === 'enriching' && lastGiven < opened.attempt.eligible && wait > 0) {
    lastGiven = await waitForSeq(deps, ref, afterSeq, wait, options.signal, lastGiven);
    // The campaign may have completed, failed or been canceled meanwhile.
    opened = await openResults(deps, organizationId, input.campaignId, position);
    if (opened.attempt.id !== ref.attemptId)
      throw new ResultsNotReadyError(
        `The attempt ${ref.attemptId} ended while waiting; the campaign now runs attempt ${opened.attempt.id}: read it from afterSeq 0.`,
        { attemptId: opened.attempt.id },
      );
    // What was read before the wait is stale: the ranges are queried and the policy read when something is delivered.
    ranges = undefined;
    if (lastGiven > afterSeq) policy = policyOf(organizationId);
  }
  const untilSeq = Math.min(lastGiven, afterSeq + limit);
  let lastSeq = afterSeq;
  // The items' stored bytes, copied into one buffer and decoded once: no string per item or contact. The buffer is
  // the process's spare one when free (grown by earlier pages: no new allocation of a few MB per page).
  const out = SPARE_PAGE_WRITERS.pop() ?? new JsonBytes();
  let accounts: JsonText<ResultItem[]>;
  try {
    out.take();
    out.write('[');
    if (untilSeq > afterSeq) {
      const delivery = deliverable(selectionOf(input), await policy);
      lastSeq = await writePageItems(deps, ref, afterSeq, untilSeq, delivery, out, ',', ranges);
    }
    accounts = new JsonText<ResultItem[]>(out.write(']').take());
  } finally {
    if (SPARE_PAGE_WRITERS.length < SPARE_PAGE_WRITERS_KEPT) SPARE_PAGE_WRITERS.push(out);
  }
  return {
    campaignId: ref.campaignId,
    attemptId: ref.attemptId,
    status: opened.status,
    eligible: opened.attempt.eligible,
    processed: lastGiven,
    complete: opened.status === 'enriched' && lastGiven === opened.attempt.eligible,
    lastSeq,
    accounts,
  };
}
