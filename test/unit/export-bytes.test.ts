/**
 * The export file is byte-identical to what the export wrote before result
 * parts held encoded rows (issue #13): for every filter combination
 * (hasMobilePhone × hasEmail × maxContactsPerAccount undefined/0/1/3), the
 * bytes built from parts written by encodePart (lib/results/parts.ts)
 * through csvChunks (lib/exports/rows.ts) equal those of the old encoder
 * (test/support/export-oracle.ts: JSON lines, readline, JSON.parse,
 * accountRows, csv-stringify), on generated data: realistic accounts from
 * faker, and adversarial ones from fast-check with formula-shaped cells
 * (=, +, -, @, tab, CR), E.164 and non-E.164 phones, BOMs, CR, LF and CRLF,
 * quotes, commas, edge spaces (Unicode ones too), lone surrogates, emoji and
 * null fields.
 */
import { faker } from '@faker-js/faker';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePart, ResultPartFormatError, ResultPartReader } from '../../lib/results/parts';
import type { EnrichedAccount } from '../../lib/results/csv';
import { csvChunks, type ExportCounts } from '../../lib/exports/rows';
import { deliverable } from '../../lib/results/deliverable';
import { prefetchedParts } from '../../lib/exports/prefetch';
import type { ContactSelection } from '../../lib/results/csv';
import { missingAccount, blankContact, type WarehouseContact } from '../../lib/warehouse/schema';
import { ACCOUNT_COLUMNS, CONTACT_COLUMNS, encodedCells, oracleExport } from '../support/export-oracle';

const ENRICHED_AT = '2026-11-23T17:44:51.123Z';
const SENIORITY = ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown'];

/** Every filter combination of the brief: 2 × 2 × 4. */
const SELECTIONS: ContactSelection[] = [false, true].flatMap((hasMobilePhone) =>
  [false, true].flatMap((hasEmail) =>
    [undefined, 0, 1, 3].map((maxContactsPerAccount) => ({ hasMobilePhone, hasEmail, maxContactsPerAccount })),
  ),
);
const label = (s: ContactSelection) => `hasMobilePhone=${s.hasMobilePhone} hasEmail=${s.hasEmail} max=${s.maxContactsPerAccount}`;

/** The new path: parts encoded as the workflow writes them, then the export's chunks, concatenated. */
async function newExport(
  parts: readonly (readonly EnrichedAccount[])[],
  selection: ContactSelection,
  enrichedAt = ENRICHED_AT,
  chunkBytes?: number,
) {
  const counts: ExportCounts = { accounts: 0, contacts: 0, rows: 0 };
  const chunks: Buffer[] = [];
  for await (const chunk of csvChunks(
    parts.map((part) => encodePart(part)),
    deliverable(selection),
    enrichedAt,
    counts,
    chunkBytes,
  ))
    chunks.push(chunk);
  return { bytes: Buffer.concat(chunks), counts, chunks };
}

/** Asserts the new bytes and counts equal the oracle's; shows the first differing bytes on failure. */
async function expectSameBytes(
  parts: readonly (readonly EnrichedAccount[])[],
  selection: ContactSelection,
  enrichedAt = ENRICHED_AT,
  chunkBytes?: number,
) {
  const [expected, actual] = await Promise.all([
    oracleExport(parts, selection, enrichedAt),
    newExport(parts, selection, enrichedAt, chunkBytes),
  ]);
  if (!actual.bytes.equals(expected.bytes)) {
    let at = 0;
    while (at < expected.bytes.length && actual.bytes[at] === expected.bytes[at]) at++;
    const around = (b: Buffer) => JSON.stringify(b.subarray(Math.max(0, at - 80), at + 80).toString('utf8'));
    expect.fail(
      `first difference at byte ${at} (${label(selection)}):\n expected ${around(expected.bytes)}\n actual   ${around(actual.bytes)}`,
    );
  }
  expect({ accounts: actual.counts.accounts, contacts: actual.counts.contacts }).toEqual({
    accounts: expected.accounts,
    contacts: expected.contacts,
  });
  return actual;
}

// ---------------------------------------------------------------------------
// Realistic data (faker, seeded)
// ---------------------------------------------------------------------------

/** Realistic accounts; about one cell in eight replaced by a hostile or empty value. */
function fakerAccounts(count: number, seed: number): EnrichedAccount[] {
  faker.seed(seed);
  const hostile = () =>
    faker.helpers.arrayElement([
      `=HYPERLINK("http://evil.example","${faker.word.sample()}")`,
      `+${faker.string.numeric(11)}`,
      `-${faker.number.int(99)}+1`,
      `@SUM(A1:A${faker.number.int(9)})`,
      `\t${faker.word.sample()}`,
      `\r${faker.word.sample()}`,
      `${faker.company.name()}, Inc.`,
      `"${faker.word.sample()}" ${faker.word.sample()}`,
      `${faker.word.sample()}\r\n${faker.word.sample()}`,
      ` ${faker.word.sample()} `,
      '\uFEFF' + faker.word.sample(),
      '',
      null,
    ]);
  const maybe = (value: string) => (faker.number.int(7) === 0 ? hostile() : value);
  const phone = () =>
    faker.helpers.arrayElement([
      `+1${faker.string.numeric({ length: 10, exclude: ['0'] })}`, // E.164
      faker.phone.number({ style: 'international' }),
      faker.phone.number({ style: 'national' }),
      `+${faker.string.numeric(1)} ${faker.string.numeric(3)} ${faker.string.numeric(4)}`,
      '',
      null,
      null,
    ]);
  return Array.from({ length: count }, (_, i) => {
    const company = faker.company.name();
    return {
      ...missingAccount(`acc_${seed}_${i}`),
      name: maybe(company),
      domain: maybe(faker.internet.domainName()),
      industry: faker.helpers.arrayElement([faker.commerce.department(), null, 'Software, SaaS']),
      employeeCount: faker.helpers.arrayElement([faker.number.int({ min: 0, max: 250_000 }), 0, null]),
      country: faker.helpers.arrayElement([faker.location.countryCode(), null, 'Côte d’Ivoire']),
      contacts: Array.from({ length: faker.number.int(12) }, (_, j): WarehouseContact => {
        const firstName = faker.person.firstName();
        const lastName = faker.person.lastName();
        return {
          ...blankContact(`ct_${seed}_${i}_${faker.string.alphanumeric(4)}_${j}`),
          firstName: maybe(firstName),
          lastName: maybe(lastName),
          title: maybe(faker.person.jobTitle()),
          seniority: faker.helpers.arrayElement([...SENIORITY, null, 'intern', '']),
          department: maybe(faker.person.jobArea()),
          email: faker.helpers.arrayElement([faker.internet.email({ firstName, lastName }), null, '', '=x@evil.example']),
          emailStatus: faker.helpers.arrayElement(['valid', 'risky', 'invalid', null]),
          mobilePhone: phone(),
          directPhone: phone(),
          linkedinUrl: maybe(`https://www.linkedin.com/in/${faker.internet.username()}`),
          country: faker.helpers.arrayElement([faker.location.countryCode(), null, '+4917012345678']),
        };
      }),
    };
  });
}

/** Splits accounts into parts of `size` (the workflow writes one part per batch). */
const partsOf = <T>(list: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size));

describe('export bytes: realistic accounts (faker)', () => {
  const accounts = fakerAccounts(400, 13);
  const parts = partsOf(accounts, 150);

  it.each(SELECTIONS.map((s) => [label(s), s] as const))('identical to the old encoder: %s', async (_label, selection) => {
    await expectSameBytes(parts, selection);
  });

  it('identical whatever the chunk size: rows split across chunks are whole once concatenated', async () => {
    const small = await expectSameBytes(parts, { hasMobilePhone: false, hasEmail: false }, ENRICHED_AT, 97);
    expect(small.chunks.length).toBeGreaterThan(100);
    for (const chunk of small.chunks.slice(0, -1)) expect(chunk.length).toBe(97);
  });
});

// ---------------------------------------------------------------------------
// Adversarial data (fast-check)
// ---------------------------------------------------------------------------

/** Pieces that exercise every rule: formula starts, quoting triggers, edge spaces, BOM, surrogates. */
const FRAGMENTS = [
  '=',
  '+',
  '-',
  '@',
  '\t',
  '\r',
  '\n',
  '\r\n',
  '"',
  '""',
  ',',
  ';',
  ' ',
  '\u00A0',
  '\u2028',
  '\u2029',
  '\u0085',
  '\u3000',
  '\uFEFF',
  "'",
  'a',
  'Z',
  '0',
  '1',
  '9',
  'é',
  'ß',
  '日本',
  '😀',
  '\uD800',
  '\uDC00',
  'x y',
  '=1+1',
  '+15551234567',
  '\\',
  '\u0000',
];
const tricky = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 6 }).map((pieces) => pieces.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);
const text = fc.option(tricky, { nil: null });
const phone = fc.option(
  fc.oneof(
    fc.stringMatching(/^\+[1-9][0-9]{6,14}$/), // E.164: written as it is in a phone column
    fc.stringMatching(/^\+[0-9]{0,17}$/), // too short, too long or a leading zero: prefixed
    fc.constantFrom('+1 555 0100', '+1-555-0100', '+15551234567 ', ' +15551234567', '+15551234567\r\n=1+1', '-15551234567', '5550100', ''),
    tricky,
  ),
  { nil: null },
);
const contact = fc.record({
  contactId: fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9_]{1,6}$/),
    tricky.filter((s) => s.length > 0),
  ),
  firstName: text,
  lastName: text,
  title: text,
  seniority: fc.constantFrom<string | null>(...SENIORITY, null, 'intern', 'C_SUITE', '', '=vp'),
  department: text,
  email: fc.option(fc.oneof(fc.constantFrom('', 'a@b.example', '=x@y.example', ' a@b.example'), tricky), { nil: null }),
  emailStatus: text,
  mobilePhone: phone,
  directPhone: phone,
  linkedinUrl: text,
  country: phone,
});
const account = fc
  .record({
    accountId: fc.oneof(
      fc.stringMatching(/^acc_[a-z0-9]{1,6}$/),
      tricky.filter((s) => s.length > 0),
    ),
    name: text,
    domain: text,
    industry: text,
    employeeCount: fc.option(fc.oneof(fc.nat({ max: 1_000_000 }), fc.constant(0), fc.constant(Number.MAX_SAFE_INTEGER)), { nil: null }),
    country: phone,
    contacts: fc.uniqueArray(contact, { selector: (c) => c.contactId, maxLength: 8 }),
  })
  .map((fields) => ({ ...missingAccount(fields.accountId), ...fields }));
const campaign = fc
  .array(fc.array(account, { minLength: 0, maxLength: 6 }), { minLength: 1, maxLength: 4 })
  .filter((parts) => parts.some((part) => part.length > 0));

describe('export bytes: adversarial accounts (fast-check)', () => {
  it.each(SELECTIONS.map((s) => [label(s), s] as const))('identical to the old encoder: %s', async (_label, selection) => {
    await fc.assert(
      fc.asyncProperty(campaign, fc.integer({ min: 1, max: 300 }), async (parts, chunkBytes) => {
        await expectSameBytes(parts, selection, ENRICHED_AT, chunkBytes);
      }),
      { numRuns: 150 },
    );
  });

  it('identical for any completion time, extended years included (the last cell follows the same rule)', async () => {
    await fc.assert(
      fc.asyncProperty(campaign, fc.date({ noInvalidDate: true }), async (parts, at) => {
        await expectSameBytes(parts, { hasMobilePhone: true, hasEmail: false, maxContactsPerAccount: 1 }, at.toISOString());
      }),
      { numRuns: 100 },
    );
  });
});

describe('result part layout', () => {
  it('reads back each account with its contacts best first, their flags and the bytes the CSV holds', () => {
    const part = encodePart([
      {
        ...missingAccount('acc_1'),
        name: 'Acme, Inc.',
        domain: null,
        industry: '=1+1',
        employeeCount: 0,
        country: 'US',
        contacts: [
          {
            ...blankContact('b'),
            firstName: 'Bo',
            seniority: 'vp',
            email: 'b@acme.example',
          },
          {
            ...blankContact('a'),
            firstName: ' Al',
            seniority: 'c_suite',
            mobilePhone: '+15551234567',
            directPhone: '+1 555',
          },
        ],
      },
      { ...missingAccount('acc_2'), name: null, domain: null, industry: null, employeeCount: null, country: null, contacts: [] },
    ]);
    const reader = new ResultPartReader(part);
    const text = (start: number, end: number) => reader.bytes.toString('utf8', start, end);
    expect(reader.nextAccount()).toBe(true);
    // Each cell as the file writes it (quoted, prefixed) and followed by its comma, by column name.
    expect(text(reader.accountStart, reader.accountEnd)).toBe(
      encodedCells(ACCOUNT_COLUMNS, {
        account_id: 'acc_1',
        account_name: '"Acme, Inc."',
        account_industry: "'=1+1",
        account_employee_count: '0',
        account_country: 'US',
      }),
    );
    expect(reader.nextContact()).toBe(true);
    expect([reader.contactFlags, text(reader.contactStart, reader.contactEnd)]).toEqual([
      1,
      encodedCells(CONTACT_COLUMNS, {
        contact_id: 'a',
        first_name: '" Al"',
        seniority: 'c_suite',
        mobile_phone: '+15551234567',
        direct_phone: "'+1 555",
      }),
    ]);
    expect(reader.nextContact()).toBe(true);
    expect([reader.contactFlags, text(reader.contactStart, reader.contactEnd)]).toEqual([
      2,
      encodedCells(CONTACT_COLUMNS, { contact_id: 'b', first_name: 'Bo', seniority: 'vp', email: 'b@acme.example' }),
    ]);
    expect(reader.nextContact()).toBe(false);
    expect(reader.nextAccount()).toBe(true);
    expect(text(reader.accountStart, reader.accountEnd)).toBe(encodedCells(ACCOUNT_COLUMNS, { account_id: 'acc_2' }));
    expect(reader.nextContact()).toBe(false);
    expect(reader.nextAccount()).toBe(false);
  });

  it('skips the contacts not read when moving to the next account (the cap)', () => {
    const contacts = ['c1', 'c2', 'c3'].map((contactId) => ({
      ...blankContact(contactId),
    }));
    const reader = new ResultPartReader(
      encodePart([
        { ...missingAccount('x'), name: null, domain: null, industry: null, employeeCount: null, country: null, contacts },
        { ...missingAccount('y'), name: null, domain: null, industry: null, employeeCount: null, country: null, contacts },
      ]),
    );
    expect(reader.nextAccount() && reader.nextContact()).toBe(true);
    expect(reader.nextAccount()).toBe(true);
    expect(reader.bytes.toString('utf8', reader.accountStart, reader.accountEnd)).toBe(encodedCells(ACCOUNT_COLUMNS, { account_id: 'y' }));
  });

  it('refuses bytes of another layout (an old JSON-lines part) and a part cut short', () => {
    expect(() => new ResultPartReader(Buffer.from('{"accountId":"acc_1"}'))).toThrow(ResultPartFormatError);
    const part = encodePart(fakerAccounts(3, 1));
    const cut = new ResultPartReader(part.subarray(0, part.length - 3));
    expect(() => {
      while (cut.nextAccount()) while (cut.nextContact());
    }).toThrow(ResultPartFormatError);
  });

  it('encodes the same accounts to the same bytes (a rerun batch rewrites its part identically)', () => {
    const accounts = fakerAccounts(50, 7);
    expect(encodePart(accounts).equals(encodePart(structuredClone(accounts)))).toBe(true);
  });
});

describe('line separators inside cells', () => {
  it("an account holding U+2028 or U+2029 exports (the old readline reader split its JSON line and failed), with the old encoder's bytes", async () => {
    const accounts = fakerAccounts(4, 3);
    accounts[1]!.name = 'Acme\u2028Labs';
    accounts[2]!.contacts.push({
      ...accounts[0]!.contacts[0]!,
      contactId: 'ct_ls',
      title: 'Head\u2029of Sales',
      mobilePhone: '+15551234567',
    });
    await expectSameBytes([accounts], { hasMobilePhone: false, hasEmail: false });
  });
});

describe('prefetchedParts', () => {
  it('hands out every part in order with at most `ahead` reads started beyond the current one; a failed read surfaces at its turn', async () => {
    const keys = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
    const started: string[] = [];
    const store = {
      readPart: async (key: string) => {
        started.push(key);
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (key === 'p4') throw new Error('GetObject failed');
        return Buffer.from(key);
      },
    };
    const seen: string[] = [];
    const parts = prefetchedParts(store, keys, 2);
    await expect(
      (async () => {
        for await (const bytes of parts) {
          seen.push(Buffer.from(bytes).toString());
          // While part i is handed out, parts up to i + 2 have been asked for, never more.
          expect(started.length).toBeLessThanOrEqual(seen.length + 2);
        }
      })(),
    ).rejects.toThrow('GetObject failed');
    expect(seen).toEqual(['p0', 'p1', 'p2', 'p3']);
  });
});
