/**
 * Privacy's side of what may be delivered: the {@link DeliveryPolicy} the
 * composition root (lib/root.ts `deliveryPolicy`) gives the one owner of what
 * may be delivered (lib/results/deliverable.ts), which every path that hands
 * contacts to a customer goes through (export, the results page,
 * campaigns/accounts' `contactsFound`, the workflow's FindContacts). A contact
 * matching any suppressed identifier of the organization or of the operator's
 * global list is withheld (docs/privacy.md "Suppressions").
 *
 * The policy is read once per request or batch ({@link suppressionPolicy}: two
 * small GetItems of the compact sets, lib/privacy/store.ts). With no
 * suppression in force it has no `withhold`, so nothing is hashed or decoded.
 */
import type { DeliveryPolicy } from '../results/deliverable';
import { contactHashes, type ContactIdentifiers } from './identifiers';
import { setKey, type SuppressionStore } from './store';

/**
 * The policy of a set of set keys (lib/privacy/store.ts `setKey`): withholds a
 * contact when any of its identifiers' hashes is in the set; withholds
 * nothing (no `withhold`) when the set is empty.
 */
export function policyOf(suppressed: ReadonlySet<string>): DeliveryPolicy {
  if (suppressed.size === 0) return {};
  return { withhold: (contact: ContactIdentifiers) => contactHashes(contact).some((hash) => suppressed.has(setKey(hash))) };
}

/**
 * The delivery policy of an organization now: its suppressions and the
 * global list's (strongly consistent, so a suppression acknowledged before
 * the read is in it).
 */
export async function suppressionPolicy(store: Pick<SuppressionStore, 'hashSet'>, organizationId: string): Promise<DeliveryPolicy> {
  return policyOf(await store.hashSet(organizationId));
}
