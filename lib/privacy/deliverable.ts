/**
 * Privacy's side of what may be delivered: the {@link DeliveryPolicy} the
 * composition root (lib/root.ts `deliveryPolicy`) gives the one owner of what
 * may be delivered (lib/results/deliverable.ts), which every path that hands
 * contacts to a customer goes through (export, the results page,
 * campaigns/accounts' `contactsFound`, the workflow's FindContacts). A contact
 * matching any suppressed identifier of the organization or of the operator's
 * global list is withheld (docs/privacy.md "Suppressions").
 *
 * The policy is read once per request or batch ({@link suppressionPolicy}: one
 * strongly consistent read of the two compact sets, lib/privacy/store.ts). It
 * compares the identifier digests each stored contact carries
 * (lib/results/parts.ts) with the set; with no suppression in force it has no
 * `withholds` at all. {@link cachedSuppressionPolicies} keeps the policies it
 * built in the process (a Lambda container) by the sets' versions: a request
 * reads only the versions (strongly consistent, so a suppression acknowledged
 * before is seen) and unpacks the sets again only when one changed.
 */
import type { DeliveryPolicy, DeliveryPolicyOf } from '../results/deliverable';
import { DigestSet } from '../warehouse/identifiers';
import { cacheableVersions, type SetVersions, type SuppressionStore } from './store';

/**
 * The policy of a set of set entries (lib/privacy/store.ts `setKey`: the
 * first bytes of each suppressed hash, in hex): withholds a contact when any
 * of its stored identifier digests starts with one; withholds nothing (no
 * `withholds`) when the set is empty. A check reads a 22-bit prefix per
 * digest in a bitmap and compares the rest only on a bitmap hit, as bytes
 * (lib/warehouse/identifiers.ts `DigestSet`): no decoding, no hashing, no
 * string per digest.
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

/** Organizations whose policy a process keeps (each up to a 512 KB filter and its entries: a few MB at most). */
export const CACHED_POLICIES = 8;

/**
 * {@link suppressionPolicy} that keeps the last policies built, by
 * organization and the versions of the two sets it was built from
 * (lib/privacy/store.ts: a token every change of a set replaces in the same
 * write). Each call reads the versions (one strongly consistent BatchGetItem
 * of the two set items, their versions only); when they equal the kept
 * policy's, it is answered as it is, otherwise the sets are read with their
 * versions and the policy built and kept. So a suppression acknowledged
 * before a read takes effect on that read: its write replaced the version. A
 * set written before versions is never taken from the cache.
 * @param store - where the sets live.
 * @param size - organizations kept, least recently used dropped first.
 */
export function cachedSuppressionPolicies(
  store: Pick<SuppressionStore, 'versionedHashSet' | 'setVersions'>,
  size = CACHED_POLICIES,
): DeliveryPolicyOf {
  const kept = new Map<string, { versions: SetVersions; policy: DeliveryPolicy }>();
  const same = (a: SetVersions, b: SetVersions) => a.organization === b.organization && a.global === b.global;
  return async (organizationId) => {
    const held = kept.get(organizationId);
    if (held) {
      const versions = await store.setVersions(organizationId);
      if (cacheableVersions(versions) && same(versions, held.versions)) {
        // Most recently used last.
        kept.delete(organizationId);
        kept.set(organizationId, held);
        return held.policy;
      }
    }
    const { entries, versions } = await store.versionedHashSet(organizationId);
    const policy = policyOf(entries);
    kept.delete(organizationId);
    if (cacheableVersions(versions)) {
      kept.set(organizationId, { versions, policy });
      if (kept.size > size) kept.delete(kept.keys().next().value!);
    }
    return policy;
  };
}
