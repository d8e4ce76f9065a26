/**
 * The results' JSON (docs/results.md): an account and a contact exactly as
 * `POST /v1/campaigns/results` and its stream show them, with the stored
 * values as they are (null where absent; no spreadsheet prefix, which is a
 * CSV matter, docs/csv.md). The workflow writes each account's and contact's
 * values into its result part as a JSON array (lib/results/parts.ts) in the
 * key order declared here, so a reader parses them and never needs the
 * warehouse's names.
 */
import type { WarehouseContact } from '../warehouse/schema';
import type { EnrichedAccount } from './csv';

/** An account's fields in a result (`account` of an item). */
export interface ResultAccount {
  name: string | null;
  domain: string | null;
  industry: string | null;
  /** Employees (a count). */
  employeeCount: number | null;
  /** ISO 3166-1 alpha-2, as the warehouse holds it. */
  country: string | null;
}

/** A contact in a result (`contacts[]` of an item). */
export interface ResultContact {
  contactId: string;
  firstName: string | null;
  lastName: string | null;
  jobTitle: string | null;
  seniority: string | null;
  department: string | null;
  email: string | null;
  emailStatus: string | null;
  mobilePhone: string | null;
  directPhone: string | null;
  linkedinUrl: string | null;
  country: string | null;
}

/** The {@link ResultAccount} of an enriched account. */
export const resultAccount = (a: EnrichedAccount): ResultAccount => ({
  name: a.name,
  domain: a.domain,
  industry: a.industry,
  employeeCount: a.employeeCount,
  country: a.country,
});

/** The {@link ResultContact} of a warehouse contact (its `title` is the result's `jobTitle`). */
export const resultContact = (c: WarehouseContact): ResultContact => ({
  contactId: c.contactId,
  firstName: c.firstName,
  lastName: c.lastName,
  jobTitle: c.title,
  seniority: c.seniority,
  department: c.department,
  email: c.email,
  emailStatus: c.emailStatus,
  mobilePhone: c.mobilePhone,
  directPhone: c.directPhone,
  linkedinUrl: c.linkedinUrl,
  country: c.country,
});

/** Whether the workflow found contacts for an account (`found`: at least one, before any filter). */
export type ResultOutcome = 'found' | 'not_found';

/** The head of an account's result item, in the item's key order: what a part stores for the account. */
export interface ResultAccountHead {
  accountId: string;
  outcome: ResultOutcome;
  account: ResultAccount;
}

/** The keys of a {@link ResultContact}, in the order the results show them: a part stores the values in this order. */
export const RESULT_CONTACT_KEYS = [
  'contactId',
  'firstName',
  'lastName',
  'jobTitle',
  'seniority',
  'department',
  'email',
  'emailStatus',
  'mobilePhone',
  'directPhone',
  'linkedinUrl',
  'country',
] as const satisfies readonly (keyof ResultContact)[];
/** The keys of a {@link ResultAccount}, in order: a part stores the values in this order, after `accountId` and `outcome`. */
export const RESULT_ACCOUNT_KEYS = [
  'name',
  'domain',
  'industry',
  'employeeCount',
  'country',
] as const satisfies readonly (keyof ResultAccount)[];

/**
 * What a part stores for an account: the JSON array `[accountId, outcome,
 * name, domain, industry, employeeCount, country]` (values only: keys would
 * triple a part, measured on 1,000 accounts × 10 contacts: 5.4 MB against
 * 1.7 MB of CSV cells).
 */
export function resultAccountJson(a: EnrichedAccount): string {
  const account = resultAccount(a);
  return JSON.stringify([a.accountId, a.contacts.length > 0 ? 'found' : 'not_found', ...RESULT_ACCOUNT_KEYS.map((key) => account[key])]);
}

/** What a part stores for a contact: the JSON array of its values in {@link RESULT_CONTACT_KEYS} order. */
export function resultContactJson(c: WarehouseContact): string {
  const contact = resultContact(c);
  return JSON.stringify(RESULT_CONTACT_KEYS.map((key) => contact[key]));
}

/** A stored contact array ({@link resultContactJson}) as its {@link ResultContact}. */
export function contactFromStored(text: string): ResultContact {
  const values = JSON.parse(text) as unknown[];
  const contact: Record<string, unknown> = {};
  for (let i = 0; i < RESULT_CONTACT_KEYS.length; i++) contact[RESULT_CONTACT_KEYS[i]!] = values[i] ?? null;
  return contact as unknown as ResultContact;
}

/** A stored account array ({@link resultAccountJson}) as its {@link ResultAccountHead}. */
export function accountFromStored(text: string): ResultAccountHead {
  const values = JSON.parse(text) as unknown[];
  const account: Record<string, unknown> = {};
  for (let i = 0; i < RESULT_ACCOUNT_KEYS.length; i++) account[RESULT_ACCOUNT_KEYS[i]!] = values[i + 2] ?? null;
  return { accountId: String(values[0]), outcome: values[1] as ResultOutcome, account: account as unknown as ResultAccount };
}

/** One result item, in the answer's key order: `{seq, accountId, outcome, account, contacts}`. */
export interface ResultItem extends ResultAccountHead {
  seq: number;
  contacts: ResultContact[];
}

/**
 * One result item from its stored pieces (a `type` first when given: the
 * stream's `"account"`), keys in the answer's order.
 * @param head - the account's stored JSON ({@link resultAccountJson}).
 * @param contacts - the delivered contacts' stored JSON ({@link resultContactJson}), best first.
 */
export function resultItem(seq: number, head: string, contacts: readonly string[]): ResultItem {
  const { accountId, outcome, account } = accountFromStored(head);
  return { seq, accountId, outcome, account, contacts: contacts.map(contactFromStored) };
}
