/**
 * Why each account was or was not enriched (docs/launch.md
 * "`POST /v1/campaigns/accounts`"): one page of a campaign's accounts, in
 * submission order, with the outcome of the most recent launch evaluation
 * and of the workflow's batches, and a summary over the whole list.
 *
 * Read cost (docs/data-model.md "Per-account outcomes"): the campaign item
 * with the organization item (one BatchGetItem, whose list of active keys
 * verifies the request's key), the manifest item and the delivery policy's
 * read, all in one round trip, then only the chunk
 * objects under the page and the batch objects of those chunks. The
 * manifest says, per chunk, whether it holds any account of each outcome, so
 * a filtered page skips chunks without a match without reading them, and
 * every chunk it reads holds at least one account of the page.
 */
import { InvalidRequestError, NotFoundError, ResultsExpiredError, ResultsNotReadyError } from '../errors';
import { statusAt } from '../campaigns/model';
import type { CampaignStore } from '../campaigns/store';
import type { KeyCheck } from '../http/auth';
import { decodeCursor, encodeCursor } from '../http/cursor';
import { ACCOUNT_OUTCOMES, type AccountOutcome } from './account-outcome';
import {
  ELIGIBLE_CODE,
  EXCLUDED_BIT,
  EXCLUDED_OUTCOME_OF_CODE,
  batchesOfChunk,
  chunkCount,
  eligibleRange,
  type OutcomeChunk,
  type OutcomeManifest,
  type OutcomeStore,
} from './outcomes';
import { DEFAULT_ACCOUNTS_PAGE_SIZE, type CampaignAccountsInput } from './schema';
import type { CampaignAccountsPage } from './docs';
import { resultsPrefix, ResultPartReader, type ResultStore } from '../results/parts';
import { deliverableCounts, deliverAll, type DeliveryPolicyOf } from '../results/deliverable';

/** What a page of account outcomes reads. */
export interface AccountsDependencies {
  /** The campaign read, which also verifies the request's key (`getWithOrganization`: the organization's list of active keys). */
  campaigns: Pick<CampaignStore, 'getWithOrganization'>;
  outcomes: Pick<OutcomeStore, 'manifest' | 'readChunk' | 'readBatchContacts'>;
  /** Secret that signs cursors (docs/pagination.md). */
  cursorSecret: string;
  /**
   * What may be delivered beyond the caller's selection (lib/results/deliverable.ts): while it withholds something,
   * `contactsFound` counts only deliverable contacts, read from the batches' result parts. None: everything stored.
   */
  deliveryPolicy?: DeliveryPolicyOf;
  /** The result parts `contactsFound` is recounted from while suppressions are in force. */
  results: Pick<ResultStore, 'readBatchParts'>;
}

type Entry = CampaignAccountsPage['accounts'][number];

/** Outcome summary of the whole list (accounts). */
export function outcomeSummary(manifest: OutcomeManifest, attemptCurrent: boolean): CampaignAccountsPage['summary'] {
  const found = attemptCurrent ? manifest.found : 0;
  const notFound = attemptCurrent ? manifest.notFound : 0;
  return {
    invalid: manifest.counts.invalid,
    recently_enriched: manifest.counts.recentlyEnriched,
    crm_excluded: manifest.counts.crmExcluded,
    pending: manifest.counts.eligible - found - notFound,
    found,
    not_found: notFound,
  };
}

/**
 * Whether chunk `chunk` holds at least one account with an outcome in
 * `wanted`, from the manifest alone (exact: no chunk is read in vain).
 */
export function chunkHasMatch(
  manifest: OutcomeManifest,
  attemptCurrent: boolean,
  wanted: ReadonlySet<AccountOutcome>,
  chunk: number,
): boolean {
  const mask = Number.parseInt(manifest.excludedMask[chunk] ?? '0', 16);
  for (const [code, outcome] of Object.entries(EXCLUDED_OUTCOME_OF_CODE))
    if (wanted.has(outcome) && mask & EXCLUDED_BIT[code]!) return true;
  const { start, end } = eligibleRange(manifest, chunk);
  if (end <= start) return false;
  if (!attemptCurrent) return wanted.has('pending');
  if (wanted.has('pending') && batchesOfChunk(manifest, chunk).some((batch) => !manifest.doneBatches.has(batch))) return true;
  if (wanted.has('found') && manifest.foundChunks.has(chunk)) return true;
  return wanted.has('not_found') && manifest.notFoundChunks.has(chunk);
}

/**
 * The accounts of one chunk with their outcomes. An eligible account of a
 * counted batch whose contacts were not read (no `found`/`not_found` wanted)
 * has outcome `null`: known not to be pending, not needed further.
 */
function* chunkAccounts(
  manifest: OutcomeManifest,
  attemptCurrent: boolean,
  chunk: number,
  objects: { chunk: OutcomeChunk; contacts: Map<number, number[]> },
): Generator<{ position: number; accountId: string; outcome: AccountOutcome | null; contactsFound: number | null }> {
  let eligibleIndex = eligibleRange(manifest, chunk).start;
  const first = chunk * manifest.chunkSize;
  for (let i = 0; i < objects.chunk.ids.length; i++) {
    const accountId = objects.chunk.ids[i]!;
    const code = objects.chunk.outcomes[i]!;
    if (code !== ELIGIBLE_CODE) {
      yield { position: first + i, accountId, outcome: EXCLUDED_OUTCOME_OF_CODE[code]!, contactsFound: null };
      continue;
    }
    const index = eligibleIndex++;
    const batch = Math.floor(index / manifest.batchSize);
    if (!attemptCurrent || !manifest.doneBatches.has(batch)) {
      yield { position: first + i, accountId, outcome: 'pending', contactsFound: null };
      continue;
    }
    const counts = objects.contacts.get(batch);
    const contactsFound = counts?.[index - batch * manifest.batchSize];
    if (contactsFound === undefined) yield { position: first + i, accountId, outcome: null, contactsFound: null };
    else yield { position: first + i, accountId, outcome: contactsFound > 0 ? 'found' : 'not_found', contactsFound };
  }
}

const cursorError = () => new InvalidRequestError('The cursor is invalid.', ['cursor: malformed']);

/**
 * One page of a campaign's account outcomes.
 * @returns up to `limit` accounts (1..1000, default 100) from the cursor's
 *   position, `nextCursor` (null on the last page) and the summary (accounts).
 * @throws InvalidRequestError for a cursor that was altered, or belongs to another organization, campaign, filters or limit.
 * @throws NotFoundError for an unknown campaign or one of another organization.
 * @throws ResultsExpiredError (410) once the campaign reads `expired`.
 * @throws ResultsNotReadyError (409) when the campaign was never evaluated.
 * @throws InvalidApiKeyError, RevokedApiKeyError, ExpiredApiKeyError (the key check, verified by the campaign read).
 * @param keyCheck - the request's API-key check (lib/http/auth.ts), verified by the campaign read (one round trip in all).
 */
export async function listCampaignAccounts(
  deps: AccountsDependencies,
  organizationId: string,
  input: CampaignAccountsInput,
  keyCheck?: KeyCheck,
  now = new Date(),
): Promise<CampaignAccountsPage> {
  const filter = input.filters?.outcome === undefined ? undefined : [...new Set([input.filters.outcome].flat())].sort();
  const wanted = new Set<AccountOutcome>(filter ?? ACCOUNT_OUTCOMES);
  const limit = input.limit ?? DEFAULT_ACCOUNTS_PAGE_SIZE;
  const binding = { o: organizationId, s: input.campaignId, f: JSON.stringify(filter ?? null), l: limit };
  let from = 0;
  if (input.cursor !== undefined) {
    from = Number(decodeCursor(input.cursor, deps.cursorSecret, binding));
    if (!Number.isSafeInteger(from) || from < 0) throw cursorError();
  }

  const [{ campaign }, manifest, policy] = await Promise.all([
    deps.campaigns.getWithOrganization(organizationId, input.campaignId, keyCheck),
    deps.outcomes.manifest(input.campaignId),
    (deps.deliveryPolicy ?? deliverAll)(organizationId),
  ]);
  if (!campaign) throw new NotFoundError('campaign', input.campaignId);
  if (statusAt(campaign, now) === 'expired') throw new ResultsExpiredError();
  if (!manifest || manifest.organizationId !== organizationId)
    throw new ResultsNotReadyError(
      'This campaign has no per-account outcomes yet: they are kept when POST /v1/campaigns/enrich evaluates it (quote keeps none). Launch it, then list its accounts.',
    );

  // found/not_found belong to the attempt the evaluation launched while it is the campaign's attempt;
  // after a failed or canceled attempt the campaign is a draft again and its eligible accounts are pending.
  const attemptCurrent = campaign.attempt?.id === manifest.evaluationId;
  const needContacts = attemptCurrent && (wanted.has('found') || wanted.has('not_found'));
  const contacts = new Map<number, Promise<number[]>>();
  const load = async (chunk: number) => {
    const batches = needContacts ? batchesOfChunk(manifest, chunk).filter((batch) => manifest.doneBatches.has(batch)) : [];
    // While the policy withholds something the counts come from the stored rows, through the one owner of what may be delivered.
    const prefix = resultsPrefix(organizationId, input.campaignId, manifest.evaluationId);
    const countsOf = (batch: number) =>
      policy.withholds
        ? deps.results
            .readBatchParts(prefix, batch)
            .then((parts) => parts.flatMap((part) => deliverableCounts(new ResultPartReader(part), policy)))
        : deps.outcomes.readBatchContacts(manifest, batch);
    for (const batch of batches) if (!contacts.has(batch)) contacts.set(batch, countsOf(batch));
    const [objects, ...counts] = await Promise.all([
      deps.outcomes.readChunk(manifest, chunk),
      ...batches.map((batch) => contacts.get(batch)!),
    ]);
    return { chunk: objects, contacts: new Map(batches.map((batch, i) => [batch, counts[i]!])) };
  };

  const total = chunkCount(manifest);
  const accounts: Entry[] = [];
  let position = from;
  let next = Math.floor(from / manifest.chunkSize);
  let last = -1;
  let more = false;
  while (accounts.length < limit && next < total) {
    // The chunks the rest of the page may need if every account matched: each is read (in parallel) only
    // when it holds a match; when none does, the next chunk that holds one.
    const windowEnd = Math.floor((position + (limit - accounts.length) - 1) / manifest.chunkSize);
    const window: number[] = [];
    while (next < total && (window.length === 0 || next <= windowEnd)) {
      if (chunkHasMatch(manifest, attemptCurrent, wanted, next)) window.push(next);
      next++;
    }
    const loaded = await Promise.all(window.map(load));
    for (const [i, chunk] of window.entries()) {
      for (const account of chunkAccounts(manifest, attemptCurrent, chunk, loaded[i]!)) {
        if (account.position < position || account.outcome === null || !wanted.has(account.outcome)) continue;
        if (accounts.length === limit) {
          more = true;
          break;
        }
        accounts.push({ accountId: account.accountId, outcome: account.outcome, contactsFound: account.contactsFound });
        last = account.position;
      }
      position = (chunk + 1) * manifest.chunkSize;
    }
  }
  if (accounts.length === limit && !more) {
    for (let chunk = next; chunk < total && !more; chunk++) more = chunkHasMatch(manifest, attemptCurrent, wanted, chunk);
  }
  return {
    accounts,
    nextCursor: more ? encodeCursor({ ...binding, a: String(last + 1) }, deps.cursorSecret) : null,
    summary: outcomeSummary(manifest, attemptCurrent),
  };
}
