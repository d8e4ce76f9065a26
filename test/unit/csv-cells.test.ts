/**
 * The export's cell rule (docs/csv.md): formula-injection neutralizing, and
 * its one exception, plain E.164 numbers in `mobile_phone` and `direct_phone`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, neutralizeCell } from '../../lib/results/csv';
import { accountRows } from '../support/export-rows';
import type { EnrichedAccount } from '../../lib/results/csv';
import { missingAccount, blankContact } from '../../lib/warehouse/schema';

const PHONE_COLUMNS = ['mobile_phone', 'direct_phone'] as const;
const OTHER_COLUMNS = CSV_COLUMNS.filter((column) => !(PHONE_COLUMNS as readonly string[]).includes(column));

describe('neutralizeCell', () => {
  it.each(PHONE_COLUMNS)('keeps a plain E.164 number in %s as it is', (column) => {
    expect(neutralizeCell('+15551234567', column)).toBe('+15551234567');
    expect(neutralizeCell('+4917012345678', column)).toBe('+4917012345678');
    // The bounds of ^\+[1-9][0-9]{6,14}$: 7 and 15 digits.
    expect(neutralizeCell('+1234567', column)).toBe('+1234567');
    expect(neutralizeCell('+123456789012345', column)).toBe('+123456789012345');
  });

  it.each(PHONE_COLUMNS)('still prefixes in %s anything that is not a plain E.164 number', (column) => {
    for (const value of [
      '+1 555', // a space
      '+1 555 0100',
      '+1-555-0100',
      '+(555)1234567',
      '+0123456789', // leading zero after the plus
      '+123456', // 6 digits: too short
      '+1234567890123456', // 16 digits: too long
      '+15551234567 ', // trailing space
      '+15551234567\r\n=1+1', // a second line
      '+1555123456x', // not all digits
      '+', // the plus alone
      '=1+1',
      '-',
      '-15551234567',
      '@SUM(A1)',
      '\t+15551234567',
      '\r+15551234567',
    ]) {
      expect(neutralizeCell(value, column), JSON.stringify(value)).toBe(`'${value}`);
    }
  });

  it('prefixes an E.164 number in any other column, and without a column', () => {
    for (const column of OTHER_COLUMNS) expect(neutralizeCell('+15551234567', column), column).toBe("'+15551234567");
    expect(neutralizeCell('+15551234567')).toBe("'+15551234567");
  });

  it('prefixes every formula start (=, +, -, @, tab, CR) and leaves other text alone', () => {
    expect(neutralizeCell('=1+1')).toBe("'=1+1");
    expect(neutralizeCell('+1 555')).toBe("'+1 555");
    expect(neutralizeCell('-')).toBe("'-");
    expect(neutralizeCell('@cmd')).toBe("'@cmd");
    expect(neutralizeCell('\tx')).toBe("'\tx");
    expect(neutralizeCell('\rx')).toBe("'\rx");
    expect(neutralizeCell('a=b')).toBe('a=b');
    expect(neutralizeCell('15551234567')).toBe('15551234567');
    expect(neutralizeCell('')).toBe('');
  });

  it('property: in a phone column exactly the E.164 strings escape the prefix', () => {
    const e164 = fc.tuple(fc.integer({ min: 1, max: 9 }), fc.stringMatching(/^[0-9]{6,14}$/)).map(([first, rest]) => `+${first}${rest}`);
    fc.assert(
      fc.property(e164, fc.constantFrom(...PHONE_COLUMNS), (value, column) => {
        expect(neutralizeCell(value, column)).toBe(value);
      }),
    );
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...CSV_COLUMNS), (value, column) => {
        const formulaStart = /^[=+\-@\t\r]/.test(value);
        const exempt = (PHONE_COLUMNS as readonly string[]).includes(column) && /^\+[1-9][0-9]{6,14}$/.test(value);
        expect(neutralizeCell(value, column)).toBe(formulaStart && !exempt ? `'${value}` : value);
      }),
    );
  });
});

describe('the exported rows apply the rule per column', () => {
  const account: EnrichedAccount = {
    ...missingAccount('acc_1'),
    name: '+15551234567',
    domain: 'acme.example',
    industry: '=1+1',
    employeeCount: 12,
    country: 'US',
    contacts: [
      {
        ...blankContact('ct_1'),
        firstName: '=HYPERLINK("http://evil.example")',
        lastName: '-',
        seniority: 'vp',
        email: 'a@acme.example',
        emailStatus: 'verified',
        mobilePhone: '+15551234567',
        directPhone: '+1 555 0100',
        country: '+4917012345678',
      },
    ],
  };

  it('keeps E.164 phones unprefixed and prefixes the same text elsewhere', async () => {
    const { rows } = await accountRows(account, {}, '2026-01-01T00:00:00.000Z');
    const byColumn = Object.fromEntries(CSV_COLUMNS.map((column, i) => [column, rows[0]![i]]));
    expect(byColumn).toMatchObject({
      account_name: "'+15551234567",
      account_industry: "'=1+1",
      first_name: `'=HYPERLINK("http://evil.example")`,
      last_name: "'-",
      mobile_phone: '+15551234567',
      direct_phone: "'+1 555 0100",
      contact_country: "'+4917012345678",
    });
  });
});
