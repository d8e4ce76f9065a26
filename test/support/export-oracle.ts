/**
 * The export's encoder as it was before result parts held encoded rows, kept
 * verbatim as the test oracle of the byte-identical guarantee
 * (test/unit/export-bytes.test.ts): accounts stored as JSON lines and read
 * back with JSON.parse, rows built as string arrays by the docs/csv.md rules
 * (accountRows), serialized by csv-stringify with the export's options in the
 * same object-mode stream. Frozen on purpose: it imports nothing from lib/
 * but the warehouse types and the field declaration (which column holds
 * which field), so a change to the product's encoding cannot change the
 * oracle with it. One deviation, in the reader only: see enrichedAccounts.
 */
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { ACCOUNT_FIELDS, CONTACT_FIELDS } from '../../lib/warehouse/fields';
import type { WarehouseAccount, WarehouseContact } from '../../lib/warehouse/schema';

type EnrichedAccount = Omit<WarehouseAccount, 'status'>;

/** What the oracle's selection reads (the export input's filters and cap). */
export interface OracleSelection {
  maxContactsPerAccount?: number;
  hasMobilePhone?: boolean;
  hasEmail?: boolean;
}

/**
 * The column catalog and which field fills each column come from the one
 * declaration of the fields (lib/warehouse/fields.ts); the cell rules below
 * are the oracle's own.
 */
const ACCOUNT_COLUMN_FIELDS = ACCOUNT_FIELDS.filter((field) => 'column' in field);
const CONTACT_COLUMN_FIELDS = CONTACT_FIELDS.filter((field) => 'column' in field);
/** The standard column catalog of docs/csv.md: the oracle's and the export tests' expectation. */
export const CSV_COLUMNS: readonly string[] = [
  ...ACCOUNT_COLUMN_FIELDS.map((field) => field.column),
  ...CONTACT_COLUMN_FIELDS.map((field) => field.column),
  'enriched_at',
];
type CsvColumn = string;
const SENIORITY_ORDER = ['c_suite', 'vp', 'director', 'manager', 'senior', 'entry', 'unknown'] as const;
const PHONE_COLUMNS: readonly string[] = CONTACT_COLUMN_FIELDS.filter((field) => 'cell' in field && field.cell === 'phone').map(
  (f) => f.column,
);
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
  if (column !== undefined && PHONE_COLUMNS.includes(column) && E164.test(value)) return value;
  return `'${value}`;
}

const cell = (value: string | number | null | undefined, column?: CsvColumn) =>
  value === null || value === undefined ? '' : neutralizeCell(String(value), column);

const row = (values: readonly (string | number | null | undefined)[]): string[] => values.map((value, i) => cell(value, CSV_COLUMNS[i]));

/**
 * The rows of one account as a CSV parser reads them back from the file (cells
 * unescaped, the formula prefix kept), by the oracle's own rules of docs/csv.md
 * (order, filters then cap, account-only row, neutralizing with the E.164
 * exception of the phone columns); the columns and the field each holds come
 * from the field declaration, so a new column changes these rows by itself.
 * The export tests' expected rows.
 */
export function accountRows(
  account: EnrichedAccount,
  selection: OracleSelection,
  enrichedAt: string,
): { rows: string[][]; contacts: number } {
  const accountValues = ACCOUNT_COLUMN_FIELDS.map((field) => account[field.key]);
  const contacts = selectContacts(account.contacts, selection);
  if (contacts.length === 0)
    return { rows: [row([...accountValues, ...Array<null>(CONTACT_COLUMN_FIELDS.length).fill(null), enrichedAt])], contacts: 0 };
  return {
    rows: contacts.map((c) => row([...accountValues, ...CONTACT_COLUMN_FIELDS.map((field) => c[field.key]), enrichedAt])),
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

/** The exported account columns, in order (lib/warehouse/fields.ts). */
export const ACCOUNT_COLUMNS: readonly string[] = ACCOUNT_COLUMN_FIELDS.map((field) => field.column);
/** The exported contact columns, in order (lib/warehouse/fields.ts). */
export const CONTACT_COLUMNS: readonly string[] = CONTACT_COLUMN_FIELDS.map((field) => field.column);

/** The cell of a parsed CSV row in a column, found by the column's name in {@link CSV_COLUMNS}. @throws when the catalog lacks it. */
export function cellIn(row: readonly string[], column: string): string | undefined {
  const index = CSV_COLUMNS.indexOf(column);
  if (index === -1) throw new Error(`No column ${column} in the catalog`);
  return row[index];
}

/** The cells of a parsed CSV row in these columns, in the order given. */
export const cellsIn = (row: readonly string[], columns: readonly string[]): (string | undefined)[] =>
  columns.map((column) => cellIn(row, column));

/** A parsed CSV row as an object, by column name. */
export const rowByColumn = (row: readonly string[]): Record<string, string | undefined> =>
  Object.fromEntries(CSV_COLUMNS.map((column, i) => [column, row[i]]));

/**
 * The columns the contract names, in the contract's order (docs/csv.md "The
 * columns"): the tests' pin of the catalog. The catalog itself derives from
 * lib/warehouse/fields.ts ({@link CSV_COLUMNS}); a column added there may sit
 * anywhere, but these must all be there, in this order.
 */
export const CONTRACT_COLUMNS: readonly string[] = [
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
];

/** The columns of {@link CSV_COLUMNS} the contract names, in the file's order (to compare with {@link CONTRACT_COLUMNS}). */
export const contractColumnsIn = (header: readonly string[]): string[] => header.filter((column) => CONTRACT_COLUMNS.includes(column));

/** @throws when a column is not in the catalog (a misspelt expectation fails instead of passing). */
function checkColumns(columns: Iterable<string>): void {
  for (const column of columns) if (!CSV_COLUMNS.includes(column)) throw new Error(`No column ${column} in the catalog`);
}

/**
 * A parsed row as {@link rowByColumn} shows it: the cells given, by column
 * name, and every other column empty. What a fixture built from blank records
 * reads as, whatever columns the catalog gains.
 * @throws when a given column is not in the catalog.
 */
export function rowOf(cells: Readonly<Record<string, string>>): Record<string, string> {
  checkColumns(Object.keys(cells));
  return { ...Object.fromEntries(CSV_COLUMNS.map((column) => [column, ''])), ...cells };
}

/**
 * The bytes a result part holds for the cells of `columns` (each cell followed
 * by its comma, lib/results/parts.ts): the given cells as the file writes them
 * (quoted, prefixed), by column name, every other cell empty.
 * @throws when a given column is not among `columns`.
 */
export function encodedCells(columns: readonly string[], cells: Readonly<Record<string, string>>): string {
  for (const column of Object.keys(cells))
    if (!columns.includes(column)) throw new Error(`No column ${column} among ${columns.join(', ')}`);
  return columns.map((column) => `${cells[column] ?? ''},`).join('');
}
