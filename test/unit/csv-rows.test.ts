/**
 * Unit tests of the export file's rows (docs/csv.md), read back from the
 * bytes the export writes (test/support/export-rows.ts): contact order,
 * filters (OR) then the cap, account-only rows, the column catalog and
 * formula-injection neutralizing. Phone cells are kept free of formula
 * characters here: their E.164 exception is tested with its own change.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_COLUMN_FIELDS,
  CONTACT_COLUMN_FIELDS,
  CSV_COLUMNS,
  neutralizeCell,
  orderContacts,
  selectContacts,
  type ContactSelection,
} from '../../lib/results/csv';
import { ACCOUNT_COLUMNS, cellsIn, CONTACT_COLUMNS, rowByColumn, rowOf } from '../support/export-oracle';
import { accountRows } from '../support/export-rows';
import type { EnrichedAccount } from '../../lib/results/csv';
import { missingAccount, blankContact, type WarehouseContact } from '../../lib/warehouse/schema';

const SENIORITY = ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown'];
const ENRICHED_AT = '2025-06-01T10:00:00.000Z';
const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'];

/** A contact with every field null but those given. */
const contact = (contactId: string, fields: Partial<WarehouseContact> = {}): WarehouseContact => ({
  ...blankContact(contactId),
  ...fields,
});

const account = (contacts: WarehouseContact[], fields: Partial<EnrichedAccount> = {}): EnrichedAccount => ({
  ...missingAccount('acc_1'),
  name: 'Acme',
  domain: 'acme.example',
  industry: 'Software',
  employeeCount: 120,
  country: 'US',
  contacts,
  ...fields,
});

/** The cells every row of {@link account} carries, by column (its contact cells empty). */
const ACME_ROW = {
  account_id: 'acc_1',
  account_name: 'Acme',
  account_domain: 'acme.example',
  account_industry: 'Software',
  account_employee_count: '120',
  account_country: 'US',
  enriched_at: ENRICHED_AT,
};

/** Rank of a seniority in docs/csv.md order; anything unrecognized (or null) ranks as `unknown`. */
const rank = (seniority: string | null) => {
  const i = SENIORITY.indexOf(seniority ?? 'unknown');
  return i === -1 ? SENIORITY.indexOf('unknown') : i;
};

const text = fc.option(fc.string({ maxLength: 12 }), { nil: null });
/** Phone values that start with no formula character (see the file comment). */
const phone = fc.option(fc.stringMatching(/^[0-9][0-9 ]{0,11}$/), { nil: null });
const contacts = fc.uniqueArray(
  fc.record({
    contactId: fc.stringMatching(/^[A-Za-z0-9_]{1,8}$/),
    firstName: text,
    lastName: text,
    title: text,
    seniority: fc.constantFrom<string | null>(...SENIORITY, null, 'intern', 'C_SUITE', ''),
    department: text,
    email: fc.option(fc.constantFrom('', 'a@b.example', '=x@y.example'), { nil: null }),
    emailStatus: text,
    mobilePhone: phone,
    directPhone: phone,
    linkedinUrl: text,
    country: text,
  }),
  { selector: (c) => c.contactId, maxLength: 12 },
);
const selections = fc.record({
  maxContactsPerAccount: fc.option(fc.nat({ max: 6 }), { nil: undefined }),
  hasMobilePhone: fc.option(fc.boolean(), { nil: undefined }),
  hasEmail: fc.option(fc.boolean(), { nil: undefined }),
});

describe('orderContacts (docs/csv.md)', () => {
  it('orders by seniority rank c_suite … unknown, then contact_id', () => {
    const input = [
      contact('c9', { seniority: 'unknown' }),
      contact('c8', { seniority: 'entry' }),
      contact('c7', { seniority: 'senior' }),
      contact('c6', { seniority: 'manager' }),
      contact('c5', { seniority: 'director' }),
      contact('c4', { seniority: 'vp' }),
      contact('c3', { seniority: 'c_suite' }),
      contact('c1', { seniority: 'vp' }),
      contact('c0', { seniority: null }),
      contact('c2', { seniority: 'intern' }),
    ];
    expect(orderContacts(input).map((c) => c.contactId)).toEqual(['c3', 'c1', 'c4', 'c5', 'c6', 'c7', 'c8', 'c0', 'c2', 'c9']);
  });

  it('returns a sorted permutation of its input without changing it', () => {
    fc.assert(
      fc.property(contacts, (input) => {
        const before = input.map((c) => c.contactId);
        const ordered = orderContacts(input);
        expect(input.map((c) => c.contactId)).toEqual(before);
        expect([...ordered].map((c) => c.contactId).sort()).toEqual([...before].sort());
        for (let i = 1; i < ordered.length; i++) {
          const [a, b] = [ordered[i - 1]!, ordered[i]!];
          expect(rank(a.seniority) < rank(b.seniority) || (rank(a.seniority) === rank(b.seniority) && a.contactId < b.contactId)).toBe(
            true,
          );
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('selectContacts (docs/csv.md: filters OR, then the cap)', () => {
  const people = [
    contact('a', { seniority: 'c_suite' }),
    contact('b', { seniority: 'vp', email: 'b@x.example' }),
    contact('c', { seniority: 'director', mobilePhone: '5550001' }),
    contact('d', { seniority: 'manager', email: 'd@x.example', mobilePhone: '5550002' }),
    contact('e', { seniority: 'entry', email: 'e@x.example' }),
  ];
  const ids = (selection: ContactSelection) => selectContacts(people, selection).map((c) => c.contactId);

  it.each([
    [{}, ['a', 'b', 'c', 'd', 'e']],
    [{ hasMobilePhone: false, hasEmail: false }, ['a', 'b', 'c', 'd', 'e']],
    [{ hasEmail: true }, ['b', 'd', 'e']],
    [{ hasMobilePhone: true }, ['c', 'd']],
    [{ hasEmail: true, hasMobilePhone: true }, ['b', 'c', 'd', 'e']],
    [{ maxContactsPerAccount: 2 }, ['a', 'b']],
    [{ hasEmail: true, maxContactsPerAccount: 2 }, ['b', 'd']],
    [{ hasEmail: true, hasMobilePhone: true, maxContactsPerAccount: 3 }, ['b', 'c', 'd']],
    [{ maxContactsPerAccount: 0 }, []],
    [{ hasMobilePhone: true, maxContactsPerAccount: 10 }, ['c', 'd']],
  ] as [ContactSelection, string[]][])('%j keeps %j', (selection, expected) => {
    expect(ids(selection)).toEqual(expected);
  });

  it('counts an empty email or phone as absent', () => {
    expect(selectContacts([contact('x', { email: '', mobilePhone: '' })], { hasEmail: true, hasMobilePhone: true })).toEqual([]);
  });

  it('keeps the first `cap` of the ordered contacts that pass a filter', () => {
    fc.assert(
      fc.property(contacts, selections, (input, selection) => {
        const filtering = selection.hasEmail === true || selection.hasMobilePhone === true;
        const passing = orderContacts(input).filter(
          (c) => !filtering || (selection.hasEmail === true && !!c.email) || (selection.hasMobilePhone === true && !!c.mobilePhone),
        );
        const expected = selection.maxContactsPerAccount === undefined ? passing : passing.slice(0, selection.maxContactsPerAccount);
        expect(selectContacts(input, selection)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('neutralizeCell (docs/csv.md)', () => {
  it.each(FORMULA_STARTS)('prefixes a cell starting with %j', (start) => {
    expect(neutralizeCell(`${start}SUM(A1:A9)`)).toBe(`'${start}SUM(A1:A9)`);
    expect(neutralizeCell(start)).toBe(`'${start}`);
  });

  it.each(['', 'Acme', '1+1', 'a=b', ' =1', "'=1", '\n=1', 'Ann-Marie', 'x@y.example', '12'])('leaves %j as it is', (value) => {
    expect(neutralizeCell(value)).toBe(value);
  });

  it('prefixes exactly the cells that start with a formula character, and is idempotent', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 10 }),
          fc.constantFrom(...FORMULA_STARTS).chain((s) => fc.string({ maxLength: 8 }).map((t) => s + t)),
        ),
        (value) => {
          const out = neutralizeCell(value);
          expect(out).toBe(FORMULA_STARTS.includes(value.charAt(0)) ? `'${value}` : value);
          expect(neutralizeCell(out)).toBe(out);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the rows of an account (encoded as a result part, exported, parsed back)', () => {
  it('writes one row per kept contact in CSV_COLUMNS order, the account columns on each', async () => {
    const people = [
      contact('k2', {
        seniority: 'vp',
        firstName: 'Vee',
        lastName: 'Pee',
        title: 'VP Sales',
        department: 'Sales',
        email: 'v@acme.example',
        emailStatus: 'valid',
        mobilePhone: '5550100',
        directPhone: '5550101',
        linkedinUrl: 'https://linkedin.example/v',
        country: 'DE',
      }),
      contact('k1', { seniority: 'c_suite', firstName: 'Cee' }),
    ];
    const { rows, contacts: count } = await accountRows(account(people), {}, ENRICHED_AT);
    expect(count).toBe(2);
    expect(rows.map(rowByColumn)).toEqual([
      rowOf({ ...ACME_ROW, contact_id: 'k1', first_name: 'Cee', seniority: 'c_suite' }),
      rowOf({
        ...ACME_ROW,
        contact_id: 'k2',
        first_name: 'Vee',
        last_name: 'Pee',
        job_title: 'VP Sales',
        seniority: 'vp',
        department: 'Sales',
        email: 'v@acme.example',
        email_status: 'valid',
        mobile_phone: '5550100',
        direct_phone: '5550101',
        linkedin_url: 'https://linkedin.example/v',
        contact_country: 'DE',
      }),
    ]);
    for (const row of rows) expect(row).toHaveLength(CSV_COLUMNS.length);
  });

  it('writes 0 employees as "0" and null account fields as empty cells', async () => {
    const { rows } = await accountRows(
      account([], { name: null, domain: null, industry: null, employeeCount: 0, country: null }),
      {},
      ENRICHED_AT,
    );
    expect(rows.map(rowByColumn)).toEqual([rowOf({ account_id: 'acc_1', account_employee_count: '0', enriched_at: ENRICHED_AT })]);
  });

  it.each([
    ['no contact found', account([]), {}],
    ['every contact filtered out', account([contact('a'), contact('b', { email: 'b@x.example' })]), { hasMobilePhone: true }],
    ['cap 0', account([contact('a', { email: 'a@x.example' })]), { maxContactsPerAccount: 0 }],
  ] as [string, EnrichedAccount, ContactSelection][])(
    'writes exactly one account-only row with empty contact cells: %s',
    async (_label, acc, selection) => {
      const { rows, contacts: count } = await accountRows(acc, selection, ENRICHED_AT);
      expect(count).toBe(0);
      expect(rows).toHaveLength(1);
      expect(rowByColumn(rows[0]!)).toEqual(rowOf(ACME_ROW));
    },
  );

  it('neutralizes formula cells in account and contact columns', async () => {
    const acc = account(
      [
        contact('c1', {
          firstName: '=HYPERLINK("http://evil")',
          lastName: '+cmd',
          title: '-2+3',
          department: '@SUM(A1)',
          email: '=x@y.example',
          linkedinUrl: '\tfoo',
          country: '\rUS',
        }),
      ],
      { name: '=1+1', domain: '@acme', industry: '-Software', country: '+US' },
    );
    const [row] = (await accountRows(acc, {}, ENRICHED_AT)).rows;
    const cell = (column: (typeof CSV_COLUMNS)[number]) => row![CSV_COLUMNS.indexOf(column)];
    expect(cell('account_name')).toBe("'=1+1");
    expect(cell('account_domain')).toBe("'@acme");
    expect(cell('account_industry')).toBe("'-Software");
    expect(cell('account_country')).toBe("'+US");
    expect(cell('first_name')).toBe('\'=HYPERLINK("http://evil")');
    expect(cell('last_name')).toBe("'+cmd");
    expect(cell('job_title')).toBe("'-2+3");
    expect(cell('department')).toBe("'@SUM(A1)");
    expect(cell('email')).toBe("'=x@y.example");
    expect(cell('linkedin_url')).toBe("'\tfoo");
    expect(cell('contact_country')).toBe("'\rUS");
    expect(cell('account_id')).toBe('acc_1');
    expect(cell('contact_id')).toBe('c1');
  });

  it('for any account and selection: one row per kept contact (or one account-only row), every cell neutralized', async () => {
    const accountText = fc.option(fc.string({ maxLength: 10 }), { nil: null });
    const accounts = fc
      .record({
        accountId: fc.stringMatching(/^acc_[a-z0-9]{1,6}$/),
        name: accountText,
        domain: accountText,
        industry: accountText,
        employeeCount: fc.option(fc.nat({ max: 100_000 }), { nil: null }),
        country: accountText,
        contacts,
      })
      .map((fields) => ({ ...missingAccount(fields.accountId), ...fields }));
    await fc.assert(
      fc.asyncProperty(accounts, selections, async (acc, selection) => {
        const { rows, contacts: count } = await accountRows(acc, selection, ENRICHED_AT);
        const kept = selectContacts(acc.contacts, selection);
        const asCell = (v: string | number | null) => (v === null ? '' : neutralizeCell(String(v)));
        const accountCells = ACCOUNT_COLUMN_FIELDS.map((field) =>
          asCell(acc[field.key as keyof EnrichedAccount] as string | number | null),
        );
        expect(count).toBe(kept.length);
        expect(rows).toHaveLength(Math.max(1, kept.length));
        for (const row of rows) {
          expect(row).toHaveLength(CSV_COLUMNS.length);
          expect(cellsIn(row, ACCOUNT_COLUMNS)).toEqual(accountCells);
          expect(row.at(-1)).toBe(ENRICHED_AT);
        }
        if (kept.length === 0) expect(cellsIn(rows[0]!, CONTACT_COLUMNS)).toEqual(Array<string>(CONTACT_COLUMNS.length).fill(''));
        kept.forEach((c, i) => {
          expect(cellsIn(rows[i]!, CONTACT_COLUMNS)).toEqual(CONTACT_COLUMN_FIELDS.map((field) => asCell(c[field.key])));
        });
      }),
      { numRuns: 300 },
    );
  });
});
