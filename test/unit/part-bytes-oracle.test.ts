/**
 * The result part writer (lib/results/parts.ts `encodePart`, the workflow's FindContacts) writes exactly the bytes of
 * the layout its module comment states, as a plain encoder of that layout writes them from the same rules: cells
 * (lib/results/csv.ts `encodeCells`), JSON texts (each contact's object stringified whole), digests (lib/warehouse/identifiers.ts
 * `contactDigests`), contacts best first. The writer hashes straight into the part and takes the suppression check's
 * digests (lib/results/deliverable.ts `deliverableContacts`); neither may change a byte (docs/data-model.md
 * "Result parts"). Contact values: unicode, CSV-hostile (formulas, quotes, commas, line breaks, edge spaces),
 * missing fields, emails and phones that digest and phones that do not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_COLUMN_FIELDS,
  CONTACT_COLUMN_FIELDS,
  contactFlags,
  encodeCells,
  orderContacts,
  type ContactIdentifierFields,
  type EnrichedAccount,
} from '../../lib/results/csv';
import { deliverableContacts } from '../../lib/results/deliverable';
import { RESULT_CONTACT_FIELDS, resultAccountJson } from '../../lib/results/json';
import { CURRENT_FIELDS, encodePart, headerOf } from '../../lib/results/parts';
import { contactDigests } from '../../lib/warehouse/identifiers';
import { blankContact, missingAccount } from '../../lib/warehouse/schema';

const u32 = (n: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(n);
  return bytes;
};
const sized = (text: string) => Buffer.concat([u32(Buffer.byteLength(text)), Buffer.from(text, 'utf8')]);

/** Layout 4, piece by piece: `"CEP4" u32 header-bytes header account*` (module comment of lib/results/parts.ts). */
function oraclePart(accounts: readonly EnrichedAccount[]): Buffer {
  const header = Buffer.from(JSON.stringify(headerOf(CURRENT_FIELDS)), 'utf8');
  const pieces: Buffer[] = [Buffer.from('CEP4', 'latin1'), u32(header.length), header];
  for (const account of accounts) {
    const body: Buffer[] = [sized(encodeCells(account, ACCOUNT_COLUMN_FIELDS)), sized(resultAccountJson(account))];
    for (const contact of orderContacts(account.contacts)) {
      const digests = contactDigests(contact);
      body.push(Buffer.from([contactFlags(contact), digests.length]), ...digests);
      // The contact's JSON: its object as the results show it, stringified whole.
      const json = JSON.stringify(Object.fromEntries(RESULT_CONTACT_FIELDS.map((field) => [field.json, contact[field.key] ?? null])));
      body.push(sized(encodeCells(contact, CONTACT_COLUMN_FIELDS)), sized(json));
    }
    const rest = Buffer.concat(body);
    pieces.push(u32(rest.length), rest);
  }
  return Buffer.concat(pieces);
}

/** A text a cell or a JSON value can hold: unicode (lone surrogates too), CSV-hostile, empty. */
const text = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('=1+1', '+15551234567', '-2', '@SUM(A1)', '\tx', '\rx', 'a,b', 'say "x"', ' edge', 'edge ', 'a\r\nb', 'é', ''),
);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const contactArb = fc.record(
  {
    contactId: fc.oneof(fc.stringMatching(/^con_[a-z0-9]{6}$/), text),
    firstName: optional(text),
    lastName: optional(text),
    title: optional(text),
    seniority: optional(fc.constantFrom('c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown', 'other')),
    department: optional(text),
    email: optional(fc.oneof(fc.emailAddress(), fc.constantFrom(' Ann@Example.COM ', '   '), text)),
    emailStatus: optional(fc.constantFrom('verified', 'unverified')),
    mobilePhone: optional(fc.oneof(fc.constantFrom('+14155550100', '+1 (415) 555-0100', '0700 900 123', '+0123'), text)),
    directPhone: optional(fc.oneof(fc.constantFrom('+447700900123', '(415) 555-0199'), text)),
    linkedinUrl: optional(fc.oneof(fc.webUrl(), fc.constantFrom('https://www.LinkedIn.com/in/Ann/?x=1', 'http://'), text)),
    country: optional(text),
  },
  // Some fields absent altogether, as an item written before the field existed.
  { requiredKeys: ['contactId'] },
);
const accountsArb = fc.array(
  fc.record({
    accountId: fc.oneof(fc.stringMatching(/^acc_[a-z0-9]{6}$/), text),
    name: optional(text),
    domain: optional(text),
    employeeCount: optional(fc.integer({ min: 0, max: 2_000_000 })),
    contacts: fc.array(contactArb, { maxLength: 12 }),
  }),
  { minLength: 1, maxLength: 12 },
);

/** The accounts as FindContacts holds them: every declared field, the generated ones set (absent ones left absent). */
const enriched = (accounts: fc.Arbitrary<readonly unknown[]>) =>
  (accounts as typeof accountsArb).map((list) =>
    list.map((account): EnrichedAccount => ({
      ...missingAccount(account.accountId),
      ...account,
      contacts: account.contacts.map(
        (contact) => ({ ...blankContact(contact.contactId), ...contact }) as EnrichedAccount['contacts'][number],
      ),
    })),
  );

describe('result part bytes: the writer against a plain encoder of layout 4', () => {
  it('writes the same bytes, hashing each contact into the part itself', () => {
    fc.assert(
      fc.property(enriched(accountsArb), (accounts) => {
        expect(encodePart(accounts).equals(oraclePart(accounts))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('writes the same bytes with the suppression check’s digests, and with contacts whose fields are absent', () => {
    fc.assert(
      fc.property(enriched(accountsArb), fc.boolean(), (accounts, dropFields) => {
        const held = dropFields
          ? accounts.map((account) => ({
              ...account,
              contacts: account.contacts.map(
                ({ contactId, email }) => ({ contactId, email }) as unknown as EnrichedAccount['contacts'][number],
              ),
            }))
          : accounts;
        const digestsOf = new Map<ContactIdentifierFields, Buffer>();
        const withholdFirstByteOdd = {
          withholds: (digests: Buffer, start: number, end: number) => end > start && digests[start]! % 2 === 1,
        };
        const kept = held.map((account) => ({
          ...account,
          contacts: deliverableContacts(account.contacts, withholdFirstByteOdd, digestsOf),
        }));
        expect(encodePart(kept, CURRENT_FIELDS, digestsOf).equals(oraclePart(kept))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
