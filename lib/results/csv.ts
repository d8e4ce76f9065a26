/**
 * The export file's rows (docs/csv.md): the standard column catalog, contact
 * ordering, filters, cap, account-only rows, formula-injection neutralizing
 * and RFC 4180 escaping. The workflow encodes cells with these when it writes
 * a result part (lib/results/parts.ts); the export only filters and
 * concatenates the encoded bytes (lib/exports/rows.ts).
 */
import { ACCOUNT_FIELDS, CONTACT_FIELDS, exportedFields, type ColumnOf } from '../warehouse/fields';
import { SENIORITY_ORDER, type WarehouseAccount, type WarehouseContact } from '../warehouse/schema';

/** An enriched account as stored in the results (the warehouse account without its status). */
export type EnrichedAccount = Omit<WarehouseAccount, 'status'>;

/** The exported account fields, in column order (lib/warehouse/fields.ts). */
export const ACCOUNT_COLUMN_FIELDS = exportedFields(ACCOUNT_FIELDS);
/** The exported contact fields, in column order (lib/warehouse/fields.ts). */
export const CONTACT_COLUMN_FIELDS = exportedFields(CONTACT_FIELDS);

/** A column of the catalog. */
export type CsvColumn = ColumnOf<typeof ACCOUNT_FIELDS> | ColumnOf<typeof CONTACT_FIELDS> | 'enriched_at';

/** The standard column catalog, in order: the account columns, the contact columns, `enriched_at` (docs/csv.md). */
export const CSV_COLUMNS: readonly CsvColumn[] = [
  ...ACCOUNT_COLUMN_FIELDS.map((field) => field.column as CsvColumn),
  ...CONTACT_COLUMN_FIELDS.map((field) => field.column as CsvColumn),
  'enriched_at',
];

/** Contact selection of an export. */
export interface ContactSelection {
  /** undefined: all; 0: none (account-only rows). */
  maxContactsPerAccount?: number;
  hasMobilePhone?: boolean;
  hasEmail?: boolean;
}

const seniorityRank = (seniority: string | null) => {
  const rank = SENIORITY_ORDER.indexOf((seniority ?? 'unknown') as (typeof SENIORITY_ORDER)[number]);
  return rank === -1 ? SENIORITY_ORDER.length - 1 : rank;
};

/** Orders contacts best first: seniority rank, then contact_id. */
export function orderContacts(contacts: readonly WarehouseContact[]): WarehouseContact[] {
  return [...contacts].sort(
    (a, b) =>
      seniorityRank(a.seniority) - seniorityRank(b.seniority) || (a.contactId < b.contactId ? -1 : a.contactId > b.contactId ? 1 : 0),
  );
}

/** The contacts of an account kept by a selection: filters (OR) first, then the cap. */
export function selectContacts(contacts: readonly WarehouseContact[], selection: ContactSelection): WarehouseContact[] {
  const wanted = selectionFlags(selection);
  const kept = orderContacts(contacts).filter((contact) => passesFilters(contactFlags(contact), wanted));
  return selection.maxContactsPerAccount === undefined ? kept : kept.slice(0, selection.maxContactsPerAccount);
}

/** Columns whose plain E.164 numbers are written as they are (docs/csv.md): the fields with the `phone` cell rule. */
export const PHONE_COLUMNS: readonly CsvColumn[] = [...ACCOUNT_COLUMN_FIELDS, ...CONTACT_COLUMN_FIELDS]
  .filter((field) => 'cell' in field && field.cell === 'phone')
  .map((field) => field.column as CsvColumn);

/** A plain E.164 number: `+`, a non-zero digit, then 6 to 14 digits, nothing else (docs/csv.md). */
export const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * Neutralizes spreadsheet formulas (docs/csv.md): a cell starting with `=`,
 * `+`, `-`, `@`, tab or CR gets a leading apostrophe, so a spreadsheet shows
 * it as text instead of running it. One exception: in a phone column
 * ({@link PHONE_COLUMNS}) a plain E.164 number (`+15551234567`) is kept as it
 * is: digits after a plus run no formula, and a prefixed number breaks every
 * CRM import. `+1 555 0100` (a space) is still prefixed.
 *
 * @param value - the cell's text.
 * @param column - the cell's column; only a phone column has the E.164 exception.
 * @returns the text to write.
 * @example
 * neutralizeCell('=1+1');                       // "'=1+1"
 * neutralizeCell('+15551234567', 'mobile_phone'); // "+15551234567"
 * neutralizeCell('+15551234567', 'account_name'); // "'+15551234567"
 */
export function neutralizeCell(value: string, column?: CsvColumn): string {
  if (!/^[=+\-@\t\r]/.test(value)) return value;
  if (column !== undefined && (PHONE_COLUMNS as readonly string[]).includes(column) && E164.test(value)) return value;
  return `'${value}`;
}

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/**
 * Writes one cell's text as RFC 4180 does (docs/csv.md): quoted when it holds
 * a quote, a comma, a CR or an LF, or starts or ends with white space (`\s`,
 * Unicode spaces included), so spreadsheets keep the spaces; quotes doubled
 * inside. The empty text stays empty. These are exactly the rules the export
 * followed through csv-stringify (test/support/export-oracle.ts proves it).
 *
 * @param value - the cell's text, already neutralized.
 * @returns the text to write between the delimiters.
 * @example
 * escapeCell('a,b');    // '"a,b"'
 * escapeCell('say "x"'); // '"say ""x"""'
 * escapeCell(' edge');  // '" edge"'
 */
export function escapeCell(value: string): string {
  if (!NEEDS_QUOTES.test(value)) return value;
  return `"${value.replaceAll('"', '""')}"`;
}

/** A cell as written in the file: null or absent → empty; otherwise neutralized by its column's rule, then escaped. */
export const csvCell = (value: string | number | null | undefined, column: CsvColumn): string =>
  value === null || value === undefined ? '' : escapeCell(neutralizeCell(String(value), column));

/** The byte-order mark the file starts with (docs/csv.md: UTF-8 with BOM). */
export const CSV_BOM = '\uFEFF';
/** The file's first bytes: the BOM, then the header row of {@link CSV_COLUMNS}, CRLF. */
export const CSV_HEADER = `${CSV_BOM}${CSV_COLUMNS.map((column) => escapeCell(column)).join(',')}\r\n`;

/** A field with a CSV column (lib/warehouse/fields.ts `exportedFields`). */
export type ColumnField = { readonly key: string; readonly column: string };

/**
 * The cells of `fields` of a record, each encoded ({@link csvCell}) and
 * followed by its comma. A result part writes the exported fields of its own
 * field list (lib/results/parts.ts).
 */
export function encodeCells(record: Readonly<Record<string, unknown>>, fields: readonly ColumnField[]): string {
  let cells = '';
  for (const field of fields) cells += `${csvCell(record[field.key] as string | number | null, field.column as CsvColumn)},`;
  return cells;
}

/**
 * The account cells of a row (`account_id` … `account_country`: the
 * exported account fields), encoded, each followed by its comma: every row of
 * the account starts with them.
 */
export const encodeAccountCells = (account: EnrichedAccount): string => encodeCells(account, ACCOUNT_COLUMN_FIELDS);

/**
 * The contact cells of a row (`contact_id` … `contact_country`: the exported
 * contact fields), encoded, each followed by its comma: they go between the
 * account cells and `enriched_at`.
 */
export const encodeContactCells = (contact: WarehouseContact): string => encodeCells(contact, CONTACT_COLUMN_FIELDS);

/**
 * The cells of `bytes[start, end)` as {@link encodeCells} wrote them (each
 * followed by its comma), still encoded: each element is one cell's text as
 * the file holds it (quoted, prefixed), without its comma. What a result part
 * of another field list is re-laid by (lib/results/parts.ts).
 * @throws Error on an unterminated quoted cell.
 */
export function splitEncodedCells(bytes: Buffer, start: number, end: number): string[] {
  const cells: string[] = [];
  let at = start;
  while (at < end) {
    const cellEnd = encodedCellEnd(bytes, at, end);
    cells.push(bytes.toString('utf8', at, cellEnd));
    at = cellEnd + 1;
  }
  return cells;
}

/** End (exclusive, at its comma or `end`) of the encoded cell starting at `at`. */
function encodedCellEnd(bytes: Buffer, at: number, end: number): number {
  if (bytes[at] === QUOTE) {
    let close = at + 1;
    for (;;) {
      close = bytes.indexOf(QUOTE, close);
      if (close === -1 || close >= end) throw new Error('Unterminated quoted cell in a result row');
      if (bytes[close + 1] === QUOTE) close += 2;
      else return close + 1;
    }
  }
  const comma = bytes.indexOf(COMMA, at);
  return comma === -1 || comma > end ? end : comma;
}

/** The contact cells of an account-only row: one empty cell per contact column, each followed by its comma. */
export const ACCOUNT_ONLY_CONTACT_CELLS = ','.repeat(CONTACT_COLUMN_FIELDS.length);

/**
 * The end of every row of an export: the `enriched_at` cell and CRLF. The
 * campaign's completion time is known only when the export runs, so result
 * parts store rows without it. An ISO timestamp (`2026-11-23T17:44:51.000Z`)
 * needs no quote and no prefix; the cell rule is applied anyway, once per
 * export, so even an extended year (`+010000-…`) is written as before.
 */
export const encodeRowEnd = (enrichedAt: string): string => `${csvCell(enrichedAt, 'enriched_at')}\r\n`;

/** Flag of a contact with a mobile phone (the `hasMobilePhone` filter). */
export const CONTACT_HAS_MOBILE = 1;
/** Flag of a contact with an email (the `hasEmail` filter). */
export const CONTACT_HAS_EMAIL = 2;

/** The filter flags of a contact: {@link CONTACT_HAS_MOBILE} | {@link CONTACT_HAS_EMAIL} (a non-empty value counts). */
export const contactFlags = (contact: WarehouseContact): number =>
  (contact.mobilePhone ? CONTACT_HAS_MOBILE : 0) | (contact.email ? CONTACT_HAS_EMAIL : 0);

/**
 * The filters of a selection as flags: 0 keeps every contact; otherwise a
 * contact is kept when it has any of the flags (the filters are ORed).
 */
export const selectionFlags = (selection: ContactSelection): number =>
  (selection.hasMobilePhone ? CONTACT_HAS_MOBILE : 0) | (selection.hasEmail ? CONTACT_HAS_EMAIL : 0);

/** Whether a contact with `flags` passes the filters `wanted` ({@link selectionFlags}). */
export const passesFilters = (flags: number, wanted: number): boolean => wanted === 0 || (flags & wanted) !== 0;

/** The identifying fields of a contact (what its digests are computed from, lib/warehouse/identifiers.ts). */
export type ContactIdentifierFields = Pick<WarehouseContact, 'contactId' | 'email' | 'mobilePhone' | 'directPhone' | 'linkedinUrl'>;

const QUOTE = 0x22;
const COMMA = 0x2c;
const NEUTRALIZED = /^'[=+\-@\t\r]/;

/**
 * The value of one encoded cell ({@link splitEncodedCells}): RFC 4180
 * unescaped and the formula prefix undone; the empty cell is null. Exact for
 * the identifying cells (IDs, emails, phones, URLs); a text that itself began
 * with `'=` cannot be told from a neutralized one, which is why result parts
 * also store raw values (docs/data-model.md "Result parts").
 */
export function decodeCell(cell: string): string | null {
  const value = cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell;
  return value === '' ? null : NEUTRALIZED.test(value) ? value.slice(1) : value;
}
