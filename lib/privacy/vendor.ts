/**
 * The vendor's erasure (docs/privacy.md "The vendor's erasure"; the operator
 * runs it with `npx ops privacy:erase` or `npx ops privacy:intake FILE`): the
 * person goes on the global suppression list, out of the warehouse, and out
 * of every organization's stored results and exports; each organization that
 * held a copy receives `privacy.contact_erased` naming only its own campaigns.
 */
import { objectKeys } from '../objects';
import { DigestSet, identifierHash, type HashedIdentifier } from '../warehouse/identifiers';
import type { CopyIndex } from './copies';
import { eraseParts, type EraseDependencies, type StoredPart } from './erasure';
import { GLOBAL_SCOPE, type SuppressionStore } from './store';

/** What the vendor's erasure needs. */
export interface VendorErasureDependencies extends EraseDependencies {
  suppressions: Pick<SuppressionStore, 'suppress'>;
  /**
   * Removes the contacts holding any of the identifier hashes from the warehouse (through its identifier index,
   * lib/warehouse/warehouse.ts `removeContacts`); returns their IDs.
   */
  removeFromWarehouse: (hashes: ReadonlySet<string>) => Promise<string[]>;
  /** Which stored result parts hold which identifiers (lib/privacy/copies.ts): only those parts are read. */
  copies: Pick<CopyIndex, 'partsHolding'>;
  /**
   * Records `privacy.contact_erased` for one organization and contact (idempotent: one event per organization and contact).
   * @returns whether this call recorded it (false: already recorded).
   */
  contactErased: (
    organizationId: string,
    data: { contactId: string; identifiers: HashedIdentifier[]; campaignIds: string[] },
  ) => Promise<boolean>;
}

/** What one vendor erasure did. */
export interface VendorErasureReport {
  /** Warehouse contacts removed. */
  warehouseContactsRemoved: number;
  /** Contact rows removed from organizations' stored results. */
  contactsRemoved: number;
  /** Organizations that held a copy. */
  organizations: number;
  /** `privacy.contact_erased` events recorded by this run. */
  notified: number;
}

/**
 * Erases a person everywhere. Idempotent: a rerun finds nothing more to
 * remove and records no second event. A copy matching the contact's ID (found
 * in the warehouse) goes too, whatever its other identifiers. The stored
 * copies are found through the copy index (lib/privacy/copies.ts): the parts
 * it names are read once each, no other organization's or campaign's data.
 * @param identifiers - the person's identifiers, hashed (lib/warehouse/identifiers.ts).
 */
export async function eraseEverywhere(
  deps: VendorErasureDependencies,
  identifiers: readonly HashedIdentifier[],
  now = new Date(),
): Promise<VendorErasureReport> {
  await deps.suppressions.suppress(GLOBAL_SCOPE, identifiers, 'other', 'erasure', now);
  const hashes = new Set(identifiers.map((identifier) => identifier.hash));
  const removed = await deps.removeFromWarehouse(hashes);
  // The warehouse's contact IDs of the person: suppressed too, and matched in the stored copies.
  const byContactId = removed.map((contactId): HashedIdentifier => ({ type: 'contact_id', hash: identifierHash('contact_id', contactId) }));
  if (byContactId.length > 0) await deps.suppressions.suppress(GLOBAL_SCOPE, byContactId, 'other', 'erasure', now);
  for (const identifier of byContactId) hashes.add(identifier.hash);

  const report: VendorErasureReport = { warehouseContactsRemoved: removed.length, contactsRemoved: 0, organizations: 0, notified: 0 };
  // Only the parts the copy index names: the cost follows the person's copies, not what the deployment stores.
  const byOrganization = new Map<string, StoredPart[]>();
  for (const key of await deps.copies.partsHolding(hashes)) {
    const owner = objectKeys.attemptOf(key);
    if (!owner) continue;
    if (!byOrganization.has(owner.organizationId)) byOrganization.set(owner.organizationId, []);
    byOrganization.get(owner.organizationId)!.push({ campaignId: owner.campaignId, key });
  }
  const matches = new DigestSet(hashes);
  for (const [organizationId, parts] of [...byOrganization].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const campaignsOfContact = new Map<string, Set<string>>();
    const erased = await eraseParts(deps, organizationId, parts, matches, campaignsOfContact);
    if (erased.contactsRemoved === 0) continue;
    report.organizations++;
    report.contactsRemoved += erased.contactsRemoved;
    for (const [contactId, campaignIds] of [...campaignsOfContact].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (await deps.contactErased(organizationId, { contactId, identifiers: [...identifiers], campaignIds: [...campaignIds].sort() }))
        report.notified++;
    }
  }
  return report;
}
