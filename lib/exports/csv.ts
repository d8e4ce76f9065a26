/**
 * The export file's rows (decisions §5): the standard column catalog, contact
 * ordering, filters, cap, account-only rows and formula-injection neutralizing.
 */
import { SENIORITY_ORDER, type WarehouseContact } from '../warehouse/schema';
import type { EnrichedAccount } from '../enrichment/results';

/** The standard column catalog, in order. */
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
  return [...contacts].sort((a, b) => seniorityRank(a.seniority) - seniorityRank(b.seniority) || (a.contactId < b.contactId ? -1 : a.contactId > b.contactId ? 1 : 0));
}

/** The contacts of an account kept by a selection: filters (OR) first, then the cap. */
export function selectContacts(contacts: readonly WarehouseContact[], selection: ContactSelection): WarehouseContact[] {
  const filtering = selection.hasMobilePhone || selection.hasEmail;
  const kept = orderContacts(contacts).filter(
    (contact) => !filtering || (selection.hasMobilePhone && Boolean(contact.mobilePhone)) || (selection.hasEmail && Boolean(contact.email)),
  );
  return selection.maxContactsPerAccount === undefined ? kept : kept.slice(0, selection.maxContactsPerAccount);
}

/** Columns whose plain E.164 numbers are written as they are (decisions §5). */
export const PHONE_COLUMNS = ['mobile_phone', 'direct_phone'] as const;
/** A column of the catalog. */
export type CsvColumn = (typeof CSV_COLUMNS)[number];

/** A plain E.164 number: `+`, a non-zero digit, then 6 to 14 digits, nothing else (decisions §5). */
export const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * Neutralizes spreadsheet formulas (decisions §5): a cell starting with `=`,
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

const cell = (value: string | number | null | undefined, column?: CsvColumn) =>
  value === null || value === undefined ? '' : neutralizeCell(String(value), column);

/** Cells of a row in {@link CSV_COLUMNS} order, each neutralized by its own column's rule. */
const row = (values: readonly (string | number | null | undefined)[]): string[] => values.map((value, i) => cell(value, CSV_COLUMNS[i]));

/**
 * The CSV rows of one account: one per kept contact, or one account-only row.
 * @returns rows as arrays in {@link CSV_COLUMNS} order, and how many carry a contact.
 */
export function accountRows(account: EnrichedAccount, selection: ContactSelection, enrichedAt: string): { rows: string[][]; contacts: number } {
  const accountValues = [account.accountId, account.name, account.domain, account.industry, account.employeeCount, account.country];
  const contacts = selectContacts(account.contacts, selection);
  if (contacts.length === 0) return { rows: [row([...accountValues, ...Array<null>(12).fill(null), enrichedAt])], contacts: 0 };
  return {
    rows: contacts.map((c) =>
      row([
        ...accountValues,
        ...[c.contactId, c.firstName, c.lastName, c.title, c.seniority, c.department, c.email, c.emailStatus, c.mobilePhone, c.directPhone, c.linkedinUrl, c.country],
        enrichedAt,
      ]),
    ),
    contacts: contacts.length,
  };
}
