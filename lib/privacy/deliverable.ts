/**
 * What may be delivered: the one owner every path that hands contacts to a
 * customer goes through (export, campaigns/accounts' `contactsFound`, the
 * workflow's FindContacts, results and stream). A contact matching any
 * suppressed identifier of the organization or of the operator's global list
 * is never delivered (docs/privacy.md "Suppressions").
 *
 * A path reads the organization's filter once ({@link deliveryFilter}: two
 * small GetItems of the compact sets, lib/privacy/store.ts) and asks it per
 * contact. With no suppression in force it answers without hashing anything.
 */
import { decodeContactIdentifiers } from '../results/csv';
import type { ResultPartReader } from '../results/parts';
import { contactHashes, type ContactIdentifiers } from './identifiers';
import { setKey, type SuppressionStore } from './store';

/** The organization's answer to "may this contact be delivered?", read once per batch, page or export. */
export interface DeliveryFilter {
  /** Whether any suppression is in force (false: every contact may be delivered). */
  readonly active: boolean;
  /** Whether a contact (warehouse fields) may be delivered. */
  deliverable(contact: ContactIdentifiers): boolean;
  /** Whether the current contact of a stored result part may be delivered (its encoded cells are read back only when {@link active}). */
  deliverableRow(part: ResultPartReader): boolean;
  /**
   * The inverse of {@link deliverableRow}, present only when {@link active}: the shape of the results branch's
   * `DeliveryPolicy.withhold` (lib/results/deliverable.ts there), so this filter plugs into that owner as it is.
   */
  withhold?: (part: ResultPartReader) => boolean;
}

/** A filter over a set of set keys (lib/privacy/store.ts `setKey`): what {@link deliveryFilter} builds, and what an erasure matches its own hashes with. */
export function filterOf(suppressed: ReadonlySet<string>): DeliveryFilter {
  if (suppressed.size === 0) return { active: false, deliverable: () => true, deliverableRow: () => true };
  const deliverable = (contact: ContactIdentifiers) => !contactHashes(contact).some((hash) => suppressed.has(setKey(hash)));
  const deliverableRow = (part: ResultPartReader) => deliverable(decodeContactIdentifiers(part.bytes, part.contactStart, part.contactEnd));
  return { active: true, deliverable, deliverableRow, withhold: (part) => !deliverableRow(part) };
}

/**
 * The delivery filter of an organization now: its suppressions and the
 * global list's (strongly consistent, so a suppression acknowledged before
 * the read is in it).
 */
export async function deliveryFilter(store: Pick<SuppressionStore, 'hashSet'>, organizationId: string): Promise<DeliveryFilter> {
  return filterOf(await store.hashSet(organizationId));
}
