/**
 * The export's encoder as it was before result parts held encoded rows, kept
 * verbatim as the test oracle of the byte-identical guarantee
 * (test/unit/export-bytes.test.ts): accounts stored as JSON lines and read
 * back with JSON.parse, rows built as string arrays by the docs/csv.md rules
 * (accountRows), serialized by csv-stringify with the export's options in the
 * same object-mode stream. Frozen on purpose: it imports nothing from lib/
 * but the warehouse types, so a change to the product's code cannot change
 * the oracle with it. One deviation, in the reader only: see enrichedAccounts.
 */
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { WarehouseAccount, WarehouseContact } from '../../lib/warehouse/schema';

type EnrichedAccount = Omit<WarehouseAccount, 'status'>;

/** What the oracle's selection reads (the export input's filters and cap). */
export interface OracleSelection {
  maxContactsPerAccount?: number;
  hasMobilePhone?: boolean;
  hasEmail?: boolean;
}

/** The standard column catalog of docs/csv.md, spelled out here (not imported from lib/): the oracle's and the export tests' expectation. */
export const CSV_COLUMNS = [
  'account_id',
  'account_name',
  'account_domain',
  'account_industry',
  'account_employee_count',
  'account_country',
  'contact_id',
  'first_name',
  'last_name',
  'job_title',
  'seniority',
  'department',
  'email',
  'email_status',
  'mobile_phone',
  'direct_phone',
  'linkedin_url',
  'contact_country',
  'enriched_at',
] as const;
type CsvColumn = (typeof CSV_COLUMNS)[number];
const SENIORITY_ORDER = ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown'] as const;
const PHONE_COLUMNS = ['mobile_phone', 'direct_phone'] as const;
const E164 = /^\+[1-9][0-9]{6,14}$/;

const seniorityRank = (seniority: string | null) => {
  const rank = SENIORITY_ORDER.indexOf((seniority ?? 'unknown') as (typeof SENIORITY_ORDER)[number]);
  return rank === -1 ? SENIORITY_ORDER.length - 1 : rank;
};

function orderContacts(contacts: readonly WarehouseContact[]): WarehouseContact[] {
  return [...contacts].sort(
    (a, b) =>
      seniorityRank(a.seniority) - seniorityRank(b.seniority) || (a.contactId < b.contactId ? -1 : a.contactId > b.contactId ? 1 : 0),
  );
}

function selectContacts(contacts: readonly WarehouseContact[], selection: OracleSelection): WarehouseContact[] {
  const filtering = selection.hasMobilePhone || selection.hasEmail;
  const kept = orderContacts(contacts).filter(
    (contact) => !filtering || (selection.hasMobilePhone && Boolean(contact.mobilePhone)) || (selection.hasEmail && Boolean(contact.email)),
  );
  return selection.maxContactsPerAccount === undefined ? kept : kept.slice(0, selection.maxContactsPerAccount);
}

function neutralizeCell(value: string, column?: CsvColumn): string {
  if (!/^[=+\-@\t\r]/.test(value)) return value;
  if (column !== undefined && (PHONE_COLUMNS as readonly string[]).includes(column) && E164.test(value)) return value;
  return `'${value}`;
}

const cell = (value: string | number | null | undefined, column?: CsvColumn) =>
  value === null || value === undefined ? '' : neutralizeCell(String(value), column);

const row = (values: readonly (string | number | null | undefined)[]): string[] => values.map((value, i) => cell(value, CSV_COLUMNS[i]));

function accountRows(account: EnrichedAccount, selection: OracleSelection, enrichedAt: string): { rows: string[][]; contacts: number } {
  const accountValues = [account.accountId, account.name, account.domain, account.industry, account.employeeCount, account.country];
  const contacts = selectContacts(account.contacts, selection);
  if (contacts.length === 0) return { rows: [row([...accountValues, ...Array<null>(12).fill(null), enrichedAt])], contacts: 0 };
  return {
    rows: contacts.map((c) =>
      row([
        ...accountValues,
        ...[
          c.contactId,
          c.firstName,
          c.lastName,
          c.title,
          c.seniority,
          c.department,
          c.email,
          c.emailStatus,
          c.mobilePhone,
          c.directPhone,
          c.linkedinUrl,
          c.country,
        ],
        enrichedAt,
      ]),
    ),
    contacts: contacts.length,
  };
}

/** The old result part: one JSON line per account. */
const jsonLinesPart = (accounts: readonly EnrichedAccount[]) => accounts.map((account) => JSON.stringify(account)).join('\n');

/**
 * The export file the old encoder wrote for these result parts (each an array
 * of accounts, one part per workflow batch), and its counts.
 */
export async function oracleExport(
  parts: readonly (readonly EnrichedAccount[])[],
  selection: OracleSelection,
  enrichedAt: string,
): Promise<{ bytes: Buffer; accounts: number; contacts: number }> {
  const counts = { accounts: 0, contacts: 0 };
  async function* enrichedAccounts(): AsyncGenerator<EnrichedAccount> {
    for (const part of parts) {
      // The old reader was readline, which also ends a line at U+2028 and U+2029: an account holding
      // either failed the old export (JSON.parse of half a line, a 500). The oracle splits at LF only,
      // as JSON lines are defined, so it still says what the old encoder wrote for such an account.
      for (const line of jsonLinesPart(part).split('\n')) if (line !== '') yield JSON.parse(line) as EnrichedAccount;
    }
  }
  async function* rows() {
    for await (const account of enrichedAccounts()) {
      const { rows: accountLines, contacts } = accountRows(account, selection, enrichedAt);
      counts.accounts++;
      counts.contacts += contacts;
      yield* accountLines;
    }
  }
  const chunks: Buffer[] = [];
  const body = new PassThrough();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  await Promise.all([
    pipeline(
      Readable.from(rows()),
      stringify({
        bom: true,
        header: true,
        columns: [...CSV_COLUMNS],
        record_delimiter: 'windows',
        quoted_match: [/[\r\n]/, /^\s|\s$/],
      }),
      body,
    ),
    pipeline(body, sink),
  ]);
  return { bytes: Buffer.concat(chunks), ...counts };
}
