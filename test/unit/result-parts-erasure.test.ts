/**
 * An erasure rewrites stored result parts without a person (docs/privacy.md
 * "Erasure"): lib/results/parts.ts `withoutContacts`, matching through
 * `storedContactIdentifiers`. For parts of layout version 2 (CEP2: cells and
 * JSON) and version 1 (CEP1: cells only, still read), on generated contacts
 * with formula-shaped, quoted and empty cells: the rewritten part keeps its
 * layout version, every account (its cells and JSON unchanged), every other
 * contact byte for byte, and holds no cell and no JSON of the person.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePart, ResultPartReader, storedContactIdentifiers, withoutContacts } from '../../lib/results/parts';
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

/** The same part in layout version 1: no JSON fields (what the workflow wrote before version 2). */
function asVersion1(part: Buffer): Buffer {
  const reader = new ResultPartReader(part);
  const pieces: Buffer[] = [Buffer.from('CEP1', 'latin1')];
  while (reader.nextAccount()) {
    const header = Buffer.allocUnsafe(8);
    const cells = reader.bytes.subarray(reader.accountStart, reader.accountEnd);
    pieces.push(header, cells);
    let rest = 4 + cells.length;
    while (reader.nextContact()) {
      const contact = reader.bytes.subarray(reader.contactStart - 5, reader.contactEnd);
      pieces.push(contact);
      rest += contact.length;
    }
    header.writeUInt32LE(rest, 0);
    header.writeUInt32LE(cells.length, 4);
  }
  return Buffer.concat(pieces);
}

/** What a part holds, account by account: cells and JSON of the account and of each contact. */
function contents(part: Uint8Array) {
  const reader = new ResultPartReader(part);
  const accounts: { cells: string; json: string; contacts: { flags: number; cells: string; json: string }[] }[] = [];
  while (reader.nextAccount()) {
    const contacts: { flags: number; cells: string; json: string }[] = [];
    while (reader.nextContact())
      contacts.push({
        flags: reader.contactFlags,
        cells: reader.bytes.toString('utf8', reader.contactStart, reader.contactEnd),
        json: reader.bytes.toString('utf8', reader.contactJsonStart, reader.contactJsonEnd),
      });
    accounts.push({
      cells: reader.bytes.toString('utf8', reader.accountStart, reader.accountEnd),
      json: reader.bytes.toString('utf8', reader.accountJsonStart, reader.accountJsonEnd),
      contacts,
    });
  }
  return { hasJson: reader.hasJson, accounts };
}

describe('withoutContacts (an erasure rewriting stored result parts)', () => {
  for (const version of [2, 1] as const) {
    it(`removes the person's cells${version === 2 ? ' and JSON' : ''} from a version ${version} part and keeps everything else`, () => {
      fc.assert(
        fc.property(accountsArb, (accounts) => {
          const original = version === 2 ? encodePart(accounts) : asVersion1(encodePart(accounts));
          const persons = accounts.flatMap((a) => a.contacts).filter(isPerson).length;
          const { bytes, removed } = withoutContacts(original, (reader) => !isPerson(storedContactIdentifiers(reader)));
          expect(removed).toBe(persons);
          const before = contents(original);
          const after = contents(bytes);
          expect(after.hasJson).toBe(version === 2);
          expect(bytes.subarray(0, 4).toString('latin1')).toBe(`CEP${version}`);
          // Every account stays with its cells and JSON; each keeps exactly its other contacts, in the stored order.
          expect(after.accounts).toEqual(
            before.accounts.map((account) => ({ ...account, contacts: account.contacts.filter((c) => !c.cells.includes(PERSON.email)) })),
          );
          const text = Buffer.from(bytes).toString('utf8');
          for (const value of Object.values(PERSON)) expect(text.includes(value)).toBe(false);
          if (persons === 0) expect(bytes.equals(original)).toBe(true);
        }),
        { numRuns: 200 },
      );
    });
  }

  it('reads the same identifiers from a contact of either version (a raw value starting with a quote aside: only version 2 keeps it exactly)', () => {
    fc.assert(
      fc.property(accountsArb, (accounts) => {
        fc.pre(accounts.every((a) => a.contacts.every((c) => !c.directPhone?.startsWith("'"))));
        const read = (part: Buffer) => {
          const reader = new ResultPartReader(part);
          const out: unknown[] = [];
          while (reader.nextAccount()) while (reader.nextContact()) out.push(storedContactIdentifiers(reader));
          return out;
        };
        const v2 = read(encodePart(accounts));
        expect(read(asVersion1(encodePart(accounts)))).toEqual(v2);
        expect(v2).toHaveLength(accounts.reduce((n, a) => n + a.contacts.length, 0));
      }),
      { numRuns: 200 },
    );
  });
});
