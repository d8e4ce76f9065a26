/**
 * FindContacts hashes each contact's identifiers once (lib/enrichment/steps.ts): with a policy that withholds
 * something, the suppression check (lib/results/deliverable.ts `deliverableContacts`) computes each contact's
 * digests, and the part that stores the kept contacts (lib/results/parts.ts `encodePart`) takes them from it instead
 * of hashing again. The part is byte-identical to one that hashes by itself, and it carries the kept contacts'
 * digests, so the copy index and later suppression checks read the same bytes.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';

/** Contacts hashed (calls of lib/warehouse/identifiers.ts `writeContactDigests`, the one hashing of a contact). */
const hashed = vi.hoisted(() => ({ calls: 0 }));
vi.mock('../../lib/warehouse/identifiers', async (original) => {
  const actual = await original<typeof import('../../lib/warehouse/identifiers')>();
  return {
    ...actual,
    writeContactDigests: (...args: Parameters<typeof actual.writeContactDigests>) => {
      hashed.calls++;
      return actual.writeContactDigests(...args);
    },
  };
});

const { DIGEST_BYTES } = await import('../../lib/warehouse/identifiers');
const { deliverableContacts } = await import('../../lib/results/deliverable');
const { encodePart, ResultPartReader } = await import('../../lib/results/parts');
const { blankContact, missingAccount } = await import('../../lib/warehouse/schema');
type EnrichedAccount = import('../../lib/results/csv').EnrichedAccount;
type ContactIdentifierFields = import('../../lib/results/csv').ContactIdentifierFields;

/** Accounts of 0–12 contacts, identifiers present or not, E.164 or not. */
const accountsArb = fc.array(
  fc.record({
    accountId: fc.stringMatching(/^acc_[a-z0-9]{6}$/),
    contacts: fc.array(
      fc.record({
        contactId: fc.stringMatching(/^con_[a-z0-9]{8}$/),
        email: fc.option(fc.emailAddress(), { nil: null }),
        mobilePhone: fc.option(fc.constantFrom('+14155550100', '+447700900123', '0700 900 123'), { nil: null }),
        directPhone: fc.option(fc.constantFrom('+14155550199', '(415) 555-0199'), { nil: null }),
        linkedinUrl: fc.option(fc.webUrl(), { nil: null }),
        seniority: fc.constantFrom('c_suite', 'vp', 'manager', 'unknown'),
      }),
      { maxLength: 12 },
    ),
  }),
  { minLength: 1, maxLength: 20 },
);

/** The accounts as FindContacts holds them: every declared field (lib/warehouse/schema.ts blanks), the generated ones set. */
const enriched = (accounts: typeof accountsArb) =>
  accounts.map((list) =>
    list.map((account): EnrichedAccount => ({
      ...missingAccount(account.accountId),
      name: 'Acme',
      contacts: account.contacts.map((contact) => ({ ...blankContact(contact.contactId), ...contact })),
    })),
  );

/** Withholds every contact whose first digest's first byte is even: about half of them. */
const withholdEven = { withholds: (digests: Buffer, start: number, end: number) => end > start && digests[start]! % 2 === 0 };

describe('a contact is hashed once on its way into a part', () => {
  it('the part takes the suppression check’s digests: one hash per contact, the same bytes as hashing again', () => {
    fc.assert(
      fc.property(enriched(accountsArb), (accounts) => {
        hashed.calls = 0;
        const digestsOf = new Map<ContactIdentifierFields, Buffer>();
        const kept = accounts.map((account) => ({ ...account, contacts: deliverableContacts(account.contacts, withholdEven, digestsOf) }));
        const contacts = accounts.reduce((sum, account) => sum + account.contacts.length, 0);
        const part = encodePart(kept, undefined, digestsOf);
        // Each contact hashed by the check alone; the part hashed none.
        expect(hashed.calls).toBe(contacts);
        hashed.calls = 0;
        const hashedAgain = encodePart(kept);
        const keptContacts = kept.reduce((sum, account) => sum + account.contacts.length, 0);
        expect(hashed.calls).toBe(keptContacts);
        expect(part.equals(hashedAgain)).toBe(true);
        // The stored digests are the kept contacts' own, and none of them is withheld.
        const reader = new ResultPartReader(part);
        let read = 0;
        while (reader.nextAccount())
          while (reader.nextContact()) {
            read++;
            expect((reader.contactDigestsEnd - reader.contactDigestsStart) % DIGEST_BYTES).toBe(0);
            expect(withholdEven.withholds(reader.bytes, reader.contactDigestsStart, reader.contactDigestsEnd)).toBe(false);
          }
        expect(read).toBe(keptContacts);
      }),
      { numRuns: 60 },
    );
  });

  it('without a policy that withholds, nothing is hashed before the part, and the part hashes each contact once', () => {
    fc.assert(
      fc.property(enriched(accountsArb), (accounts) => {
        hashed.calls = 0;
        const digestsOf = new Map<ContactIdentifierFields, Buffer>();
        const kept = accounts.map((account) => ({ ...account, contacts: deliverableContacts(account.contacts, {}, digestsOf) }));
        expect(hashed.calls).toBe(0);
        expect(digestsOf.size).toBe(0);
        encodePart(kept, undefined, digestsOf);
        expect(hashed.calls).toBe(accounts.reduce((sum, account) => sum + account.contacts.length, 0));
      }),
      { numRuns: 30 },
    );
  });
});
