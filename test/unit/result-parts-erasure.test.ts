/**
 * An erasure rewrites stored result parts without a person (docs/privacy.md
 * "Erasure"): lib/results/parts.ts `withoutContacts`, matching on the
 * identifier digests each contact carries (lib/warehouse/identifiers.ts
 * `DigestSet`). For parts of layout version 3 and of versions 2 (CEP2: cells
 * and JSON) and 1 (CEP1: cells only), still read, on generated contacts with
 * formula-shaped, quoted and empty cells: the rewritten part is of version
 * 3, keeps every account (its cells and JSON unchanged), every other contact
 * byte for byte, and holds no digest, cell or JSON of the person.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePart, ResultPartReader, storedContactIdentifiers, withoutContacts } from '../../lib/results/parts';
import { contactDigests, contactHashes, DigestSet } from '../../lib/warehouse/identifiers';
import { asLegacyPart } from '../support/legacy-parts';
import type { EnrichedAccount } from '../../lib/results/csv';
import type { WarehouseContact } from '../../lib/warehouse/schema';
import { missingAccount } from '../../lib/warehouse/schema';

const PERSON = { email: 'zed.erased@example.com', mobilePhone: '+491705550123', linkedinUrl: 'https://linkedin.com/in/zed-erased' };
const isPerson = (c: { email: string | null; mobilePhone: string | null; linkedinUrl: string | null }) =>
  c.email === PERSON.email || c.mobilePhone === PERSON.mobilePhone || c.linkedinUrl === PERSON.linkedinUrl;

/** Cell text that exercises quoting and formula neutralization, or null. */
const cellText = fc.option(
  fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('=SUM(A1)', '+1', '-2', '@x', 'a,b', 'say "hi"', 'line\r\nbreak')),
  { nil: null },
);

const contactArb = (index: number, person: boolean): fc.Arbitrary<WarehouseContact> =>
  fc
    .record({
      firstName: cellText,
      title: cellText,
      email: fc.option(fc.constant(`c${index}@example.org`), { nil: null }),
      directPhone: cellText,
    })
    .map((fields) => ({
      contactId: `contact-${index}`,
      firstName: fields.firstName,
      lastName: null,
      title: fields.title,
      seniority: 'manager',
      department: null,
      email: person ? PERSON.email : fields.email,
      emailStatus: null,
      mobilePhone: person ? PERSON.mobilePhone : null,
      directPhone: person ? null : fields.directPhone,
      linkedinUrl: person ? PERSON.linkedinUrl : null,
      country: 'DE',
    }));

/** 1-4 accounts of 0-4 contacts each, some of them the person. */
const accountsArb: fc.Arbitrary<EnrichedAccount[]> = fc
  .array(fc.array(fc.boolean(), { maxLength: 4 }), { minLength: 1, maxLength: 4 })
  .chain((shape) => {
    let index = 0;
    return fc.tuple(
      ...shape.map((persons, a) =>
        fc.tuple(cellText, ...persons.map((person) => contactArb(index++, person))).map(([name, ...contacts]) => ({
          ...missingAccount(`account-${a}`),
          name,
          domain: `a${a}.example`,
          industry: null,
          employeeCount: 10,
          country: 'DE',
          contacts,
        })),
      ),
    );
  });

/** The person's identifier hashes, as an erasure holds them. */
const PERSON_HASHES = new DigestSet(contactHashes({ contactId: null, directPhone: null, ...PERSON }));
/** The person's digests as a part would store them. */
const PERSON_DIGESTS = contactDigests({ contactId: null, directPhone: null, ...PERSON });

/** The part in layout `version` (3: as written now). */
const inVersion = (part: Buffer, version: 1 | 2 | 3) => (version === 3 ? part : asLegacyPart(part, version));

/** What a part holds, account by account: cells and JSON of the account and of each contact. */
function contents(part: Uint8Array) {
  const reader = new ResultPartReader(part);
  const accounts: { cells: string; json: string; contacts: { flags: number; digests: string; cells: string; json: string }[] }[] = [];
  while (reader.nextAccount()) {
    const contacts: { flags: number; digests: string; cells: string; json: string }[] = [];
    while (reader.nextContact())
      contacts.push({
        flags: reader.contactFlags,
        digests: reader.bytes.toString('hex', reader.contactDigestsStart, reader.contactDigestsEnd),
        cells: reader.bytes.toString('utf8', reader.contactStart, reader.contactEnd),
        json: reader.bytes.toString('utf8', reader.contactJsonStart, reader.contactJsonEnd),
      });
    accounts.push({
      cells: reader.bytes.toString('utf8', reader.accountStart, reader.accountEnd),
      json: reader.bytes.toString('utf8', reader.accountJsonStart, reader.accountJsonEnd),
      contacts,
    });
  }
  return accounts;
}

describe('withoutContacts (an erasure rewriting stored result parts)', () => {
  for (const version of [3, 2, 1] as const) {
    it(`removes the person's digests, cells and JSON from a version ${version} part and keeps everything else`, () => {
      fc.assert(
        fc.property(accountsArb, (accounts) => {
          const original = inVersion(encodePart(accounts), version);
          const persons = accounts.flatMap((a) => a.contacts).filter(isPerson).length;
          const { bytes, removed } = withoutContacts(
            original,
            (reader) => !PERSON_HASHES.hasAny(reader.bytes, reader.contactDigestsStart, reader.contactDigestsEnd),
          );
          expect(removed).toBe(persons);
          const before = contents(original);
          const after = contents(bytes);
          // A part of an older version is read re-laid as version 3: what a rewrite writes.
          expect(bytes.subarray(0, 4).toString('latin1')).toBe('CEP3');
          // Every account stays with its cells and JSON; each keeps exactly its other contacts, in the stored order.
          expect(after).toEqual(
            before.map((account) => ({ ...account, contacts: account.contacts.filter((c) => !c.cells.includes(PERSON.email)) })),
          );
          const text = Buffer.from(bytes).toString('utf8');
          for (const value of Object.values(PERSON)) expect(text.includes(value)).toBe(false);
          if (persons > 0) for (const digest of PERSON_DIGESTS) expect(bytes.includes(digest)).toBe(false);
          if (persons === 0 && version === 3) expect(bytes.equals(original)).toBe(true);
        }),
        { numRuns: 200 },
      );
    });
  }

  it('reads the same identifiers and digests from a contact of every version (a raw value starting with a quote aside: version 1 has cells only)', () => {
    fc.assert(
      fc.property(accountsArb, (accounts) => {
        fc.pre(accounts.every((a) => a.contacts.every((c) => !c.directPhone?.startsWith("'"))));
        const read = (part: Buffer) => {
          const reader = new ResultPartReader(part);
          const out: unknown[] = [];
          while (reader.nextAccount())
            while (reader.nextContact())
              out.push({
                ...storedContactIdentifiers(reader),
                digests: reader.bytes.toString('hex', reader.contactDigestsStart, reader.contactDigestsEnd),
              });
          return out;
        };
        const v3 = read(encodePart(accounts));
        expect(read(asLegacyPart(encodePart(accounts), 2))).toEqual(v3);
        expect(read(asLegacyPart(encodePart(accounts), 1))).toEqual(v3);
        // Each stored contact carries the digests of its own identifiers (lib/warehouse/identifiers.ts), nothing else.
        const byId = new Map(accounts.flatMap((a) => a.contacts).map((c) => [c.contactId, c]));
        expect(v3).toHaveLength(byId.size);
        for (const stored of v3 as { contactId: string; digests: string }[])
          expect(stored.digests).toBe(Buffer.concat(contactDigests(byId.get(stored.contactId)!)).toString('hex'));
      }),
      { numRuns: 200 },
    );
  });
});
