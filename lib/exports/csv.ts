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

/** Neutralizes spreadsheet formulas: a cell starting with =, +, -, @, tab or CR gets a leading apostrophe. */
export function neutralizeCell(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

const cell = (value: string | number | null | undefined) => (value === null || value === undefined ? '' : neutralizeCell(String(value)));

/**
 * The CSV rows of one account: one per kept contact, or one account-only row.
 * @returns rows as arrays in {@link CSV_COLUMNS} order, and how many carry a contact.
 */
export function accountRows(account: EnrichedAccount, selection: ContactSelection, enrichedAt: string): { rows: string[][]; contacts: number } {
  const accountCells = [account.accountId, account.name, account.domain, account.industry, account.employeeCount, account.country].map(cell);
  const contacts = selectContacts(account.contacts, selection);
  if (contacts.length === 0) return { rows: [[...accountCells, ...Array<string>(12).fill(''), cell(enrichedAt)]], contacts: 0 };
  return {
    rows: contacts.map((c) => [
      ...accountCells,
      ...[c.contactId, c.firstName, c.lastName, c.title, c.seniority, c.department, c.email, c.emailStatus, c.mobilePhone, c.directPhone, c.linkedinUrl, c.country].map(cell),
      cell(enrichedAt),
    ]),
    contacts: contacts.length,
  };
}
