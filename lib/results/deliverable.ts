/**
 * What may be delivered: the one owner of which stored contacts a customer
 * receives (docs/results.md "What may be delivered"). Every path that hands
 * contacts to a customer (the CSV export, the results page, the results
 * stream) walks a result part with {@link ResultPartReader} and asks a
 * {@link Delivery} for each account's next contact; no delivery path filters
 * contacts by itself.
 *
 * Today the rule is the caller's selection (docs/csv.md: the `hasEmail` and
 * `hasMobilePhone` filters, ORed, then the `maxContactsPerAccount` cap) plus
 * the {@link DeliveryPolicy} the composition root gives: the place where
 * contacts that must never be delivered (privacy suppression) are withheld,
 * before the cap, so a withheld contact never takes a kept contact's place.
 */
import { CONTACT_DIGESTS_MAX_BYTES, DIGEST_BYTES, writeContactDigests } from '../warehouse/identifiers';
import { passesFilters, selectionFlags, type ContactIdentifierFields, type ContactSelection } from './csv';
import type { ResultPartReader } from './parts';

/**
 * Deployment-wide rules on top of a caller's selection, built by the
 * composition root (lib/root.ts) for one organization and one request.
 */
export interface DeliveryPolicy {
  /**
   * Whether a contact must be withheld from every answer, from its identifier
   * digests (SHA-256, 32 bytes each, back to back in `digests[start, end)`,
   * lib/warehouse/identifiers.ts `contactDigests`): a stored contact's are
   * read from its result part as they are (nothing decoded or hashed), a
   * contact not stored yet (the workflow's FindContacts) has them computed.
   * Called for contacts that pass the caller's filters, before the cap.
   * None: nothing is withheld and nothing is looked at.
   */
  withholds?(digests: Buffer, start: number, end: number): boolean;
}

/** The policy that withholds nothing. */
export const DELIVER_ALL: DeliveryPolicy = Object.freeze({});

/**
 * The policy of one organization, for one request (the composition root
 * builds it; privacy loads what it needs here, once per request).
 */
export type DeliveryPolicyOf = (organizationId: string) => Promise<DeliveryPolicy>;

/** {@link DeliveryPolicyOf} that withholds nothing, for any organization. */
export const deliverAll: DeliveryPolicyOf = async () => DELIVER_ALL;

/**
 * The contacts of each account that may be delivered, in the stored order
 * (best first): filters, then the policy's withholding, then the cap.
 * Allocates nothing per contact.
 * @example
 * const delivery = deliverable(selection, policy);
 * while (part.nextAccount()) {
 *   delivery.beginAccount();
 *   while (delivery.nextContact(part)) use(part);
 * }
 */
export class Delivery {
  private readonly wanted: number;
  private readonly cap: number;
  private kept = 0;

  constructor(
    selection: ContactSelection,
    private readonly policy: DeliveryPolicy = DELIVER_ALL,
  ) {
    this.wanted = selectionFlags(selection);
    this.cap = selection.maxContactsPerAccount ?? Number.POSITIVE_INFINITY;
  }

  /** Starts a new account: call after each `part.nextAccount()`. */
  beginAccount(): void {
    this.kept = 0;
  }

  /**
   * Moves `part` to the current account's next deliverable contact.
   * @returns false when the account has no more (or the cap is reached).
   * @throws ResultPartFormatError when the part is cut short.
   */
  nextContact(part: ResultPartReader): boolean {
    if (this.kept >= this.cap) return false;
    while (part.nextContact()) {
      if (!passesFilters(part.contactFlags, this.wanted)) continue;
      if (this.policy.withholds?.(part.bytes, part.contactDigestsStart, part.contactDigestsEnd)) continue;
      this.kept++;
      return true;
    }
    return false;
  }

  /** Contacts delivered for the current account so far. */
  get keptInAccount(): number {
    return this.kept;
  }
}

/**
 * The one way to decide what of the stored results may be delivered.
 * @param selection - the caller's filters and cap (export, results, stream).
 * @param policy - the deployment's rules (privacy); {@link DELIVER_ALL} when none.
 */
export const deliverable = (selection: ContactSelection, policy: DeliveryPolicy = DELIVER_ALL): Delivery => new Delivery(selection, policy);

/**
 * The contacts of `contacts` the policy does not withhold, in order: what a
 * path that holds contacts before they are stored (the workflow's
 * FindContacts) keeps. The same array when the policy withholds nothing.
 * @param digestsOf - where each kept contact's digests (lib/warehouse/identifiers.ts `writeContactDigests`, computed
 *   here to ask the policy: {@link DIGEST_BYTES} each, back to back) are left, so the part that stores the contact
 *   (lib/results/parts.ts `encodePart`) does not hash it again; none: not kept.
 */
export function deliverableContacts<C extends ContactIdentifierFields>(
  contacts: C[],
  policy: DeliveryPolicy = DELIVER_ALL,
  digestsOf?: Map<ContactIdentifierFields, Buffer>,
): C[] {
  if (!policy.withholds) return contacts;
  return contacts.filter((contact) => {
    const bytes = Buffer.allocUnsafe(CONTACT_DIGESTS_MAX_BYTES);
    const digests = bytes.subarray(0, writeContactDigests(contact, bytes, 0) * DIGEST_BYTES);
    if (policy.withholds!(digests, 0, digests.length)) return false;
    digestsOf?.set(contact, digests);
    return true;
  });
}

/**
 * Deliverable contacts of each account of one stored result part, in the
 * part's order, with no selection and no cap: campaigns/accounts'
 * `contactsFound` while the policy withholds something.
 * @throws ResultPartFormatError when `part` is not a result part.
 */
export function deliverableCounts(part: ResultPartReader, policy: DeliveryPolicy = DELIVER_ALL): number[] {
  const delivery = deliverable({ hasEmail: false, hasMobilePhone: false }, policy);
  const counts: number[] = [];
  while (part.nextAccount()) {
    delivery.beginAccount();
    while (delivery.nextContact(part));
    counts.push(delivery.keptInAccount);
  }
  return counts;
}
