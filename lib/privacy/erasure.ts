/**
 * Erasing a person from an organization's stored data (docs/privacy.md
 * "Erasure"; docs/data-model.md "Privacy"): every readable campaign's result
 * parts are read once each and rewritten without the matching contacts, and
 * the export files of the campaigns that held them are deleted so their URLs
 * stop working. The customer's erasure job ({@link runErasure}) and the
 * vendor's erasure (lib/privacy/vendor.ts) both run {@link eraseFromOrganization}.
 */
import { randomUUID } from 'node:crypto';
import pMap from 'p-map';
import { logger } from '../observability';
import { objectKeys } from '../objects';
import type { CampaignStore } from '../campaigns/store';
import { resultsPrefix, storedContactIdentifiers, withoutContacts, type ResultStore } from '../results/parts';
import type { PrefixStore } from '../storage/prefixes';
import { DigestSet } from '../warehouse/identifiers';
import type { ReceiptSigner } from './receipt';
import type { ErasureProgress, ErasureRecord, ErasureResult, SuppressionStore } from './store';

/** Result parts read (and rewritten) at once. */
export const ERASURE_PART_CONCURRENCY = 16;

/** What erasing from an organization's stored data needs. */
export interface EraseDependencies {
  campaigns: Pick<CampaignStore, 'get' | 'idsInStatus'>;
  results: Pick<ResultStore, 'listParts' | 'readPart' | 'replacePart'>;
  objects: PrefixStore;
}

/** What {@link eraseFromOrganization} found and removed. */
export interface OrganizationErasure extends ErasureResult {
  /** The removed contacts' IDs (the vendor's event names them; never raw identifiers). */
  contactIds: string[];
  /** Per removed contact ID, the campaigns (sorted) that held it. */
  campaignsOfContact: Map<string, string[]>;
}

/** Campaigns erased at once between two saved progress points ({@link EraseOptions.checkpoint}). */
export const ERASURE_CAMPAIGN_CHUNK = 16;

/** How {@link eraseFromOrganization} resumes and reports its progress. */
export interface EraseOptions {
  /** Progress saved by an earlier run: campaigns up to `after` are skipped and its counts carried on. */
  resumeFrom?: ErasureProgress;
  /**
   * Called after each chunk of campaigns (in ID order) is done: their parts
   * rewritten and their exports deleted. Saving it lets a rerun resume.
   */
  checkpoint?: (progress: ErasureProgress) => Promise<void>;
}

/**
 * Removes every stored copy of the contacts matching `hashes` from an
 * organization's readable results (campaigns `enriched` or `enriching`), in
 * campaign ID order, {@link ERASURE_CAMPAIGN_CHUNK} campaigns at a time:
 * each result part is read once and rewritten only when it held a match;
 * the campaigns that held one lose their export files.
 * @param hashes - full identifier hashes (lib/warehouse/identifiers.ts); a contact matches when any of its identifiers does.
 * @returns counts (with those of `resumeFrom`), the campaigns that held a match (sorted) and the contacts this run removed.
 */
export async function eraseFromOrganization(
  deps: EraseDependencies,
  organizationId: string,
  hashes: ReadonlySet<string>,
  options: EraseOptions = {},
): Promise<OrganizationErasure> {
  const after = options.resumeFrom?.after;
  const matches = new DigestSet(hashes);
  const ids = (
    await Promise.all([deps.campaigns.idsInStatus(organizationId, 'enriched'), deps.campaigns.idsInStatus(organizationId, 'enriching')])
  )
    .flat()
    .filter((id) => after === undefined || id > after)
    .sort();
  const contactIds = new Map<string, Set<string>>();
  const touched = new Set<string>(options.resumeFrom?.campaignIds ?? []);
  let contactsRemoved = options.resumeFrom?.contactsRemoved ?? 0;
  let resultObjectsRewritten = options.resumeFrom?.resultObjectsRewritten ?? 0;
  let exportsDeleted = options.resumeFrom?.exportsDeleted ?? 0;
  for (let start = 0; start < ids.length; start += ERASURE_CAMPAIGN_CHUNK) {
    const chunk = ids.slice(start, start + ERASURE_CAMPAIGN_CHUNK);
    const campaigns = (await pMap(chunk, (id) => deps.campaigns.get(organizationId, id), { concurrency: ERASURE_PART_CONCURRENCY })).filter(
      (c) => c?.attempt !== undefined,
    );
    const parts = (
      await pMap(
        campaigns,
        async (campaign) =>
          (await deps.results.listParts(resultsPrefix(organizationId, campaign!.id, campaign!.attempt!.id))).map((key) => ({
            campaignId: campaign!.id,
            key,
          })),
        { concurrency: ERASURE_PART_CONCURRENCY },
      )
    ).flat();
    const erased = await eraseParts(deps, organizationId, parts, matches, contactIds);
    contactsRemoved += erased.contactsRemoved;
    resultObjectsRewritten += erased.resultObjectsRewritten;
    exportsDeleted += erased.exportsDeleted;
    for (const campaignId of erased.campaignIds) touched.add(campaignId);
    await options.checkpoint?.({
      after: chunk.at(-1)!,
      contactsRemoved,
      resultObjectsRewritten,
      exportsDeleted,
      campaignIds: [...touched].sort(),
    });
  }
  return {
    contactsRemoved,
    resultObjectsRewritten,
    exportsDeleted,
    campaignIds: [...touched].sort(),
    contactIds: [...contactIds.keys()].sort(),
    campaignsOfContact: new Map([...contactIds].map(([contactId, campaigns]) => [contactId, [...campaigns].sort()])),
  };
}

/** A stored result part of one of an organization's campaigns. */
export interface StoredPart {
  campaignId: string;
  /** Its object key (lib/results/parts.ts `resultPartKey`). */
  key: string;
}

/**
 * Removes the contacts matching `matches` from the given result parts of one
 * organization: each part is read once and rewritten only when it held a
 * match; a part that no longer exists (expired, or its attempt compensated)
 * holds nothing. The campaigns that held a match lose their export files.
 * @param contactIds - filled in: per removed contact ID, the campaigns that held it.
 * @returns what was removed; `campaignIds` are the campaigns that held a match (sorted).
 */
export async function eraseParts(
  deps: EraseDependencies,
  organizationId: string,
  parts: readonly StoredPart[],
  matches: DigestSet,
  contactIds: Map<string, Set<string>>,
): Promise<ErasureResult> {
  let contactsRemoved = 0;
  let resultObjectsRewritten = 0;
  const touched = new Set<string>();
  await pMap(
    parts,
    async ({ campaignId, key }) => {
      let stored: Uint8Array;
      try {
        stored = await deps.results.readPart(key);
      } catch (error) {
        if ((error as { name?: string }).name === 'NoSuchKey') return;
        throw error;
      }
      const { bytes, removed } = withoutContacts(stored, (reader) => {
        // The stored digests decide; only a matching contact's JSON is read (for its ID).
        if (!matches.hasAny(reader.bytes, reader.contactDigestsStart, reader.contactDigestsEnd)) return true;
        const contact = storedContactIdentifiers(reader);
        if (contact.contactId) {
          if (!contactIds.has(contact.contactId)) contactIds.set(contact.contactId, new Set());
          contactIds.get(contact.contactId)!.add(campaignId);
        }
        return false;
      });
      if (removed === 0) return;
      await deps.results.replacePart(key, bytes);
      contactsRemoved += removed;
      resultObjectsRewritten++;
      touched.add(campaignId);
    },
    { concurrency: ERASURE_PART_CONCURRENCY },
  );
  const deleted = await Promise.all(
    [...touched].map((campaignId) => deps.objects.deletePrefix(objectKeys.exportsPrefix(organizationId, campaignId))),
  );
  return {
    contactsRemoved,
    resultObjectsRewritten,
    exportsDeleted: deleted.reduce((sum, n) => sum + n, 0),
    campaignIds: [...touched].sort(),
  };
}

/** What the customer's erasure job needs. */
export interface ErasureJobDependencies extends EraseDependencies {
  suppressions: Pick<SuppressionStore, 'getErasure' | 'claimErasure' | 'moveErasure' | 'erasureProgress' | 'saveErasureProgress'>;
  signer: ReceiptSigner;
  /**
   * Deletes the organization's saved idempotent answers that hold any of the
   * hashes (lib/idempotency/store.ts; docs/privacy.md "Erasure").
   * @returns how many were deleted.
   */
  purgeSavedAnswers: (organizationId: string, hashes: ReadonlySet<string>) => Promise<number>;
  /** Records `privacy.erasure_completed` with the completed erasure (idempotent per erasure). */
  erasureCompleted: (erasure: ErasureRecord) => Promise<void>;
}

/**
 * Runs an erasure job to its end: `pending` → `running` → `completed` with
 * its result and signed receipt, then the `privacy.erasure_completed` event.
 * The same code runs in AWS (the queue's worker, functions/privacy-erasure-worker.ts)
 * and locally (in the API process; the local stack resumes unfinished jobs at
 * start). A rerun resumes a `running` job after the last campaign chunk its
 * progress records (a chunk cut short is redone: its rewrites are idempotent,
 * a rewritten part holds no match any more) and, for a `completed` one, only
 * records the event again (one event per erasure). A failure leaves it
 * `running` for the next run (the caller logs it and retries).
 *
 * One run at a time: a run claims the job for `ERASURE_LEASE_SECONDS` (lib/privacy/store.ts), renewed at each saved chunk, and
 * only the run holding it saves progress or completes it. A second start while it runs (two simultaneous
 * creates of one `requestRef`, a redelivered queue message) returns the job as it is; a run that died is
 * taken over once its lease lapses, or at once with `takeOver` (the local stack at start).
 * @returns the erasure as it ends (or as another run holds it), or undefined when unknown.
 */
export async function runErasure(
  deps: ErasureJobDependencies,
  organizationId: string,
  erasureId: string,
  now: () => Date = () => new Date(),
  options: { takeOver?: boolean } = {},
): Promise<ErasureRecord | undefined> {
  let erasure = await deps.suppressions.getErasure(organizationId, erasureId);
  if (!erasure) return undefined;
  const runner = randomUUID();
  if (erasure.status === 'pending' || erasure.status === 'running') {
    // Another run holds it (a second start of the job): that run does the work.
    if (!(await deps.suppressions.claimErasure(organizationId, erasureId, runner, now(), options))) return erasure;
    erasure = { ...erasure, status: 'running' };
  }
  if (erasure.status === 'running') {
    const hashes = new Set(erasure.identifiers.map((identifier) => identifier.hash));
    const resumeFrom = await deps.suppressions.erasureProgress(organizationId, erasureId);
    const erased = await eraseFromOrganization(deps, organizationId, hashes, {
      ...(resumeFrom ? { resumeFrom } : {}),
      checkpoint: async (progress) => {
        if (!(await deps.suppressions.saveErasureProgress(organizationId, erasureId, progress, runner, now())))
          throw new Error('Erasure job is no longer held by this run');
      },
    });
    const result: ErasureResult = {
      contactsRemoved: erased.contactsRemoved,
      resultObjectsRewritten: erased.resultObjectsRewritten,
      exportsDeleted: erased.exportsDeleted,
      campaignIds: erased.campaignIds,
    };
    const savedAnswersPurged = await deps.purgeSavedAnswers(organizationId, hashes);
    const completedAt = now().toISOString();
    const receipt = await deps.signer.sign({
      erasureId,
      organizationId,
      requestRef: erasure.requestRef,
      regime: erasure.regime,
      identifiers: erasure.identifiers,
      result,
      completedAt,
    });
    if (await deps.suppressions.moveErasure(organizationId, erasureId, 'running', 'completed', { completedAt, result, receipt }, runner)) {
      erasure = { ...erasure, status: 'completed', completedAt, result, receipt };
      logger.info('Erasure completed', {
        erasureId,
        contactsRemoved: result.contactsRemoved,
        resultObjectsRewritten: result.resultObjectsRewritten,
        exportsDeleted: result.exportsDeleted,
        savedAnswersPurged,
      });
    } else {
      erasure = (await deps.suppressions.getErasure(organizationId, erasureId))!;
    }
  }
  if (erasure.status === 'completed') await deps.erasureCompleted(erasure);
  return erasure;
}
