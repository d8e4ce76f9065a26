/**
 * Erasing a person from an organization's stored data (docs/privacy.md
 * "Erasure"; docs/data-model.md "Privacy"): every readable campaign's result
 * parts are read once each and rewritten without the matching contacts, and
 * the export files of the campaigns that held them are deleted so their URLs
 * stop working. The customer's erasure job ({@link runErasure}) and the
 * vendor's erasure (lib/privacy/vendor.ts) both run {@link eraseFromOrganization}.
 */
import pMap from 'p-map';
import { logger } from '../observability';
import { objectKeys } from '../objects';
import type { CampaignStore } from '../campaigns/store';
import { resultsPrefix, storedContactIdentifiers, withoutContacts, type ResultStore } from '../results/parts';
import type { PrefixStore } from '../storage/prefixes';
import { contactHashes } from './identifiers';
import type { ReceiptSigner } from './receipt';
import type { ErasureRecord, ErasureResult, SuppressionStore } from './store';

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

/**
 * Removes every stored copy of the contacts matching `hashes` from an
 * organization's readable results (campaigns `enriched` or `enriching`):
 * each result part is read once and rewritten only when it held a match;
 * the campaigns that held one lose their export files.
 * @param hashes - full identifier hashes (lib/privacy/identifiers.ts); a contact matches when any of its identifiers does.
 * @returns counts, the campaigns that held a match (sorted) and the removed contacts' IDs.
 */
export async function eraseFromOrganization(
  deps: EraseDependencies,
  organizationId: string,
  hashes: ReadonlySet<string>,
): Promise<OrganizationErasure> {
  const ids = (
    await Promise.all([deps.campaigns.idsInStatus(organizationId, 'enriched'), deps.campaigns.idsInStatus(organizationId, 'enriching')])
  ).flat();
  const campaigns = (await pMap(ids, (id) => deps.campaigns.get(organizationId, id), { concurrency: ERASURE_PART_CONCURRENCY })).filter(
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
      {
        concurrency: ERASURE_PART_CONCURRENCY,
      },
    )
  ).flat();
  const contactIds = new Map<string, Set<string>>();
  const touched = new Set<string>();
  let contactsRemoved = 0;
  let resultObjectsRewritten = 0;
  await pMap(
    parts,
    async ({ campaignId, key }) => {
      const { bytes, removed } = withoutContacts(await deps.results.readPart(key), (reader) => {
        const contact = storedContactIdentifiers(reader);
        if (!contactHashes(contact).some((hash) => hashes.has(hash))) return true;
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
  const campaignIds = [...touched].sort();
  const deleted = await Promise.all(
    campaignIds.map((campaignId) => deps.objects.deletePrefix(objectKeys.exportsPrefix(organizationId, campaignId))),
  );
  return {
    contactsRemoved,
    resultObjectsRewritten,
    exportsDeleted: deleted.reduce((sum, n) => sum + n, 0),
    campaignIds,
    contactIds: [...contactIds.keys()].sort(),
    campaignsOfContact: new Map([...contactIds].map(([contactId, campaigns]) => [contactId, [...campaigns].sort()])),
  };
}

/** What the customer's erasure job needs. */
export interface ErasureJobDependencies extends EraseDependencies {
  suppressions: Pick<SuppressionStore, 'getErasure' | 'moveErasure'>;
  signer: ReceiptSigner;
  /** Records `privacy.erasure_completed` with the completed erasure (idempotent per erasure). */
  erasureCompleted: (erasure: ErasureRecord) => Promise<void>;
}

/**
 * Runs an erasure job to its end: `pending` → `running` → `completed` with
 * its result and signed receipt, then the `privacy.erasure_completed` event.
 * A rerun resumes a `running` job (its rewrites are idempotent: a rewritten
 * part holds no match any more) and, for a `completed` one, only records
 * the event again (one event per erasure). A failure leaves it `running` for
 * the next run (the caller logs it).
 * @returns the erasure as it ends, or undefined when unknown.
 */
export async function runErasure(
  deps: ErasureJobDependencies,
  organizationId: string,
  erasureId: string,
  now: () => Date = () => new Date(),
): Promise<ErasureRecord | undefined> {
  let erasure = await deps.suppressions.getErasure(organizationId, erasureId);
  if (!erasure) return undefined;
  if (erasure.status === 'pending') {
    await deps.suppressions.moveErasure(organizationId, erasureId, 'pending', 'running');
    erasure = { ...erasure, status: 'running' };
  }
  if (erasure.status === 'running') {
    const {
      contactIds: _ids,
      campaignsOfContact: _campaigns,
      ...result
    } = await eraseFromOrganization(deps, organizationId, new Set(erasure.identifiers.map((identifier) => identifier.hash)));
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
    if (await deps.suppressions.moveErasure(organizationId, erasureId, 'running', 'completed', { completedAt, result, receipt })) {
      erasure = { ...erasure, status: 'completed', completedAt, result, receipt };
      logger.info('Erasure completed', {
        erasureId,
        contactsRemoved: result.contactsRemoved,
        resultObjectsRewritten: result.resultObjectsRewritten,
        exportsDeleted: result.exportsDeleted,
      });
    } else {
      erasure = (await deps.suppressions.getErasure(organizationId, erasureId))!;
    }
  }
  if (erasure.status === 'completed') await deps.erasureCompleted(erasure);
  return erasure;
}
