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
 * small GetItems of the compact sets, lib/privacy/store.ts). It compares the
 * identifier digests each stored contact carries (lib/results/parts.ts) with
 * the set; with no suppression in force it has no `withholds` at all.
 */
import type { DeliveryPolicy } from '../results/deliverable';
import { DigestSet } from '../warehouse/identifiers';
import type { SuppressionStore } from './store';

/**
 * The policy of a set of set entries (lib/privacy/store.ts `setKey`: the
 * first bytes of each suppressed hash, in hex): withholds a contact when any
 * of its stored identifier digests starts with one; withholds nothing (no
 * `withholds`) when the set is empty. A check reads a 32-bit prefix per
 * digest and compares the rest only on a prefix hit (lib/warehouse/identifiers.ts
 * `DigestSet`): no decoding, no hashing.
 */
export function policyOf(suppressed: ReadonlySet<string>): DeliveryPolicy {
  if (suppressed.size === 0) return {};
  const set = new DigestSet(suppressed);
  return { withholds: (digests, start, end) => set.hasAny(digests, start, end) };
}

/**
 * The delivery policy of an organization now: its suppressions and the
 * global list's (strongly consistent, so a suppression acknowledged before
 * the read is in it).
 */
export async function suppressionPolicy(store: Pick<SuppressionStore, 'hashSet'>, organizationId: string): Promise<DeliveryPolicy> {
  return policyOf(await store.hashSet(organizationId));
}
